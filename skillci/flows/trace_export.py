"""``skillci trace export --format otlp``: stored trials as OpenTelemetry traces (design 411).

Load (the records, through the store) → decide (:func:`skillci.trace.otel.trial_spans`,
pure, redacted) → act (one OTLP/HTTP request to ``--endpoint``, and/or the OTLP/JSON file
``--out``). With neither, the caller prints the OTLP/JSON. The ``otel`` extra is checked
first, before the store is opened; a failed send raises before anything is written or
claimed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import skillci.trace.otlp as otlp
from skillci import __version__
from skillci.errors import UsageError
from skillci.fsutil import atomic_write_text
from skillci.trace.otel import SpanData, trace_id_of, trial_spans
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore

#: The ``service.name`` resource attribute of the exported spans.
SERVICE = "skillci"
SCOPE = ("skillci.trace.otel", __version__)


@dataclass
class OtlpExport:
    """What an OTLP export did (``--json`` prints it, but ``document``)."""

    runs: list[dict[str, Any]]
    spans: int
    include_content: bool
    endpoint: str | None = None
    out: str | None = None
    sent: bool = False
    written: bool = False
    dry_run: bool = False
    document: dict[str, Any] | None = field(default=None, repr=False)
    """The OTLP/JSON request (printed on stdout when there is no --endpoint and no --out)."""

    def summary(self) -> dict[str, Any]:
        return {
            "format": "otlp",
            "runs": self.runs,
            "spans": self.spans,
            "include_content": self.include_content,
            "endpoint": self.endpoint,
            "out": self.out,
            "sent": self.sent,
            "written": self.written,
            "dry_run": self.dry_run,
        }


def _check_endpoint(endpoint: str) -> str:
    if not endpoint.startswith(("http://", "https://")):
        raise UsageError(
            f"--endpoint {endpoint}: not an http(s) URL",
            hint="give the collector's OTLP/HTTP URL, e.g. http://localhost:4318",
        )
    return otlp.traces_url(endpoint)


def export_otlp(
    home: Path | None,
    run_ids: list[str],
    *,
    endpoint: str | None = None,
    out: Path | None = None,
    include_content: bool = False,
    timeout: float = 10.0,
    dry_run: bool = False,
) -> OtlpExport:
    """Export the trials ``run_ids`` (ids or unique prefixes) as one OTLP request."""
    otlp.require_otel()
    url = _check_endpoint(endpoint) if endpoint is not None else None
    store = TraceStore(home)
    records = {rec.run_id: rec for rec in (store.get(r) for r in run_ids)}  # dedup'd, in order
    redactor = Redactor()
    spans: list[SpanData] = []
    runs: list[dict[str, Any]] = []
    for rec in records.values():
        mine = trial_spans(rec, redactor=redactor, include_content=include_content)
        spans += mine
        trace_id = f"{trace_id_of(rec.run_id):032x}"
        outcome = rec.evaluation.state.value
        runs.append(
            {"run_id": rec.run_id, "trace_id": trace_id, "spans": len(mine), "outcome": outcome}
        )
    resource = {"service.name": SERVICE, "service.version": __version__}
    res = OtlpExport(
        runs=runs,
        spans=len(spans),
        include_content=include_content,
        endpoint=url,
        out=str(out) if out is not None else None,
        dry_run=dry_run,
    )
    if dry_run:
        return res
    if url is not None:
        otlp.send(spans, url, resource=resource, scope=SCOPE, timeout=timeout)
        res.sent = True
    if out is not None or url is None:
        doc = otlp.to_json(spans, resource, SCOPE)
        if out is not None:
            atomic_write_text(out, json.dumps(doc, indent=1, ensure_ascii=False) + "\n")
            res.written = True
        else:  # neither --endpoint nor --out: the caller prints it
            res.document = doc
    return res


__all__ = ["SERVICE", "OtlpExport", "export_otlp"]
