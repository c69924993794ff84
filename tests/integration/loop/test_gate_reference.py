"""``gate --teacher``: the teacher and the skill-free student as reference sides (GCR)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillci.flows.context import RepoContext
from skillci.flows.gate import GateOptions, gate_id, run_gate
from skillci.trace.models import AgentRole
from tests.conftest import ROOT
from tests.integration.loop.conftest import git, write_suites

SUITES = ("validation",)
#: two validation tasks are enough to see four sides and the gap closure rate; the verdict
#: (likely inconclusive at this size) only has to be the same with and without references
REFERENCE_SUITES = {"validation": ["py-page-count", "cfg-two-typos-server"]}


@pytest.fixture
def restored(scratch: Path) -> Path:
    """Branch ``restore`` puts finish.report-success back into the scratch skill."""
    write_suites(scratch, REFERENCE_SUITES)
    git(scratch, "commit", "-qam", "two validation tasks")
    git(scratch, "checkout", "-q", "-b", "restore")
    rules = Path("skills/repo-debugger/skillci/rules/finish.yaml")
    shutil.copyfile(ROOT / rules, scratch / rules)
    git(scratch, "add", "-A")
    git(scratch, "commit", "-qm", "restore finish.report-success")
    git(scratch, "checkout", "-q", "main")
    return scratch


def test_teacher_and_baseline_sides_give_the_gap_closure_rate(restored: Path) -> None:
    ctx = RepoContext.open(restored)
    opts = GateOptions(
        skill="repo-debugger", base="main", head="restore", suites=SUITES, repeat=1,
        teacher="sim/teacher",
    )  # fmt: skip
    report = run_gate(ctx, opts)
    plain = run_gate(ctx, GateOptions(**{**vars(opts), "teacher": None}))

    # references inform; they never change the verdict or a check
    assert report.gate_id != plain.gate_id
    assert report.verdict == plain.verdict and report.checks == plain.checks
    assert plain.suites[0].metrics.gcr_head.value is None

    for suite in report.suites:
        m = suite.metrics
        assert set(m.sides) == {"base", "head", "teacher", "baseline"}
        head, base_line, teacher = (
            m.sides[s].pass_rate.mean_reward for s in ("head", "baseline", "teacher")
        )
        if teacher != base_line:
            assert m.gcr_head.value == pytest.approx((head - base_line) / (teacher - base_line))
    val = report.suites[0].metrics
    # the sim teacher solves every validation task; the skill-free student does not
    assert val.sides["teacher"].pass_rate.pass_rate == 1.0
    assert val.sides["baseline"].pass_rate.pass_rate < val.sides["head"].pass_rate.pass_rate
    assert val.gcr_head.value is not None and val.gcr_head.value > 0

    # evidence: teacher trajectories for the side-by-side viewer; neither reference loads a skill
    for task, sides in report.evidence.items():
        for rid in sides["teacher"]:
            rec = ctx.store.get(rid)
            assert rec.agent_role is AgentRole.teacher and rec.task_id == task
            assert rec.runtime.skill is None
        for rid in sides["baseline"]:
            assert ctx.store.get(rid).runtime.skill is None

    again = run_gate(ctx, opts)  # references are cached like every other trial
    assert again.trials_run == 0 and again.model_calls == 0
    assert again.gate_id == report.gate_id == gate_id(opts, report.base_sha, report.head_sha)
