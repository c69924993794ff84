"""``skillci report GATE_ID --html DIR``: load a gate report's evidence runs from the trace
store, render the page (pure, :mod:`skillci.present.html`) and write ``DIR/index.html``
atomically."""

from __future__ import annotations

from pathlib import Path

from skillci.errors import InvalidInputError, SkillciError
from skillci.flows.context import RepoContext
from skillci.fsutil import atomic_write_text
from skillci.gate.verdict import GateReport
from skillci.present.html import referenced_run_ids, render_html
from skillci.trace.models import RunRecord
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore

INDEX = "index.html"


def load_records(
    store: TraceStore, run_ids: list[str]
) -> tuple[dict[str, RunRecord], dict[str, str]]:
    """(records found, run id -> why not shown). A missing or unreadable record is shown
    on the page as such; it does not stop the report."""
    found: dict[str, RunRecord] = {}
    missing: dict[str, str] = {}
    for rid in run_ids:
        try:
            found[rid] = store.get(rid)
        except SkillciError as exc:
            missing[rid] = exc.message
    return found, missing


def write_html(ctx: RepoContext, report: GateReport, out_dir: Path) -> Path:
    """Write the self-contained HTML report to ``out_dir/index.html``; returns its path."""
    if out_dir.exists() and not out_dir.is_dir():
        raise InvalidInputError(
            f"--html {out_dir} is a file", hint="pass a directory; index.html is written in it"
        )
    records, missing = load_records(ctx.store, referenced_run_ids(report))
    redactor = Redactor()  # records were redacted when stored; the report and page are not
    records = {rid: redactor.redact_model(r) for rid, r in records.items()}
    page = redactor.redact_text(
        render_html(redactor.redact_model(report), records, unavailable=missing)
    )
    path = out_dir / INDEX
    atomic_write_text(path, page)
    return path
