"""The trace store: immutable content-addressed JSON files plus a SQLite index.

Layout under the store root (``.skillci/`` in the repo by default, ``$SKILLCI_HOME`` or an
explicit argument otherwise)::

    records/ab/abcdef…json      one RunRecord, redacted, named by the sha256 of its bytes
    blobs/<kind>/cd/cdef…json   other saved models (GateReports…), same rule
    index.sqlite                runs and blobs tables: the queryable index

The files are the truth; the index is derived and can be rebuilt with :meth:`reindex`
(e.g. after copying record files from CI shards into one store). Writes are safe for
several processes at once: a record file is written atomically (temp + fsync + rename) and
its name is its content hash, so two writers of the same record write the same bytes; the
index uses WAL mode, a busy timeout and ``BEGIN IMMEDIATE`` transactions. A run id is
stored once: putting the same record again is a no-op, putting a *different* record under
an existing run id raises :class:`~skillci.errors.ConflictError`.

Every record and blob passes :class:`~skillci.trace.redact.Redactor` before its bytes exist.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillci.errors import ConflictError, InternalError, InvalidInputError
from skillci.fsutil import atomic_write_bytes, sha256_bytes
from skillci.trace.index import (
    BUSY_TIMEOUT_MS,
    DEFAULT_DIRNAME,
    HOME_ENV,
    INDEX_SCHEMA_VERSION,
    RUN_COLUMNS,
    default_home,
    find_repo_root,
    iso_utc,
    runs_sql,
)
from skillci.trace.models import AgentRole, EvalState, RunRecord
from skillci.trace.redact import Redactor

M = TypeVar("M", bound=BaseModel)

_KIND_CHARS = frozenset("abcdefghijklmnopqrstuvwxyz0123456789-_")


def canonical_json(data: Any) -> bytes:
    """Deterministic JSON bytes (sorted keys, no spaces, UTF-8): what gets hashed and stored."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode(
        "utf-8"
    )


class RunSummary(BaseModel):
    """One row of the runs index (what ``skillci trace ls`` shows)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str = Field(description="Run id.")
    digest: str = Field(description="sha256 of the stored record file.")
    task_id: str = Field(description="Task id.")
    agent_role: AgentRole = Field(description="student, teacher, oracle, production.")
    model_route: str = Field(description="Model route.")
    skill_name: str | None = Field(default=None, description="Skill name.")
    skill_version: str | None = Field(default=None, description="Skill version.")
    skill_hash: str | None = Field(default=None, description="Skill content hash.")
    split: str | None = Field(default=None, description="Split.")
    suite: str | None = Field(default=None, description="Suite.")
    repeat_index: int = Field(description="Repeat index.")
    trial_cache_key: str | None = Field(default=None, description="Trial cache key.")
    state: EvalState = Field(description="Evaluation state.")
    passed: bool = Field(description="Whether the verifier passed it.")
    reward: float | None = Field(default=None, description="Reward.")
    created_at: datetime = Field(description="When the record was made (UTC).")


class PutResult(BaseModel):
    """What :meth:`TraceStore.put` did."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    digest: str
    path: Path
    created: bool = Field(description="False when the identical record was already stored.")


_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs (
    run_id TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    task_id TEXT NOT NULL,
    agent_role TEXT NOT NULL,
    model_route TEXT NOT NULL,
    skill_name TEXT,
    skill_version TEXT,
    skill_hash TEXT,
    split TEXT,
    suite TEXT,
    repeat_index INTEGER NOT NULL,
    trial_cache_key TEXT,
    state TEXT NOT NULL,
    passed INTEGER NOT NULL,
    reward REAL,
    created_at TEXT NOT NULL,
    stored_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS runs_task ON runs(task_id, created_at);
CREATE INDEX IF NOT EXISTS runs_skill ON runs(skill_hash);
CREATE INDEX IF NOT EXISTS runs_model ON runs(model_route);
CREATE INDEX IF NOT EXISTS runs_role ON runs(agent_role);
CREATE INDEX IF NOT EXISTS runs_split ON runs(split);
CREATE INDEX IF NOT EXISTS runs_cache ON runs(trial_cache_key);
CREATE INDEX IF NOT EXISTS runs_created ON runs(created_at);
CREATE TABLE IF NOT EXISTS blobs (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    digest TEXT NOT NULL,
    model TEXT NOT NULL,
    stored_at TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
"""


def _now() -> str:
    return iso_utc(datetime.now(UTC))


class TraceStore:
    """Run records and blobs under one root. Cheap to construct; one per process is fine."""

    def __init__(self, root: Path | None = None, *, redactor: Redactor | None = None) -> None:
        self.root = (root if root is not None else default_home()).resolve()
        self.redactor = redactor if redactor is not None else Redactor()
        self.records_dir = self.root / "records"
        self.blobs_dir = self.root / "blobs"
        self.index_path = self.root / "index.sqlite"
        self._initialized = False

    # ------------------------------------------------------------------ sqlite

    @contextmanager
    def _db(self, *, write: bool = False) -> Iterator[sqlite3.Connection]:
        self.root.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(
            self.index_path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None
        )
        try:
            conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            if not self._initialized:
                self._init(conn)
            conn.execute("BEGIN IMMEDIATE" if write else "BEGIN")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")
        finally:
            conn.close()

    def _wal(self, conn: sqlite3.Connection) -> str:
        """Put the index in WAL mode. On a new index two processes can race to switch it,
        and SQLite answers the loser "database is locked" at once, without its busy
        handler (a lock upgrade it cannot wait for): retry for the busy timeout."""
        deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
        pause = 0.01
        while True:
            try:
                return str(conn.execute("PRAGMA journal_mode=WAL").fetchone()[0])
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                    raise
            time.sleep(pause)
            pause = min(pause * 2, 0.2)

    def _init(self, conn: sqlite3.Connection) -> None:
        mode = self._wal(conn)
        if str(mode).lower() != "wal":  # pragma: no cover - filesystems without shm support
            raise InternalError(f"cannot put {self.index_path} in WAL mode (got {mode})")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("BEGIN IMMEDIATE")
        for stmt in _SCHEMA.split(";"):
            if stmt.strip():
                conn.execute(stmt)
        row = conn.execute("SELECT value FROM meta WHERE key='index_schema_version'").fetchone()
        if row is None:
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('index_schema_version', ?)",
                (str(INDEX_SCHEMA_VERSION),),
            )
        elif int(row[0]) != INDEX_SCHEMA_VERSION:
            conn.execute("ROLLBACK")
            raise InternalError(
                f"{self.index_path} has index schema {row[0]}, this skillci expects "
                f"{INDEX_SCHEMA_VERSION}",
                hint="run `skillci trace reindex` or remove index.sqlite (records are kept)",
            )
        conn.execute("COMMIT")
        self._initialized = True

    # ------------------------------------------------------------------ records

    def record_path(self, digest: str) -> Path:
        return self.records_dir / digest[:2] / f"{digest}.json"

    def _write_immutable(self, path: Path, data: bytes) -> bool:
        """Write once; an existing file with this content-addressed name is left alone."""
        if path.exists():
            return False
        atomic_write_bytes(path, data)
        path.chmod(0o444)
        return True

    def put(self, record: RunRecord, *, redacted: bool = False) -> PutResult:
        """Redact (unless the caller has: ``redacted``), write the record file (once), index
        it. Idempotent for identical records."""
        clean = record if redacted else self.redactor.redact_model(record)
        data = canonical_json(clean.model_dump(mode="json"))
        digest = sha256_bytes(data)
        path = self.record_path(digest)
        self._write_immutable(path, data)
        created = self._index_run(clean, digest)
        return PutResult(run_id=clean.run_id, digest=digest, path=path, created=created)

    def _index_run(self, rec: RunRecord, digest: str) -> bool:
        skill = rec.runtime.skill
        row = (
            rec.run_id,
            digest,
            rec.schema_version,
            rec.task_id,
            rec.agent_role.value,
            rec.model.route,
            skill.name if skill else None,
            skill.version if skill else None,
            skill.content_hash if skill else None,
            rec.split,
            rec.suite,
            rec.repeat_index,
            rec.trial_cache_key,
            rec.evaluation.state.value,
            int(rec.evaluation.passed),
            rec.evaluation.reward,
            iso_utc(rec.created_at),
            _now(),
        )
        with self._db(write=True) as conn:
            existing = conn.execute(
                "SELECT digest FROM runs WHERE run_id=?", (rec.run_id,)
            ).fetchone()
            if existing is not None:
                if existing[0] != digest:
                    raise ConflictError(
                        f"run {rec.run_id} is already stored with different content "
                        f"({existing[0][:12]} != {digest[:12]}); run records are immutable",
                        hint="give the new trial a new run_id (skillci.trace.models.new_run_id)",
                    )
                return False
            marks = ",".join("?" * len(row))
            conn.execute(f"INSERT INTO runs VALUES ({marks})", row)  # noqa: S608 - fixed text
        return True

    def _read_record(self, digest: str) -> RunRecord:
        path = self.record_path(digest)
        try:
            return RunRecord.model_validate_json(path.read_bytes())
        except FileNotFoundError:
            raise InternalError(
                f"index names record {digest[:12]} but {path} is missing",
                hint="run `skillci trace reindex` to rebuild the index from the record files",
            ) from None
        except ValidationError as exc:
            raise InternalError(
                f"{path} is not a valid RunRecord: {exc.errors()[0]['msg']}"
            ) from None

    def resolve(self, run_id: str) -> str:
        """Full run id for an exact id or a unique prefix (as typed on the command line)."""
        if not self.index_path.exists():
            raise InvalidInputError(
                f"no trace store at {self.root}", hint="run an eval first, or pass --home"
            )
        with self._db() as conn:
            exact = conn.execute("SELECT run_id FROM runs WHERE run_id=?", (run_id,)).fetchone()
            if exact:
                return str(exact[0])
            like = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
            rows = conn.execute(
                "SELECT run_id FROM runs WHERE run_id LIKE ? ESCAPE '\\' LIMIT 6", (like + "%",)
            ).fetchall()
        if len(rows) == 1:
            return str(rows[0][0])
        if not rows:
            raise InvalidInputError(
                f"no run {run_id!r} in {self.root}", hint="list runs with `skillci trace ls`"
            )
        names = ", ".join(r[0] for r in rows[:5])
        raise InvalidInputError(f"run id prefix {run_id!r} is ambiguous: {names}, ...")

    def get(self, run_id: str) -> RunRecord:
        """The stored record of ``run_id`` (exact id or unique prefix)."""
        full = self.resolve(run_id)
        with self._db() as conn:
            row = conn.execute("SELECT digest FROM runs WHERE run_id=?", (full,)).fetchone()
        return self._read_record(str(row[0]))

    def query(
        self,
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
    ) -> list[RunSummary]:
        """Index rows matching every given filter, newest first by default."""
        sql, args = runs_sql(
            task_id=task_id,
            agent_role=agent_role,
            model_route=model_route,
            skill_hash=skill_hash,
            skill_name=skill_name,
            split=split,
            suite=suite,
            trial_cache_key=trial_cache_key,
            state=state,
            since=since,
            until=until,
            limit=limit,
            newest_first=newest_first,
        )
        if not self.index_path.exists():  # reading never creates a store
            return []
        with self._db() as conn:
            rows = conn.execute(sql, args).fetchall()
        return [RunSummary.model_validate(dict(zip(RUN_COLUMNS, r, strict=True))) for r in rows]

    def run_ids_by_key(self, keys: list[str]) -> dict[str, set[str]]:
        """Run ids indexed under each of ``keys`` (trial cache keys), in one transaction:
        what the scheduler asks for every cached trial of a command at once."""
        out: dict[str, set[str]] = {}
        if not keys or not self.index_path.exists():
            return out
        with self._db() as conn:
            for i in range(0, len(keys), 500):
                chunk = keys[i : i + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT trial_cache_key, run_id FROM runs WHERE trial_cache_key IN ({marks})"  # noqa: S608
                for key, run_id in conn.execute(sql, chunk):
                    out.setdefault(str(key), set()).add(str(run_id))
        return out

    def records(self, **filters: Any) -> list[RunRecord]:
        """Full records for :meth:`query` filters."""
        return [self._read_record(s.digest) for s in self.query(**filters)]

    def count(self) -> int:
        if not self.index_path.exists():
            return 0
        with self._db() as conn:
            return int(conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0])

    def reindex(self) -> int:
        """Rebuild the runs index from the record files (the truth). Returns records indexed."""
        n = 0
        for path in sorted(self.records_dir.glob("*/*.json")):
            data = path.read_bytes()
            digest = sha256_bytes(data)
            if path.stem != digest:
                raise InternalError(f"{path} does not match its content hash; it was modified")
            rec = RunRecord.model_validate_json(data)
            self._index_run(rec, digest)
            n += 1
        return n

    # ------------------------------------------------------------------ blobs

    def _blob_path(self, kind: str, digest: str) -> Path:
        return self.blobs_dir / kind / digest[:2] / f"{digest}.json"

    @staticmethod
    def _check_kind(kind: str) -> None:
        if not kind or not set(kind) <= _KIND_CHARS:
            raise InvalidInputError(
                f"blob kind {kind!r} must be lowercase letters, digits, '-' and '_'"
            )

    def put_blob(
        self, kind: str, model: BaseModel, *, key: str | None = None, replace: bool = False
    ) -> str:
        """Store a redacted model under ``(kind, key)``; returns the key.

        ``key`` defaults to the content digest. Putting different content under an existing
        key raises :class:`ConflictError` unless ``replace`` is true (the old file stays on
        disk; only the index moves).
        """
        self._check_kind(kind)
        clean = self.redactor.redact_model(model)
        data = canonical_json(clean.model_dump(mode="json"))
        digest = sha256_bytes(data)
        key = key if key is not None else digest
        self._write_immutable(self._blob_path(kind, digest), data)
        model_name = f"{type(model).__module__}.{type(model).__qualname__}"
        with self._db(write=True) as conn:
            row = conn.execute(
                "SELECT digest FROM blobs WHERE kind=? AND key=?", (kind, key)
            ).fetchone()
            if row is not None and row[0] != digest and not replace:
                raise ConflictError(
                    f"blob {kind}/{key} already holds other content",
                    hint="use a new key or pass replace=True",
                )
            conn.execute(
                "INSERT OR REPLACE INTO blobs(kind, key, digest, model, stored_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (kind, key, digest, model_name, _now()),
            )
        return key

    def get_blob_json(self, kind: str, key: str) -> Any:
        """The stored JSON of ``(kind, key)``; :class:`InvalidInputError` if absent."""
        self._check_kind(kind)
        with self._db() as conn:
            row = conn.execute(
                "SELECT digest FROM blobs WHERE kind=? AND key=?", (kind, key)
            ).fetchone()
        if row is None:
            raise InvalidInputError(f"no blob {kind}/{key} in {self.root}")
        return json.loads(self._blob_path(kind, str(row[0])).read_bytes())

    def get_blob(self, kind: str, key: str, model: type[M]) -> M:
        """The stored blob validated as ``model``."""
        return model.model_validate(self.get_blob_json(kind, key))

    def list_blobs(self, kind: str) -> list[str]:
        """Keys of ``kind``, oldest first."""
        self._check_kind(kind)
        with self._db() as conn:
            rows = conn.execute(
                "SELECT key FROM blobs WHERE kind=? ORDER BY stored_at, key", (kind,)
            ).fetchall()
        return [str(r[0]) for r in rows]


__all__ = [
    "DEFAULT_DIRNAME",
    "HOME_ENV",
    "PutResult",
    "RunSummary",
    "TraceStore",
    "canonical_json",
    "default_home",
    "find_repo_root",
]
