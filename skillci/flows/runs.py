"""The run index as ``skillci trace ls`` reads it, light enough for its start-up path (no
pydantic, no typer: design 260): :func:`list_runs` reads the SQLite index, or the store when
the index cannot answer. Re-exports the index's shapes the table renders."""

from __future__ import annotations

from pathlib import Path

from skillci.trace.enums import AgentRole
from skillci.trace.index import RUN_COLUMNS, RunRow, default_home, read_runs

TYPE_CHECKING = False  # typing is not imported at run time (start-up, design 260)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["RUN_COLUMNS", "AgentRole", "RunRow", "default_home", "list_runs", "read_runs"]


def list_runs(home: Path | None, **filters: Any) -> tuple[Path, list[RunRow]]:
    """The store root and its index rows matching ``filters``; read by
    :func:`skillci.trace.index.read_runs`, or by the store when that cannot."""
    root = (home if home is not None else default_home()).resolve()
    rows = read_runs(root / "index.sqlite", **filters)
    if rows is None:
        from skillci.trace.store import TraceStore

        rows = [RunRow(**dict(s)) for s in TraceStore(root).query(**filters)]
    return root, rows
