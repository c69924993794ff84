"""Reading the runs index (``index.sqlite``) with plain ``sqlite3`` and dataclasses.

:class:`skillci.trace.store.TraceStore` owns the index (it creates, writes and migrates
it) and builds its queries here; :func:`read_runs` reads matching rows without pydantic,
so ``skillci trace ls`` starts fast (issue 17: a few times ``python -c pass``). This
module imports only the standard library and :mod:`skillci.trace.enums`.
"""

from __future__ import annotations

import os
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

from skillci.trace.enums import AgentRole, EvalState

TYPE_CHECKING = False  # no typing/dataclasses at run time: ``trace ls`` start-up (design 260)
if TYPE_CHECKING:
    from typing import Any

HOME_ENV = "SKILLCI_HOME"
DEFAULT_DIRNAME = ".skillci"
INDEX_SCHEMA_VERSION = 1
BUSY_TIMEOUT_MS = 60_000

#: The columns of a runs-index row, in :class:`RunRow` (and ``RunSummary``) field order.
RUN_COLUMNS = (
    "run_id",
    "digest",
    "task_id",
    "agent_role",
    "model_route",
    "skill_name",
    "skill_version",
    "skill_hash",
    "split",
    "suite",
    "repeat_index",
    "trial_cache_key",
    "state",
    "passed",
    "reward",
    "created_at",
)


def find_repo_root(start: Path | None = None) -> Path | None:
    """Nearest ancestor of ``start`` (default: cwd) holding ``.git``, or None."""
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        if (d / ".git").exists():
            return d
    return None


def default_home(start: Path | None = None) -> Path:
    """``$SKILLCI_HOME``, else ``<repo root>/.skillci``, else ``<cwd>/.skillci``."""
    env = os.environ.get(HOME_ENV)
    if env:
        return Path(env).expanduser().resolve()
    base = find_repo_root(start) or (start or Path.cwd()).resolve()
    return base / DEFAULT_DIRNAME


def iso_utc(dt: datetime) -> str:
    """How the index stores a time: ISO 8601 in UTC with microseconds (sorts as text)."""
    return dt.astimezone(UTC).isoformat(timespec="microseconds")


class RunRow:
    """One row of the runs index, as ``skillci trace ls`` shows it (the fields of
    ``skillci.trace.store.RunSummary``, without validation). Immutable; compares by value.
    A plain class, not a dataclass: ``dataclasses`` imports ``inspect``, a sizeable part of
    ``trace ls``'s start-up."""

    __slots__ = RUN_COLUMNS

    run_id: str
    digest: str
    task_id: str
    agent_role: AgentRole
    model_route: str
    skill_name: str | None
    skill_version: str | None
    skill_hash: str | None
    split: str | None
    suite: str | None
    repeat_index: int
    trial_cache_key: str | None
    state: EvalState
    passed: bool
    reward: float | None
    created_at: datetime

    def __init__(self, **fields: Any) -> None:
        if set(fields) != set(RUN_COLUMNS):
            missing = set(RUN_COLUMNS) - set(fields)
            extra = set(fields) - set(RUN_COLUMNS)
            raise TypeError(f"RunRow: missing {sorted(missing)}, unexpected {sorted(extra)}")
        for name in RUN_COLUMNS:
            object.__setattr__(self, name, fields[name])

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"RunRow is immutable (cannot set {name})")

    def _values(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in RUN_COLUMNS)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, RunRow) and self._values() == other._values()

    def __hash__(self) -> int:
        return hash(self._values())

    def __repr__(self) -> str:
        return "RunRow(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in RUN_COLUMNS) + ")"

    @classmethod
    def from_db(cls, row: tuple[Any, ...]) -> RunRow:
        """A row of :func:`runs_sql`'s result."""
        d = dict(zip(RUN_COLUMNS, row, strict=True))
        d["agent_role"] = AgentRole(d["agent_role"])
        d["state"] = EvalState(d["state"])
        d["passed"] = bool(d["passed"])
        d["reward"] = None if d["reward"] is None else float(d["reward"])
        d["created_at"] = datetime.fromisoformat(d["created_at"])
        return cls(**d)


def runs_sql(
    *,
    task_id: str | None = None,
    agent_role: AgentRole | str | None = None,
    model_route: str | None = None,
    skill_hash: str | None = None,
    skill_name: str | None = None,
    split: str | None = None,
    suite: str | None = None,
    trial_cache_key: str | None = None,
    state: EvalState | str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    limit: int | None = None,
    newest_first: bool = True,
) -> tuple[str, list[Any]]:
    """The SELECT (and its bound values) for index rows matching every given filter."""
    where: list[str] = []
    args: list[Any] = []
    for col, val in (
        ("task_id", task_id),
        ("agent_role", AgentRole(agent_role).value if agent_role is not None else None),
        ("model_route", model_route),
        ("skill_hash", skill_hash),
        ("skill_name", skill_name),
        ("split", split),
        ("suite", suite),
        ("trial_cache_key", trial_cache_key),
        ("state", EvalState(state).value if state is not None else None),
    ):
        if val is not None:
            where.append(f"{col} = ?")
            args.append(val)
    if since is not None:
        where.append("created_at >= ?")
        args.append(iso_utc(since))
    if until is not None:
        where.append("created_at < ?")
        args.append(iso_utc(until))
    # Column names and operators are constants; values are bound parameters.
    sql = f"SELECT {', '.join(RUN_COLUMNS)} FROM runs"  # noqa: S608
    if where:
        sql += " WHERE " + " AND ".join(where)
    sql += f" ORDER BY created_at {'DESC' if newest_first else 'ASC'}, run_id"
    if limit is not None:
        sql += " LIMIT ?"
        args.append(int(limit))
    return sql, args


def read_runs(index_path: Path, **filters: Any) -> list[RunRow] | None:
    """Index rows matching ``filters`` (see :func:`runs_sql`), read without creating,
    migrating or locking anything. ``[]`` when there is no index; None when the index is
    not one this module can read as is (no tables yet, another index schema version, a
    SQLite error): then ask :meth:`skillci.trace.store.TraceStore.query`, which creates,
    checks and reports."""
    if not index_path.exists():  # reading never creates a store
        return []
    sql, args = runs_sql(**filters)
    try:
        conn = sqlite3.connect(index_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            conn.execute("BEGIN")
            version = conn.execute(
                "SELECT value FROM meta WHERE key='index_schema_version'"
            ).fetchone()
            if version is None or str(version[0]) != str(INDEX_SCHEMA_VERSION):
                return None
            rows = conn.execute(sql, args).fetchall()
            conn.execute("COMMIT")
        finally:
            conn.close()
    except sqlite3.Error:
        return None
    return [RunRow.from_db(r) for r in rows]


__all__ = [
    "BUSY_TIMEOUT_MS",
    "DEFAULT_DIRNAME",
    "HOME_ENV",
    "INDEX_SCHEMA_VERSION",
    "RUN_COLUMNS",
    "RunRow",
    "default_home",
    "find_repo_root",
    "iso_utc",
    "read_runs",
    "runs_sql",
]
