"""Invocation of the skill under test: read from trajectories, rated per side, flagged per
task in the gate report."""

from __future__ import annotations

from skillci.gate.metrics import compute_metrics
from skillci.gate.outcomes import to_outcome
from skillci.present.report import render_markdown
from skillci.trace.invocation import invocation
from skillci.trace.models import MessageEvent, SkillLoadEvent, ToolCallEvent
from tests.unit.gate.report_fixture import build_report, make_run


def _with(rec, events):  # type: ignore[no-untyped-def]
    evs = [e.model_copy(update={"step": i}) for i, e in enumerate(events)]
    return rec.model_copy(update={"events": evs})


def test_invocation_is_read_from_skill_loads_and_reads_of_skill_md() -> None:
    rec = make_run("t1", "head", 0, True, suite="validation")
    msg = MessageEvent(step=0, role="user", content="fix it", untrusted=False)
    boot = SkillLoadEvent(step=0, path="SKILL.md", on_demand=False)
    inv = invocation(_with(rec, [msg, boot]))
    assert inv is not None and inv.loaded and inv.first_step == 1 and not inv.on_demand
    read = ToolCallEvent(
        step=0, tool="read_file", call_id="c1", arguments={"path": "/skills/repo-debugger/SKILL.md"}
    )
    inv = invocation(_with(rec, [msg, msg, read]))
    assert inv is not None and inv.loaded and inv.first_step == 2 and inv.on_demand
    assert inv.evidence == ["step 2: repo-debugger/SKILL.md"]
    other = ToolCallEvent(
        step=0, tool="run", call_id="c2", arguments={"cmd": "cat /skills/pdf/SKILL.md"}
    )
    inv = invocation(_with(rec, [msg, other]))
    assert inv is not None and not inv.loaded and inv.first_step is None
    teacher = make_run("t1", "teacher", 0, True, suite="validation")
    assert invocation(teacher) is None


def test_rates_per_side_and_tasks_that_never_load_it() -> None:
    msg = MessageEvent(step=0, role="user", content="fix it", untrusted=False)
    boot = SkillLoadEvent(step=0, path="SKILL.md", on_demand=False)
    outs = []
    for task, head_loads in (("a", [True, True]), ("b", [False, False]), ("c", [True, False])):
        for r, loads in enumerate(head_loads):
            rec = make_run(task, "head", r, True, suite="v")
            outs.append(to_outcome(_with(rec, [msg, boot] if loads else [msg]), "head"))
            outs.append(
                to_outcome(_with(make_run(task, "base", r, True, suite="v"), [msg, boot]), "base")
            )
        outs.append(to_outcome(make_run(task, "teacher", 0, True, suite="v"), "teacher"))
    m = compute_metrics(outs, n_boot=50)
    assert m.sides["base"].invocation_rate == 1.0 and m.sides["base"].never_invoked == []
    assert m.sides["head"].invocation_rate == 3 / 6
    assert m.sides["head"].never_invoked == ["b"]
    assert m.sides["teacher"].invocation_rate is None


def test_the_report_shows_invocation_per_side() -> None:
    text = render_markdown(build_report().report)
    assert "Skill invocation (trials that loaded it): base 100.0%, head 100.0%." in text
    assert "Never loaded the skill" not in text
