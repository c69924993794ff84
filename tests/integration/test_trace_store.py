"""The trace store on a real filesystem and a real SQLite index, with concurrent writers."""

from __future__ import annotations

import json
import multiprocessing
import sqlite3
from datetime import timedelta
from pathlib import Path

import pytest
from pydantic import BaseModel

from skillci.errors import ConflictError, InvalidInputError
from skillci.trace.models import AgentRole, ModelInfo, ToolResultEvent
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore, default_home
from tests.unit.trace.helpers import T0, make_record

SECRET_KEY = "sk-proj-" + "Zz9Yy8Xx7Ww6Vv5Uu4Tt3Ss2"
SECRET_ENV_VALUE = "plain-env-secret-value-7731"


def _grep_store(root: Path, needle: str) -> list[Path]:
    hits = []
    for p in root.rglob("*"):
        if p.is_file() and needle.encode() in p.read_bytes():
            hits.append(p)
    return hits


def test_put_get_and_immutable_file(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "s", redactor=Redactor(env={}))
    rec = make_record()
    res = store.put(rec)
    assert res.created
    assert res.path == tmp_path / "s" / "records" / res.digest[:2] / f"{res.digest}.json"
    assert res.path.stat().st_mode & 0o222 == 0  # read-only on disk
    assert store.get(rec.run_id) == rec
    assert store.get(rec.run_id[:-2]) == rec  # unique prefix
    # stored bytes are canonical JSON
    assert json.loads(res.path.read_bytes())["run_id"] == rec.run_id
    # same record again: no-op; different content under the same id: conflict
    again = store.put(rec)
    assert not again.created
    assert again.digest == res.digest
    with pytest.raises(ConflictError, match="immutable"):
        store.put(make_record(final_output="something else"))
    assert store.count() == 1
    assert len(list((tmp_path / "s" / "records").rglob("*.json"))) == 2  # orphan is harmless


def test_secrets_never_reach_disk(tmp_path: Path) -> None:
    root = tmp_path / "s"
    store = TraceStore(root, redactor=Redactor(env={"VENDOR_API_KEY": SECRET_ENV_VALUE}))
    events = list(make_record().events)
    events[4] = ToolResultEvent(
        step=4, call_id="c1", output=f"env: VENDOR_API_KEY={SECRET_ENV_VALUE}\nkey {SECRET_KEY}"
    )
    rec = make_record(
        events=events,
        final_output=f"Authorization: Bearer {SECRET_KEY}",
        model=ModelInfo(route="sim/student", params={"api_key": "tiny"}),
        metadata={"note": f"password={SECRET_ENV_VALUE}"},
    )
    store.put(rec)

    class Report(BaseModel):
        text: str

    store.put_blob("gate-report", Report(text=f"leaked {SECRET_KEY}"), key="g1")
    for needle in (SECRET_KEY, SECRET_ENV_VALUE, '"tiny"'):
        assert _grep_store(root, needle) == [], needle
    stored = store.get(rec.run_id)
    assert "[REDACTED:" in (stored.final_output or "")
    assert store.get_blob("gate-report", "g1", Report).text == "leaked [REDACTED:api_key]"


def test_queries(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "s", redactor=Redactor(env={}))
    specs = [
        ("r1", "t1", "student", "sim/student", "discovery", False, 0),
        ("r2", "t1", "teacher", "sim/teacher", "discovery", True, 1),
        ("r3", "t2", "student", "sim/student", "validation", True, 2),
        ("r4", "t2", "oracle", "oracle", "validation", True, 3),
    ]
    for rid, task, role, route, split, passed, hours in specs:
        store.put(
            make_record(
                rid,
                task_id=task,
                agent_role=role,
                model=ModelInfo(route=route),
                split=split,
                passed=passed,
                created_at=T0 + timedelta(hours=hours),
                trial_cache_key=f"key-{rid}",
            )
        )
    ids = lambda rows: [r.run_id for r in rows]  # noqa: E731
    assert ids(store.query()) == ["r4", "r3", "r2", "r1"]
    assert ids(store.query(newest_first=False, limit=2)) == ["r1", "r2"]
    assert ids(store.query(task_id="t1")) == ["r2", "r1"]
    assert ids(store.query(agent_role=AgentRole.student)) == ["r3", "r1"]
    assert ids(store.query(agent_role="teacher")) == ["r2"]
    assert ids(store.query(model_route="sim/student", split="validation")) == ["r3"]
    assert ids(store.query(skill_hash="a" * 64)) == ["r4", "r3", "r2", "r1"]
    assert ids(store.query(skill_hash="f" * 64)) == []
    assert ids(store.query(trial_cache_key="key-r2")) == ["r2"]
    assert ids(store.query(state="passed")) == ["r4", "r3", "r2"]
    assert ids(store.query(since=T0 + timedelta(hours=1), until=T0 + timedelta(hours=3))) == [
        "r3",
        "r2",
    ]
    assert [r.task_id for r in store.records(split="discovery")] == ["t1", "t1"]
    with pytest.raises(InvalidInputError, match="ambiguous"):
        store.resolve("r")
    with pytest.raises(InvalidInputError, match="no run"):
        store.get("zzz")


def test_reindex_rebuilds_from_files(tmp_path: Path) -> None:
    root = tmp_path / "s"
    store = TraceStore(root, redactor=Redactor(env={}))
    for i in range(3):
        store.put(make_record(f"r{i}"))
    (root / "index.sqlite").unlink()
    for extra in ("index.sqlite-wal", "index.sqlite-shm"):
        (root / extra).unlink(missing_ok=True)
    fresh = TraceStore(root, redactor=Redactor(env={}))
    assert fresh.count() == 0
    assert fresh.reindex() == 3
    assert sorted(r.run_id for r in fresh.query()) == ["r0", "r1", "r2"]
    assert fresh.reindex() == 3  # idempotent
    assert fresh.count() == 3


def test_blobs(tmp_path: Path) -> None:
    class Gate(BaseModel):
        schema_version: int = 1
        verdict: str

    store = TraceStore(tmp_path / "s", redactor=Redactor(env={}))
    k = store.put_blob("gate-report", Gate(verdict="accept"))
    assert len(k) == 64
    assert store.put_blob("gate-report", Gate(verdict="accept")) == k
    store.put_blob("gate-report", Gate(verdict="reject"), key="pr-7")
    with pytest.raises(ConflictError):
        store.put_blob("gate-report", Gate(verdict="accept"), key="pr-7")
    store.put_blob("gate-report", Gate(verdict="accept"), key="pr-7", replace=True)
    assert store.get_blob("gate-report", "pr-7", Gate).verdict == "accept"
    assert set(store.list_blobs("gate-report")) == {k, "pr-7"}
    with pytest.raises(InvalidInputError):
        store.get_blob_json("gate-report", "nope")
    with pytest.raises(InvalidInputError):
        store.put_blob("../x", Gate(verdict="a"))


def test_index_is_wal(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "s", redactor=Redactor(env={}))
    store.put(make_record())
    conn = sqlite3.connect(tmp_path / "s" / "index.sqlite")
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_default_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "a" / "b").mkdir(parents=True)
    monkeypatch.delenv("SKILLCI_HOME", raising=False)
    assert default_home(repo / "a" / "b") == repo.resolve() / ".skillci"
    monkeypatch.chdir(repo / "a")
    assert TraceStore().root == repo.resolve() / ".skillci"
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "elsewhere"))
    assert TraceStore().root == (tmp_path / "elsewhere").resolve()


# ---------------------------------------------------------------------------- concurrency

WRITERS = 4
PER_WRITER = 25
SHARED = 5  # records every writer puts (identical content): must be stored once


def _writer(root: str, worker: int) -> int:
    store = TraceStore(Path(root), redactor=Redactor(env={}))
    for i in range(PER_WRITER):
        store.put(make_record(f"w{worker}-r{i}", task_id=f"t{i % 3}"))
        if i < SHARED:
            store.put(make_record(f"shared-{i}"))
        if i % 10 == 0:
            store.query(task_id="t1")
    return worker


def test_concurrent_writers(tmp_path: Path) -> None:
    root = tmp_path / "s"
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(WRITERS) as pool:
        done = pool.starmap(_writer, [(str(root), w) for w in range(WRITERS)])
    assert sorted(done) == list(range(WRITERS))
    store = TraceStore(root, redactor=Redactor(env={}))
    assert store.count() == WRITERS * PER_WRITER + SHARED
    files = list((root / "records").rglob("*.json"))
    assert len(files) == WRITERS * PER_WRITER + SHARED
    assert not list(root.rglob("*.tmp"))
    conn = sqlite3.connect(root / "index.sqlite")
    try:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()
    for s in store.query(task_id="t2", limit=5):
        assert store.get(s.run_id).task_id == "t2"


_KILL_WRITER = """
import sys
from pathlib import Path
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore
from tests.unit.trace.helpers import make_record
store = TraceStore(Path(sys.argv[1]), redactor=Redactor(env={}))
i = 0
while True:
    store.put(make_record(f"k-{i}", final_output="x" * 20000))
    if i == 3:
        print("ready", flush=True)
    i += 1
"""


def test_sigkill_mid_write_leaves_a_consistent_store(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys
    import time

    root = tmp_path / "s"
    repo = Path(__file__).resolve().parents[2]
    with subprocess.Popen(
        [sys.executable, "-c", _KILL_WRITER, str(root)],
        cwd=repo,
        stdout=subprocess.PIPE,
        text=True,
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "ready"
        time.sleep(0.3)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    store = TraceStore(root, redactor=Redactor(env={}))
    indexed = store.count()
    assert indexed >= 4
    for s in store.query():
        assert store.get(s.run_id).run_id == s.run_id  # every indexed record is whole
    files = list((root / "records").glob("*/*.json"))
    assert len(files) in (indexed, indexed + 1)  # at most one file written, not yet indexed
    assert store.reindex() == len(files)
    assert store.count() == len(files)
