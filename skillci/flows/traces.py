"""The work of ``skillci trace`` on the trace store: query, show, export as ATIF, reindex,
ingest production records (JSONL) and import other harnesses' trials. Re-exports the run
record's shapes the command renders."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillci.errors import UsageError
from skillci.release.production import IngestResult, ingest, parse_jsonl
from skillci.trace.importers.common import ImportReport, summarize
from skillci.trace.models import (
    AgentRole,
    ErrorEvent,
    Event,
    MessageEvent,
    RunRecord,
    SkillLoadEvent,
    ToolCallEvent,
    ToolResultEvent,
)
from skillci.trace.store import RunSummary, TraceStore

__all__ = [
    "AgentRole",
    "ErrorEvent",
    "Event",
    "IngestResult",
    "MessageEvent",
    "RunRecord",
    "SkillLoadEvent",
    "ToolCallEvent",
    "ToolResultEvent",
    "atif_of",
    "get_run",
    "import_trials",
    "ingest_file",
    "query_runs",
    "reindex",
]


def query_runs(home: Path | None, **filters: Any) -> tuple[Path, list[RunSummary]]:
    """The store root and its runs matching ``filters`` (``trace ls --json``)."""
    store = TraceStore(home)
    return store.root, store.query(**filters)


def get_run(home: Path | None, run_id: str) -> RunRecord:
    """One run record by id or unique prefix."""
    return TraceStore(home).get(run_id)


def atif_of(home: Path | None, run_id: str) -> tuple[RunRecord, dict[str, Any]]:
    """A run record and its ATIF trajectory."""
    from skillci.trace.atif import to_atif

    rec = get_run(home, run_id)
    return rec, to_atif(rec)


@dataclass(frozen=True)
class Reindexed:
    """What ``trace reindex`` did (or, dry, would index)."""

    root: Path
    record_files: int
    indexed: int | None = None
    total: int | None = None


def reindex(home: Path | None, *, dry_run: bool) -> Reindexed:
    """Rebuild the SQLite index from the record files (dry: count them)."""
    store = TraceStore(home)
    if dry_run:
        return Reindexed(store.root, len(list(store.records_dir.glob("*/*.json"))))
    n = store.reindex()
    return Reindexed(store.root, n, n, store.count())


def ingest_file(home: Path | None, file: Path, *, dry_run: bool) -> tuple[Path, IngestResult]:
    """Store the production run records of a JSONL file, the whole file validated first
    (dry: validate only)."""
    store = TraceStore(home)
    if dry_run:
        return store.root, IngestResult(path=str(file), records=len(parse_jsonl(file)))
    return store.root, ingest(store, file)


def import_trials(
    directory: Path, fmt: str, role: AgentRole, home: Path | None, *, dry_run: bool
) -> ImportReport:
    """Import the trials another harness wrote (or agent session logs) as run records and
    store the new ones (dry: read and convert only)."""
    if not directory.is_dir() and not (
        fmt in ("claude-code", "codex", "opencode") and directory.is_file()
    ):
        raise UsageError(f"{directory}: not a directory", hint="give the --jobs-dir of the run")
    importer = importlib.import_module(f"skillci.trace.importers.{fmt.replace('-', '_')}")
    records: list[RunRecord] = importer.import_jobs(directory, role=role)
    if not records:
        raise UsageError(
            f"{directory}: nothing to import as {fmt}: {importer.LAYOUT}",
            hint="check --format (benchflow, harbor, claude-code, codex or opencode) and give the jobs dir the harness wrote",
        )
    report = summarize(fmt, directory, records)
    if not dry_run:
        store = TraceStore(home)
        for rec in records:
            if store.put(rec).created:
                report.stored += 1
            else:
                report.already += 1
    return report
