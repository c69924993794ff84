"""Send or write :class:`~skillci.trace.otel.SpanData` as OTLP (the ``otel`` extra).

The OpenTelemetry packages (``opentelemetry-sdk``, ``opentelemetry-exporter-otlp-proto-http``)
are an optional extra and are imported here, inside the functions, so that nothing else in
skillci (``skillci trace ls`` above all) pays for them. Missing: :class:`MissingExtra`, with
the ``pip install`` line.

:func:`send` posts every span of the export in one OTLP/HTTP request (protobuf) with the SDK's
exporter, which reads the usual ``OTEL_EXPORTER_OTLP_HEADERS`` / ``..._TRACES_HEADERS``
(authentication for Langfuse, Grafana Cloud ...), certificates and compression from the
environment. One request: the collector takes all of the export or none of it.
:func:`to_json` is the same request in OTLP/JSON (ids as hex, as the spec wants).
"""

from __future__ import annotations

import base64
import logging
import re
from collections.abc import Mapping, Sequence
from typing import Any

from skillci.errors import ExternalError, MissingExtra
from skillci.trace.otel import SpanData

INSTALL_HINT = "pip install 'skillci[otel]'"
_EXPORTER_LOGGER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"


class OtlpExportError(ExternalError):
    """The OTLP endpoint did not take the spans (unreachable, refused, an HTTP error)."""

    default_hint = (
        "check --endpoint and that the collector is up; authentication headers come from "
        "OTEL_EXPORTER_OTLP_HEADERS"
    )


def require_otel() -> None:
    """Raise :class:`MissingExtra` unless the ``otel`` extra is installed."""
    try:
        import opentelemetry.exporter.otlp.proto.common.trace_encoder
        import opentelemetry.exporter.otlp.proto.http.trace_exporter
        import opentelemetry.sdk.trace  # noqa: F401
    except ImportError as exc:
        missing = exc.name or "opentelemetry"
        raise MissingExtra(
            f"OpenTelemetry export needs the otel extra ({missing} is not installed)",
            hint=INSTALL_HINT,
        ) from None


def _sdk_spans(
    spans: Sequence[SpanData], resource: Mapping[str, str], scope: tuple[str, str]
) -> list[Any]:
    from opentelemetry.sdk.resources import OTELResourceDetector, Resource
    from opentelemetry.sdk.trace import Event, ReadableSpan
    from opentelemetry.sdk.util.instrumentation import InstrumentationScope
    from opentelemetry.trace import SpanContext, SpanKind, Status, StatusCode, TraceFlags

    # not Resource.create: its random service.instance.id would make two exports differ
    res = Resource(dict(resource)).merge(OTELResourceDetector().detect())
    inst = InstrumentationScope(*scope)
    out = []
    for s in spans:
        ctx = SpanContext(s.trace_id, s.span_id, is_remote=False, trace_flags=TraceFlags(1))
        parent = (
            None
            if s.parent_id is None
            else SpanContext(s.trace_id, s.parent_id, is_remote=False, trace_flags=TraceFlags(1))
        )
        status = Status(StatusCode.ERROR, s.error) if s.error is not None else Status()
        events = [Event(e.name, dict(e.attributes), e.time_ns) for e in s.events]
        out.append(
            ReadableSpan(
                name=s.name,
                context=ctx,
                parent=parent,
                resource=res,
                attributes=dict(s.attributes),
                events=events,
                kind=SpanKind[s.kind],
                status=status,
                start_time=s.start_ns,
                end_time=s.end_ns,
                instrumentation_scope=inst,
            )
        )
    return out


def _hex_ids(node: Any) -> None:
    """OTLP/JSON carries trace and span ids as hex, not protobuf-JSON's base64."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("traceId", "spanId", "parentSpanId") and isinstance(value, str):
                node[key] = base64.b64decode(value).hex()
            else:
                _hex_ids(value)
    elif isinstance(node, list):
        for item in node:
            _hex_ids(item)


def to_json(
    spans: Sequence[SpanData], resource: Mapping[str, str], scope: tuple[str, str]
) -> dict[str, Any]:
    """The OTLP/JSON ``ExportTraceServiceRequest`` of ``spans``."""
    require_otel()
    from google.protobuf.json_format import MessageToDict
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    doc: dict[str, Any] = MessageToDict(
        encode_spans(_sdk_spans(spans, resource, scope)), use_integers_for_enums=True
    )
    _hex_ids(doc)
    return doc


def traces_url(endpoint: str) -> str:
    """The traces URL of an OTLP/HTTP endpoint: ``/v1/traces`` is added to a base URL (as
    for ``OTEL_EXPORTER_OTLP_ENDPOINT``); a URL ending in it is kept."""
    url = endpoint.rstrip("/")
    return url if url.endswith("/v1/traces") else url + "/v1/traces"


def send(
    spans: Sequence[SpanData],
    endpoint: str,
    *,
    resource: Mapping[str, str],
    scope: tuple[str, str],
    timeout: float,
) -> None:
    """Post ``spans`` to ``endpoint`` in one OTLP/HTTP request; raise
    :class:`OtlpExportError` with the cause unless the collector took them."""
    require_otel()
    from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
    from opentelemetry.sdk.trace.export import SpanExportResult

    url = traces_url(endpoint)
    sdk = _sdk_spans(spans, resource, scope)
    session = _recording_session()
    log = logging.getLogger(_EXPORTER_LOGGER)
    quiet, log.disabled = log.disabled, True  # its lines become our one error line
    exporter = OTLPSpanExporter(endpoint=url, timeout=timeout, session=session)
    try:
        result = exporter.export(sdk)
    finally:
        exporter.shutdown()  # type: ignore[no-untyped-call]
        log.disabled = quiet
    if result is not SpanExportResult.SUCCESS:
        raise OtlpExportError(f"OTLP export to {url} failed: {_cause(session)}")


def _recording_session() -> Any:
    """A requests session that keeps the last error or answer (the exporter logs only a
    summary): the cause of a failed export."""
    import requests

    class Recording(requests.Session):
        last: str = "the exporter reported a failure"

        def request(self, *args: Any, **kw: Any) -> requests.Response:
            try:
                resp = super().request(*args, **kw)
            except requests.RequestException as exc:
                self.last = _error_text(exc)
                raise
            self.last = f"HTTP {resp.status_code} {resp.reason}".strip()
            return resp

    return Recording()


def _error_text(exc: BaseException) -> str:
    """The OS error inside a connection error ("[Errno 111] Connection refused"), else the
    error's class and text."""
    text = " ".join(str(exc).split())
    if errno := re.search(r"\[Errno -?\d+\] [^'\")]+", text):
        return errno.group(0).strip()
    return f"{type(exc).__name__}: {text}"[:400]


def _cause(session: Any) -> str:
    return str(session.last)


__all__ = ["INSTALL_HINT", "OtlpExportError", "require_otel", "send", "to_json", "traces_url"]
