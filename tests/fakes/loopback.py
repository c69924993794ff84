"""Start and stop a threaded HTTP server on 127.0.0.1 (a free port) for the loopback fakes."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def serve(handler: type[BaseHTTPRequestHandler]) -> ThreadingHTTPServer:
    """``handler`` served on 127.0.0.1 (port 0: a free one) by a daemon thread."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def stop(server: ThreadingHTTPServer | None) -> None:
    """Stop serving and close the socket."""
    assert server is not None
    server.shutdown()
    server.server_close()
