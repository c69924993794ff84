"""A real agent's sandbox reaches the model gateway and nothing else (design 453).

The agent launcher is driven with a probe program in place of an agent: a loopback HTTP
server stands in for the gateway (its port is the launch's ``gateway_port``), and a second
loopback listener stands in for everything else on the host — the address a missed
payload would send keys to. Real bubblewrap, real sockets.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from skillci.agents.headless import Launch
from skillci.runners.agent_launch import launcher
from skillci.runners.sandbox import BwrapShell, Mount, bwrap_path
from tests.fakes.listener import recording_listener

pytestmark = pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is not usable here")

#: Asks the gateway, then the other listener with every proxy setting ignored.
PROBE = r"""
import json, os, socket, sys, urllib.request
gw, other = int(sys.argv[1]), int(sys.argv[2])
out = {"interfaces": sorted(n for _i, n in socket.if_nameindex())}
opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
out["gateway"] = opener.open(f"http://127.0.0.1:{gw}/v1/models", timeout=10).read().decode()
raw = socket.create_connection(("127.0.0.1", gw), timeout=10)
raw.sendall(b"GET /half HTTP/1.0\r\n\r\n")
raw.shutdown(socket.SHUT_WR)  # a client that half-closes still gets its answer
answer = b""
while chunk := raw.recv(65536):
    answer += chunk
out["half_close"] = answer.decode().rsplit("\r\n\r\n", 1)[-1]
try:
    socket.create_connection(("127.0.0.1", other), timeout=3).close()
    out["other"] = "reached"
except OSError as exc:
    out["other"] = type(exc).__name__
print(json.dumps(out))
"""


class _Gateway(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        body = b"gateway-ok " + self.path.encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


@pytest.fixture
def servers() -> Iterator[tuple[int, int, list[bytes]]]:
    """(gateway port, other port, what the other listener received)."""
    gw = ThreadingHTTPServer(("127.0.0.1", 0), _Gateway)
    threading.Thread(target=gw.serve_forever, daemon=True).start()
    with recording_listener() as (other, got):
        yield gw.server_address[1], other, got
    gw.shutdown()
    gw.server_close()


def _run(tmp_path: Path, gw: int, other: int, *, internet: bool) -> dict[str, object]:
    ws, logs = tmp_path / "ws", tmp_path / "logs"
    ws.mkdir(exist_ok=True)
    logs.mkdir(exist_ok=True)
    shell = BwrapShell([Mount(ws, "/app", True)], allow_network=internet)
    job = Launch(
        [sys.executable, "-c", PROBE, str(gw), str(other)],
        {},
        logs / "out.txt",
        logs / "err.txt",
        gateway_port=gw,
    )
    assert launcher(shell)(job).wait(timeout=60) == 0, job.stderr.read_text()
    return json.loads(job.stdout.read_text())  # type: ignore[no-any-return]


def test_without_internet_the_gateway_answers_and_no_other_host_port_is_reached(
    tmp_path: Path,
    servers: tuple[int, int, list[bytes]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    gw, other, got = servers
    relays = tmp_path / "relays"
    relays.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(relays))
    out = _run(tmp_path, gw, other, internet=False)
    assert out["gateway"] == "gateway-ok /v1/models"  # through both relays, same URL
    assert out["half_close"] == "gateway-ok /half"
    assert out["other"] == "ConnectionRefusedError"
    assert out["interfaces"] == ["lo"]
    assert got == []
    deadline = time.monotonic() + 5  # the host relay's directory goes once the sandbox ends
    while any(relays.iterdir()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert list(relays.iterdir()) == []


def test_a_task_that_allows_the_internet_shares_the_host_network(
    tmp_path: Path, servers: tuple[int, int, list[bytes]]
) -> None:
    """The control: the same probe reaches the other listener when the network is shared,
    so the test above can fail."""
    gw, other, got = servers
    out = _run(tmp_path, gw, other, internet=True)
    assert out["gateway"] == "gateway-ok /v1/models"
    assert out["other"] == "reached"
    assert got == [b""]  # it connected, sent nothing, closed


def test_an_agent_speaking_over_stdio_keeps_its_pipes_behind_the_relay(
    tmp_path: Path, servers: tuple[int, int, list[bytes]]
) -> None:
    """ACP agents talk over stdin and stdout: the relay ``exec``\\ s the agent, which keeps
    both, and its exit code."""
    gw, _other, _got = servers
    ws, logs = tmp_path / "ws", tmp_path / "logs"
    ws.mkdir()
    logs.mkdir()
    echo = "import sys; line = sys.stdin.readline(); print(line.strip().upper()); sys.exit(3)"
    job = Launch(
        [sys.executable, "-c", echo],
        {},
        logs / "out.txt",
        logs / "err.txt",
        pipes=True,
        gateway_port=gw,
    )
    proc = launcher(BwrapShell([Mount(ws, "/app", True)]))(job)
    assert isinstance(proc, subprocess.Popen)
    out, _ = proc.communicate(b"ping\n", timeout=60)
    assert out.decode().strip() == "PING"
    assert proc.returncode == 3
