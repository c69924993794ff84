"""Flaky from history against a real SQLite trace store (skillci.flows.gate.store_history)."""

from __future__ import annotations

from pathlib import Path

from skillci.flows.gate import store_history
from skillci.trace.models import EvalState, ModelInfo, RunRecord, RuntimeInfo, SkillRef
from skillci.trace.store import TraceStore
from tests.builders import run_record

SKILL, TASK = "a" * 64, "t" * 64


def rec(run_id: str, task: str, passed: bool, **kw: object) -> RunRecord:
    return run_record(
        run_id=run_id,
        task_id=task,
        passed=passed,
        state=kw.get("state"),  # type: ignore[arg-type]
        model=ModelInfo(route=str(kw.get("model", "sim/student"))),
        runtime=RuntimeInfo(
            harness="skillci-agent",
            skill=SkillRef(name="s", version="1.0.0", content_hash=str(kw.get("skill", SKILL))),
            task_hash=str(kw.get("task_hash", TASK)),
        ),
    )


def test_store_history_finds_flips_of_the_same_key_only(tmp_path: Path) -> None:
    store = TraceStore(tmp_path / "home")
    for r in [
        rec("flip-pass", "flip", True),
        rec("flip-fail", "flip", False),
        rec("steady-1", "steady", True),
        rec("steady-2", "steady", True),
        rec("other-skill", "steady", False, skill="b" * 64),
        rec("other-model", "steady", False, model="sim/student-noisy"),
        rec("edited-task", "edited", True),
        rec("edited-task-2", "edited", False, task_hash="u" * 64),
        rec("errored", "err", True),
        rec("errored-2", "err", False, state=EvalState.infra_error),
        rec("now-pass", "now", True),
        rec("now-fail", "now", False),
    ]:
        store.put(r)
    hashes = {t: TASK for t in ("flip", "steady", "edited", "err", "now")}
    found = store_history(
        TraceStore(tmp_path / "home"),  # a fresh handle: everything comes from SQLite + blobs
        skill_hash=SKILL,
        model="sim/student",
        task_hashes=hashes,
        current=["now-pass", "now-fail"],
    )
    assert set(found) == {"flip"}
    h = found["flip"]
    assert (h.passed, h.failed, h.earlier) == (1, 1, 2)
    assert sorted(h.runs) == ["flip-fail", "flip-pass"]
    # the current gate's own flip counts once an earlier run of that task exists
    store.put(rec("now-earlier", "now", True))
    again = store_history(
        store,
        skill_hash=SKILL,
        model="sim/student",
        task_hashes=hashes,
        current=["now-pass", "now-fail"],
    )
    assert set(again) == {"flip", "now"} and again["now"].earlier == 1
