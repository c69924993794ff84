"""A loopback OpenAI-compatible chat server for tests (http.server in a thread).

Serves ``POST /v1/chat/completions`` (and ``/chat/completions``) with fixed answers, in
order, and records every request body. Talk to it through litellm with
``model="openai/<anything>"`` and ``api_base=server.base_url``.

    with FakeOpenAI(["first answer", "second answer"]) as server:
        ...  # server.requests holds the parsed JSON bodies

``logprobs=fn`` adds first-token ``logprobs`` to each reply: ``fn(body)`` gives the
``[(token, logprob), ...]`` alternatives, the first of them the token answered.
``embeddings=fn`` serves ``POST /v1/embeddings`` too: each input text gets ``fn(text)`` as its
vector (the request bodies are recorded with the chat ones).

An answer may also be a list of tool calls, ``[("write_file", {"path": ..., "content": ...})]``:
the reply is then an assistant message with those ``tool_calls`` (a scripted agent turn).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from skillci.providers.routes import ModelRoute
from skillci.runners.base import AgentSpec

ToolCalls = list[tuple[str, dict[str, Any]]]
Answer = str | ToolCalls | Callable[[dict[str, Any]], str | ToolCalls]


def write_json(handler: BaseHTTPRequestHandler, payload: Any, status: int = 200) -> None:
    """Answer ``handler``'s request with ``payload`` as JSON."""
    data = json.dumps(payload).encode()
    handler.send_response(status)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(len(data)))
    handler.end_headers()
    handler.wfile.write(data)


class FakeOpenAI:
    """Fixed answers, one per request; the last one repeats when they run out."""

    def __init__(
        self,
        answers: Sequence[Answer],
        *,
        prompt_tokens: int = 100,
        completion_tokens: int = 50,
        status: int = 200,
        logprobs: Callable[[dict[str, Any]], list[tuple[str, float]]] | None = None,
        embeddings: Callable[[str], Any] | None = None,
    ) -> None:
        """``status`` other than 200: every request is answered with that HTTP status and
        an OpenAI-style error body (e.g. 401 for a wrong key), and still recorded."""
        if not answers:
            raise ValueError("give at least one answer")
        self.status = status
        self.logprobs = logprobs
        self.embeddings = embeddings
        self.answers = list(answers)
        self.requests: list[dict[str, Any]] = []
        self.paths: list[str] = []
        self.prompt_tokens = prompt_tokens
        self.completion_tokens = completion_tokens
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        assert self._server is not None
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def _answer(self, body: dict[str, Any]) -> str | ToolCalls:
        with self._lock:
            i = len(self.requests)
            self.requests.append(body)
            a = self.answers[min(i, len(self.answers) - 1)]
        return a(body) if callable(a) else a

    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # quiet
                return

            def _embeddings(self, fn: Callable[[str], Any]) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                with fake._lock:
                    fake.requests.append(body)
                if fake.status != 200:
                    error = {"message": f"fake error {fake.status}", "type": "invalid_request"}
                    write_json(self, {"error": error}, fake.status)
                    return
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                data = [
                    {"object": "embedding", "index": i, "embedding": fn(t)}
                    for i, t in enumerate(texts)
                ]
                usage = {"prompt_tokens": len(texts), "total_tokens": len(texts)}
                write_json(
                    self,
                    {"object": "list", "data": data, "model": body.get("model"), "usage": usage},
                )

            def do_POST(self) -> None:
                fake.paths.append(self.path)
                if self.path.rstrip("/").endswith("/embeddings") and fake.embeddings:
                    self._embeddings(fake.embeddings)
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self.send_error(404)
                    return
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                answer = fake._answer(body)
                if fake.status != 200:
                    error = {"message": f"fake error {fake.status}", "type": "invalid_request"}
                    write_json(self, {"error": error}, fake.status)
                    return
                message: dict[str, Any] = {"role": "assistant", "content": answer}
                if isinstance(answer, list):
                    n = len(fake.requests)
                    message = {
                        "role": "assistant",
                        "content": None,
                        "tool_calls": [
                            {
                                "id": f"call_{n}_{i}",
                                "type": "function",
                                "function": {"name": name, "arguments": json.dumps(args)},
                            }
                            for i, (name, args) in enumerate(answer)
                        ],
                    }
                choice: dict[str, Any] = {
                    "index": 0,
                    "message": message,
                    "finish_reason": "tool_calls" if isinstance(answer, list) else "stop",
                }
                if fake.logprobs is not None:
                    alts = fake.logprobs(body)
                    top = [{"token": t, "logprob": lp} for t, lp in alts]
                    choice["logprobs"] = {"content": [{**top[0], "top_logprobs": top}]}
                payload = {
                    "id": f"chatcmpl-fake-{len(fake.requests)}",
                    "object": "chat.completion",
                    "created": 1700000000,
                    "model": body.get("model", "fake"),
                    "choices": [choice],
                    "usage": {
                        "prompt_tokens": fake.prompt_tokens,
                        "completion_tokens": fake.completion_tokens,
                        "total_tokens": fake.prompt_tokens + fake.completion_tokens,
                    },
                }
                write_json(self, payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None and self._thread is not None
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


#: The variable a test sets to the fake server's (non-secret) key for :func:`student_on`.
FAKE_KEY_ENV = "SKILLCI_FAKE_KEY"


def student_on(server: FakeOpenAI, *, max_steps: int) -> AgentSpec:
    """The built-in student agent on ``server`` (route ``fake/student``; the test sets
    ``$SKILLCI_FAKE_KEY``)."""
    route = ModelRoute(
        model="openai/fake-student", api_base=server.base_url, api_key_env=FAKE_KEY_ENV, timeout=10
    )
    return AgentSpec(
        kind="builtin", role="student", route_name="fake/student", route=route, max_steps=max_steps
    )
