"""A slow loopback OpenAI-compatible endpoint and a two-call task (benchmarks/concurrency.py
and the scheduler's concurrency tests).

Every request is answered after ``latency`` seconds. A conversation's first request gets a
``list_files`` tool call, the next one (it carries the tool's result) a final answer, so a
trial of :func:`list_files_task` with the built-in agent makes exactly two calls. The
endpoint counts requests, the peak of calls in flight, and the peak of *open trials*: from
a conversation's first request until the answer to its second (the tool call's id ties
them together), i.e. trials that are in flight whether or not they are calling right now.

    with SlowEndpoint(0.5) as ep:
        ...  # route api_base=ep.base_url; then ep.requests, ep.peak, ep.peak_open
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.fakes.loopback import serve, stop
from tests.fakes.openai_server import write_json

TASK_TOML = """version = "1.0"

[metadata]
author_name = "skillci"
difficulty = "easy"
category = "software-engineering"
description = "Benchmark task: list the files, then answer."

[verifier]
timeout_sec = 60

[agent]
timeout_sec = {agent_timeout}

[environment]
allow_internet = false
"""


class SlowEndpoint:
    """Loopback chat completions answering after ``latency`` seconds (module docstring)."""

    def __init__(self, latency: float) -> None:
        self.latency = latency
        self.requests = 0
        self.in_flight = 0
        self.peak = 0
        self.open: set[str] = set()
        self.peak_open = 0
        self.served_sec = 0.0
        """Summed time from reading a request's headers to having written its answer."""
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def reset_peaks(self) -> None:
        with self._lock:
            self.peak, self.peak_open = self.in_flight, len(self.open)

    def _arrive(self, body: dict[str, Any]) -> tuple[dict[str, Any], str | None]:
        """The answer to ``body`` and the trial it closes (None: it opens one)."""
        with self._lock:
            self.requests += 1
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            done = [m.get("tool_call_id") for m in body.get("messages", [])]
            closes = next((str(c) for c in done if c), None)
            if closes is not None:
                msg = {"role": "assistant", "content": "Done: the workspace holds README.md."}
                return msg, closes
            call_id = f"call_{self.requests}"
            self.open.add(call_id)
            self.peak_open = max(self.peak_open, len(self.open))
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": "list_files", "arguments": json.dumps({"path": "."})},
        }
        return {"role": "assistant", "content": None, "tool_calls": [call]}, None

    def _leave(self, closes: str | None) -> None:
        with self._lock:
            self.in_flight -= 1
            if closes is not None:
                self.open.discard(closes)

    def __enter__(self) -> SlowEndpoint:
        ep = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_POST(self) -> None:
                start = time.monotonic()
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                msg, closes = ep._arrive(body)
                time.sleep(ep.latency)
                ep._leave(closes)
                payload = {
                    "id": f"chatcmpl-{ep.requests}",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": body.get("model", "bench"),
                    "choices": [
                        {
                            "index": 0,
                            "message": msg,
                            "finish_reason": "tool_calls" if msg.get("tool_calls") else "stop",
                        }
                    ],
                    "usage": {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60},
                }
                write_json(self, payload)
                with ep._lock:
                    ep.served_sec += time.monotonic() - start

            def do_GET(self) -> None:  # /stats[?reset]: the counters; ?reset resets peaks
                if self.path.endswith("?reset"):
                    ep.reset_peaks()
                with ep._lock:
                    stats = {
                        "requests": ep.requests,
                        "peak": ep.peak,
                        "peak_open": ep.peak_open,
                        "served_sec": ep.served_sec,
                    }
                write_json(self, stats)

        self._server = serve(Handler)
        return self

    def __exit__(self, *exc: object) -> None:
        stop(self._server)


def list_files_task(root: Path, *, agent_timeout: float = 120) -> Path:
    """A task dir under ``root``: one file, a verifier that writes reward 1."""
    d = root / "bench-list-files"
    (d / "environment").mkdir(parents=True)
    (d / "environment" / "README.md").write_text("benchmark workspace\n")
    (d / "tests").mkdir()
    (d / "tests" / "test.sh").write_text(
        '#!/usr/bin/env bash\nmkdir -p "${LOGS_DIR:-/logs}/verifier"\n'
        'echo 1 > "${LOGS_DIR:-/logs}/verifier/reward.txt"\n'
    )
    (d / "instruction.md").write_text("List the files in the workspace, then say you are done.\n")
    (d / "task.toml").write_text(TASK_TOML.format(agent_timeout=agent_timeout))
    return d
