"""A small Agent Client Protocol client: JSON-RPC 2.0, one message a line, over an agent's
stdin and stdout (design 429).

:class:`AcpConnection` owns a started agent process whose stdin and stdout are pipes. A
reader thread takes each line the agent writes: a response completes the matching
:class:`Pending` call, a request from the agent is answered at once by the ``serve``
callback (its return value, or a JSON-RPC error when it raises :class:`RpcError`), a
notification goes to ``notify``. Every message either way is appended to the transcript
file (``{"from": "agent"|"client", "message": ...}`` per line) — what the agent sent is
untrusted data, kept as it came.

Anything that is not JSON-RPC 2.0 — a line that is not a JSON object, a response to no
call of ours — is a protocol error (:attr:`AcpConnection.broken`): the session cannot be
trusted any more and its caller ends it as a failed measurement.
"""

from __future__ import annotations

import contextlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from skillci.fsutil import MAX_JSON_DEPTH, json_depth

#: JSON-RPC error codes this client answers with.
METHOD_NOT_FOUND = -32601
#: Characters of an offending line quoted in a protocol error.
QUOTE = 200


class RpcError(Exception):
    """An error answer to an agent's request (``serve`` raises it)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


@dataclass
class Pending:
    """One call of ours: done once the agent answered it."""

    method: str
    done: threading.Event = field(default_factory=threading.Event)
    result: Any = None
    error: dict[str, Any] | None = None
    answered: bool = False
    """The agent answered (else ``done`` was set because its stdout ended)."""


class AcpConnection:
    """JSON-RPC over the agent process's pipes; see the module docstring."""

    def __init__(
        self,
        stdin: IO[bytes],
        stdout: IO[bytes],
        transcript: Path,
        *,
        serve: Callable[[str, dict[str, Any]], Any],
        notify: Callable[[str, dict[str, Any]], None],
    ) -> None:
        self._stdin, self._stdout = stdin, stdout
        self._serve, self._notify = serve, notify
        self._log = transcript.open("a", encoding="utf-8")
        self._lock = threading.Lock()
        self._pending: dict[int, Pending] = {}
        self._next_id = 0
        self.broken: str | None = None
        """Why the agent's side is not JSON-RPC (None while it is)."""
        self.closed = threading.Event()
        """Set when the agent's stdout ended (it exited or closed it) or broke the protocol."""
        self._reader = threading.Thread(target=self._read, name="acp-reader", daemon=True)

    def start(self) -> AcpConnection:
        self._reader.start()
        return self

    def call(self, method: str, params: dict[str, Any]) -> Pending:
        """Send a request; its answer arrives on the returned :class:`Pending`."""
        with self._lock:
            self._next_id += 1
            pending = self._pending[self._next_id] = Pending(method)
            msg_id = self._next_id
        self._send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
        return pending

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def close(self) -> None:
        """Close our end of the agent's stdin (it should then exit) and the transcript
        once the reader has finished."""
        with contextlib.suppress(OSError):
            self._stdin.close()

    def join(self, timeout: float) -> None:
        self._reader.join(timeout)
        with self._lock:
            self._log.close()

    def _send(self, message: dict[str, Any]) -> None:
        line = json.dumps(message)
        with self._lock:
            self._record("client", message)
            try:
                self._stdin.write(line.encode() + b"\n")
                self._stdin.flush()
            except (OSError, ValueError):  # the agent is gone; the reader sees its EOF
                pass

    def _record(self, side: str, message: Any) -> None:
        if not self._log.closed:
            self._log.write(json.dumps({"from": side, "message": message}) + "\n")
            self._log.flush()

    def _read(self) -> None:
        try:
            for raw in self._stdout:
                line = raw.decode("utf-8", errors="replace").strip()
                if line and not self._dispatch(line):
                    break
        except (OSError, ValueError):
            pass
        finally:
            self.closed.set()
            for p in list(self._pending.values()):
                p.done.set()  # nobody will answer them now

    def _dispatch(self, line: str) -> bool:
        """Handle one line from the agent; False once the protocol is broken."""
        try:
            message = json.loads(line)
            if json_depth(message) > MAX_JSON_DEPTH:
                message = None
        except (ValueError, RecursionError):  # untrusted: nesting deep enough to recurse out
            message = None
        with self._lock:
            self._record("agent", message if message is not None else {"not_json": line})
        if not isinstance(message, dict) or message.get("jsonrpc") != "2.0":
            return self._break(f"not a JSON-RPC 2.0 message: {line[:QUOTE]!r}")
        method, msg_id = message.get("method"), message.get("id")
        params = message.get("params")
        params = params if isinstance(params, dict) else {}
        if isinstance(method, str) and msg_id is not None:
            self._answer(msg_id, method, params)
        elif isinstance(method, str):
            self._notify(method, params)
        else:
            return self._resolve(message, msg_id, line)
        return True

    def _answer(self, msg_id: Any, method: str, params: dict[str, Any]) -> None:
        try:
            result = self._serve(method, params)
        except RpcError as exc:
            self._send(
                {"jsonrpc": "2.0", "id": msg_id, "error": {"code": exc.code, "message": str(exc)}}
            )
            return
        self._send({"jsonrpc": "2.0", "id": msg_id, "result": result})

    def _resolve(self, message: dict[str, Any], msg_id: Any, line: str) -> bool:
        with self._lock:
            pending = self._pending.pop(msg_id, None) if isinstance(msg_id, int) else None
        if pending is None or ("result" not in message and "error" not in message):
            return self._break(f"a response to no call of ours: {line[:QUOTE]!r}")
        error = message.get("error")
        if error is not None:
            pending.error = error if isinstance(error, dict) else {"message": str(error)}
        pending.result = message.get("result")
        pending.answered = True
        pending.done.set()
        return True

    def _break(self, why: str) -> bool:
        self.broken = why
        return False


__all__ = ["METHOD_NOT_FOUND", "AcpConnection", "Pending", "RpcError"]
