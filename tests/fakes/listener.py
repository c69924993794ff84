"""A loopback TCP listener that records what reaches it: the host address a payload the
guard missed would send keys to (design 453)."""

from __future__ import annotations

import contextlib
import socket
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def recording_listener() -> Iterator[tuple[int, list[bytes]]]:
    """(port on 127.0.0.1, the first bytes of each connection it accepted)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(8)
    got: list[bytes] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = sock.accept()
            except OSError:
                return
            with conn:
                conn.settimeout(3)
                try:
                    got.append(conn.recv(65536))
                except OSError:
                    got.append(b"")

    threading.Thread(target=accept, daemon=True).start()
    try:
        yield sock.getsockname()[1], got
    finally:
        sock.close()
