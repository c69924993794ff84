"""A loopback OTLP/HTTP trace receiver (the network boundary of ``trace export --format otlp``).

It answers ``POST /v1/traces`` like a collector: the body is decoded as a protobuf
``ExportTraceServiceRequest`` with opentelemetry-proto's own classes and kept, raw and
decoded; the answer is an empty ``ExportTraceServiceResponse`` (200), or ``status`` when
set (a collector that refuses).

    with OtlpCollector() as col:
        ...  # --endpoint col.url; then col.requests, col.bodies
"""

from __future__ import annotations

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from tests.fakes.loopback import serve, stop


class OtlpCollector:
    """Loopback OTLP/HTTP receiver (module docstring)."""

    def __init__(self, status: int = 200) -> None:
        self.status = status
        self.bodies: list[bytes] = []
        self.requests: list[ExportTraceServiceRequest] = []
        self.headers: list[dict[str, str]] = []
        self._server: ThreadingHTTPServer | None = None

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> OtlpCollector:
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/v1/traces":
                    self.send_error(404)
                    return
                if owner.status != 200:
                    self.send_response(owner.status, "refused by the test collector")
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                req = ExportTraceServiceRequest()
                req.ParseFromString(body)
                owner.bodies.append(body)
                owner.requests.append(req)
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("Content-Type", "application/x-protobuf")
                self.send_header("Content-Length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self._server = serve(Handler)
        return self

    def __exit__(self, *exc: object) -> None:
        stop(self._server)
