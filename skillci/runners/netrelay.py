"""The model gateway inside a sandbox that has no network (design 453).

A real agent's process tree runs under bubblewrap in a network namespace of its own
(``--unshare-net``: a loopback interface and nothing else), unless the task sets
``allow_internet``. The gateway listens on the host's loopback, which that namespace cannot
reach, so two relays carry its bytes and nothing else:

- on the host, :class:`UnixRelay` accepts on a unix socket in a fresh directory bound into
  the sandbox and connects each client to the gateway's TCP port;
- in the sandbox, :data:`INNER` (run by this interpreter with ``-I -c``: standard library
  only, nothing of skillci need be visible there) listens on ``127.0.0.1:<the same port>``
  before the agent starts, forks the listener off, and ``exec``\\ s the agent, which keeps
  its process id, its stdin and stdout (ACP), and the gateway URL it was configured with.

When the agent exits, bubblewrap's process namespace ends and the inner relay with it.
"""

from __future__ import annotations

import contextlib
import shutil
import socket
import sys
import tempfile
import threading
from pathlib import Path

#: Where the host relay's socket appears inside the sandbox.
SOCKET_DIR = "/run/skillci-gateway"
SOCKET_NAME = "gateway.sock"
_CHUNK = 65536
#: A unix socket's path must fit in sockaddr_un.sun_path (108 bytes with its NUL).
_SUN_PATH_MAX = 100

#: The sandbox side: ``python -I -c INNER PORT SOCKET -- AGENT ARGV...``.
INNER = r"""
import os, socket, sys, threading
port, path, argv = int(sys.argv[1]), sys.argv[2], sys.argv[4:]
srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(64)
if os.fork() == 0:
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    def pump(a, b):
        how = socket.SHUT_WR
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            how = socket.SHUT_RDWR
        for s in (b, a) if how == socket.SHUT_RDWR else (b,):
            try:
                s.shutdown(how)
            except OSError:
                pass
    def serve(c):
        u = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            u.connect(path)
        except OSError:
            c.close()
            return
        back = threading.Thread(target=pump, args=(u, c), daemon=True)
        back.start()
        pump(c, u)
        back.join()
        c.close()
        u.close()
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()
srv.close()
os.execvp(argv[0], argv)
"""


def inner_argv(port: int, argv: list[str]) -> list[str]:
    """``argv`` started behind the in-sandbox relay of the gateway's ``port``."""
    sock = f"{SOCKET_DIR}/{SOCKET_NAME}"
    return [sys.executable, "-I", "-c", INNER, str(port), sock, "--", *argv]


def _pump(a: socket.socket, b: socket.socket) -> None:
    """Carry ``a``'s bytes to ``b``; at ``a``'s end of stream pass the half-close on (the
    other direction goes on), on an error end both directions."""
    how = socket.SHUT_WR
    try:
        while data := a.recv(_CHUNK):
            b.sendall(data)
    except OSError:
        how = socket.SHUT_RDWR
    for s in (b, a) if how == socket.SHUT_RDWR else (b,):
        with contextlib.suppress(OSError):
            s.shutdown(how)


class UnixRelay:
    """The host side: a unix socket in a fresh directory (:attr:`directory`, to bind into
    the sandbox at :data:`SOCKET_DIR`) whose every connection is carried to
    ``127.0.0.1:port``. :meth:`close` stops it and removes the directory."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.directory = Path(tempfile.mkdtemp(prefix="skillci-gw-"))
        if len(str(self.directory / SOCKET_NAME)) > _SUN_PATH_MAX:  # a long $TMPDIR
            self.directory.rmdir()
            self.directory = Path(tempfile.mkdtemp(prefix="skillci-gw-", dir="/tmp"))
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(str(self.directory / SOCKET_NAME))
        self._server.listen(64)
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True, name="gateway-relay")
        self._thread.start()

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        try:
            upstream = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        except OSError:
            client.close()
            return
        upstream.settimeout(None)
        back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
        back.start()
        _pump(client, upstream)
        back.join()
        client.close()
        upstream.close()

    def close(self) -> None:
        self._closed.set()
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        self._thread.join(timeout=5)
        shutil.rmtree(self.directory, ignore_errors=True)


__all__ = ["INNER", "SOCKET_DIR", "UnixRelay", "inner_argv"]
