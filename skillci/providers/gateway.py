"""The loopback model gateway a real agent talks to (keys stay outside the sandbox).

One :class:`Gateway` per trial: an HTTP server on ``127.0.0.1`` (a free port) that accepts
the agent's model calls in the agent's own format — Anthropic Messages (Claude Code),
OpenAI Responses (Codex), OpenAI chat completions (OpenCode, Qwen Code), the Gemini API's
``models/M:generateContent`` and ``:streamGenerateContent`` (Gemini CLI) — and makes each one a call
on the trial's route through :class:`~skillci.providers.client.ModelClient`: the route's
key, budget, concurrency limit, retries and cache apply as for the built-in agent. The
agent only holds a per-trial token for the gateway, never a provider key.

Every call is recorded (:class:`GatewayCall`: API, latency, tokens, cost, tool calls,
error). A call the route cannot answer (the model is unreachable after the client's
retries, the budget is spent) is answered with a non-retryable 400 and sets
:attr:`Gateway.fatal`: the agent's own retry loop (minutes for Claude Code) is cut short
by whoever runs it, and the trial is an infrastructure error, not the skill's failure.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import selectors
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

import skillci.providers.wire as wire
from skillci.errors import BudgetExceeded, ModelError
from skillci.providers.client import ModelClient
from skillci.providers.types import Completion

Api = Literal["anthropic", "responses", "chat", "gemini"]
MAX_BODY = 32 * 1024 * 1024


class GatewayCall(BaseModel):
    """One model call an agent made through the gateway."""

    model_config = ConfigDict(extra="forbid")

    api: Api = Field(description="Wire format: anthropic, responses, chat or gemini.")
    model: str = Field(description="Model name the agent asked for (the route decides).")
    started: float = Field(description="Seconds since the gateway started.")
    latency_sec: float = Field(ge=0, description="Time to the route's answer.")
    input_tokens: int = Field(default=0, ge=0, description="Prompt tokens (route's count).")
    output_tokens: int = Field(default=0, ge=0, description="Completion tokens.")
    usd: float | None = Field(default=None, ge=0, description="Cost when prices are known.")
    tool_calls: list[str] = Field(default_factory=list, description="Tools the answer called.")
    cached: bool = Field(default=False, description="Served from the response cache.")
    error: str | None = Field(default=None, description="Why the route gave no answer.")


class Gateway:
    """A loopback server translating one agent's calls onto one route. Use as a context
    manager; :attr:`base_url` and :attr:`token` go into the agent's configuration."""

    def __init__(self, client: ModelClient, *, seed: int | None = None) -> None:
        self.client = client
        self.seed = seed
        self.token = "skillci-gw-" + secrets.token_hex(16)
        self.calls: list[GatewayCall] = []
        self.fatal: str | None = None
        self.fatal_event = threading.Event()
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None
        self._wake: tuple[int, int] | None = None
        self._start = time.monotonic()
        self._ids = 0
        self._in_flight: dict[int, float] = {}

    @property
    def port(self) -> int:
        """The loopback port it listens on."""
        assert self._server is not None
        return int(self._server.server_address[1])

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:<port>`` (no path: each agent appends its own)."""
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> Gateway:
        gateway = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                if self.path.rstrip("/").endswith("/models"):
                    gateway._json(self, {"object": "list", "data": [{"id": "skillci"}]})
                else:
                    gateway._json(self, {"error": {"message": "not found"}}, 404)

            def do_POST(self) -> None:
                gateway._post(self)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._wake = os.pipe()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        return self

    def _serve(self) -> None:
        """Accept connections until :meth:`__exit__` writes to the wake pipe. Not
        ``serve_forever``: its ``shutdown`` waits for the next 0.5 s poll, which was a
        third of a real agent's trial overhead (docs/design/424)."""
        assert self._server is not None and self._wake is not None
        with selectors.DefaultSelector() as sel:
            sel.register(self._server, selectors.EVENT_READ)
            sel.register(self._wake[0], selectors.EVENT_READ)
            while True:
                ready = [key.fileobj for key, _ in sel.select()]
                if self._wake[0] in ready:
                    return
                self._server.handle_request()

    def __exit__(self, *exc: object) -> None:
        if self._server is None or self._wake is None or self._thread is None:
            return
        os.write(self._wake[1], b"x")
        self._thread.join()
        self._server.server_close()
        for fd in self._wake:
            with contextlib.suppress(OSError):
                os.close(fd)

    # ------------------------------------------------------------------ handling

    def _json(self, h: BaseHTTPRequestHandler, payload: Any, status: int = 200) -> None:
        data = json.dumps(payload).encode()
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _sse(self, h: BaseHTTPRequestHandler, events: list[wire.Sse]) -> None:
        data = wire.encode_sse(events)
        h.send_response(200)
        h.send_header("Content-Type", "text/event-stream")
        h.send_header("Cache-Control", "no-cache")
        h.send_header("Content-Length", str(len(data)))
        h.end_headers()
        h.wfile.write(data)

    def _authorised(self, h: BaseHTTPRequestHandler) -> bool:
        given = str(
            h.headers.get("x-api-key")
            or h.headers.get("x-goog-api-key")
            or h.headers.get("Authorization")
            or ""
        )
        return secrets.compare_digest(given.removeprefix("Bearer ").strip(), self.token)

    def _post(self, h: BaseHTTPRequestHandler) -> None:
        path = h.path.split("?", 1)[0].rstrip("/")
        length = int(h.headers.get("Content-Length") or 0)
        if length > MAX_BODY:
            self._json(h, {"error": {"message": "request too large"}}, 413)
            return
        try:
            body = json.loads(h.rfile.read(length) or b"{}")
        except ValueError:
            self._json(h, {"error": {"message": "body is not JSON"}}, 400)
            return
        if not self._authorised(h):
            self._json(h, {"error": {"type": "authentication_error", "message": "bad token"}}, 401)
            return
        if path.endswith("/messages/count_tokens"):
            messages, _ = wire.anthropic_to_chat(body)
            chars = sum(len(str(m.get("content") or "")) for m in messages)
            self._json(h, {"input_tokens": max(1, chars // 4)})
            return
        if path.endswith(":countTokens"):
            self._json(h, wire.gemini_count_tokens(body))
            return
        api: Api | None = (
            "anthropic"
            if path.endswith("/messages")
            else "responses"
            if path.endswith("/responses")
            else "chat"
            if path.endswith("/chat/completions")
            else "gemini"
            if path.endswith((":generateContent", ":streamGenerateContent"))
            else None
        )
        if api is None:
            self._json(h, {"error": {"message": f"no such endpoint: {path}"}}, 404)
            return
        if api == "gemini":  # the model is in the path, streaming is the method
            model = path.rsplit("/", 1)[-1].split(":", 1)[0]
            body = {**body, "model": model, "stream": path.endswith(":streamGenerateContent")}
        self._answer(h, api, body)

    def _answer(self, h: BaseHTTPRequestHandler, api: Api, body: dict[str, Any]) -> None:
        to_chat = {
            "anthropic": wire.anthropic_to_chat,
            "responses": wire.responses_to_chat,
            "chat": wire.chat_to_chat,
            "gemini": wire.gemini_to_chat,
        }[api]
        messages, tools = to_chat(body)
        model = str(body.get("model") or "skillci")
        started = time.monotonic()
        call = GatewayCall(
            api=api, model=model, started=round(started - self._start, 4), latency_sec=0
        )
        key = id(call)
        with self._lock:
            self._in_flight[key] = started
        try:
            if self.fatal is not None:
                raise ModelError(self.fatal)
            completion = self.client.complete(messages, tools or None, seed=self.seed)
        except (ModelError, BudgetExceeded) as exc:
            call.error = f"{type(exc).__name__}: {exc.message}"
            self._record(call, started)
            with self._lock:
                self.fatal = self.fatal or call.error
            self.fatal_event.set()
            message = f"skillci gateway: {call.error}"
            if api == "gemini":  # the Gemini API's error shape; 400 is not retried
                error = {"code": 400, "message": message, "status": "INVALID_ARGUMENT"}
                self._json(h, {"error": error}, 400)
                return
            error = {"type": "invalid_request_error", "message": message}
            self._json(h, {"type": "error", "error": error}, 400)
            return
        finally:
            with self._lock:
                self._in_flight.pop(key, None)
        call.input_tokens, call.output_tokens = completion.input_tokens, completion.output_tokens
        call.usd, call.cached = completion.usd, completion.cached
        call.tool_calls = [t.name for t in completion.tool_calls]
        ident = self._record(call, started)
        self._reply(h, api, body, completion, model, ident)

    def _reply(
        self,
        h: BaseHTTPRequestHandler,
        api: Api,
        body: dict[str, Any],
        c: Completion,
        model: str,
        ident: str,
    ) -> None:
        stream = bool(body.get("stream"))
        if api == "anthropic":
            if stream:
                self._sse(h, wire.anthropic_events(c, model, f"msg_{ident}"))
            else:
                self._json(h, wire.anthropic_message(c, model, f"msg_{ident}"))
        elif api == "gemini":
            if stream:
                self._sse(h, wire.gemini_events(c, model, f"gem_{ident}"))
            else:
                self._json(h, wire.gemini_response(c, model, f"gem_{ident}"))
        elif api == "responses":
            events = wire.responses_events(c, model, f"resp_{ident}")
            if stream:
                self._sse(h, events)
            else:
                self._json(h, events[-1][1]["response"])
        elif stream:
            usage = bool((body.get("stream_options") or {}).get("include_usage"))
            self._sse(h, wire.chat_events(c, model, f"chatcmpl-{ident}", usage=usage))
        else:
            self._json(h, wire.chat_response(c, model, f"chatcmpl-{ident}"))

    def waiting_sec(self) -> float | None:
        """How long the oldest call still waiting for the route has waited (None: none)."""
        with self._lock:
            oldest = min(self._in_flight.values(), default=None)
        return None if oldest is None else time.monotonic() - oldest

    def _record(self, call: GatewayCall, started: float) -> str:
        call.latency_sec = round(time.monotonic() - started, 4)
        with self._lock:
            self.calls.append(call)
            self._ids += 1
            return f"{self._ids:04d}{secrets.token_hex(4)}"


__all__ = ["Gateway", "GatewayCall"]
