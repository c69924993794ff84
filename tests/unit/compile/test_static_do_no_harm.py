"""Design 414 (issue 33 item 1): a capability sentence never becomes a numbered step, a
quick-reference section stays in the bootstrap, and the bootstrap after a compile that
moved sections is smaller than the source's (a rule that would grow it is left out,
saying so). Synthetic skills, written for these tests."""

from __future__ import annotations

from skillci.compile.mdtext import parse_doc
from skillci.compile.profile import ModelProfile
from skillci.compile.static import (
    CORE_TITLES,
    ParagraphPlan,
    StaticPlan,
    StaticResult,
    compile_static,
    paragraph_plan,
)
from skillci.compile.static_rewrite import is_capability, is_step, plan_problem
from skillci.skill.package import SKILL_MD
from tests.unit.compile.test_static_invariants import pkg_of, profile

FILLER = "The value of a shelf slot is an integer index into the table of slots. " * 40


def student(*, skips_verification: bool) -> ModelProfile:
    base = profile()
    rate = 1.0 if skips_verification else 0.0
    traits = base.traits.model_copy(update={"verification_skip_rate": rate})
    return base.model_copy(update={"traits": traits})


def compiled(body: str, *, skips_verification: bool = True) -> StaticResult:
    return compile_static(pkg_of(body), student(skips_verification=skips_verification))


# ---------------------------------------------------------------------------- (a) capability

CAPABILITY = (
    "Create, update, and archive shelf slots of any size (small, large, custom). "
    "Export slot statistics for a whole shelf."
)


def test_a_series_of_verbs_is_a_capability_not_a_step() -> None:
    assert is_capability("Create, update, and archive shelf slots of any size.")
    assert is_capability("Read, write or convert shelf files.")
    assert not is_step("Create, update, and archive shelf slots of any size.")
    # one instruction with a comma later on is still a step
    assert not is_capability("Run the tests, then fix what fails.")
    assert not is_capability("Read the file, edit it, and save it.")
    assert is_step("Read the file, edit it, and save it.")


def test_a_capability_paragraph_stays_prose_in_the_deterministic_plan() -> None:
    assert paragraph_plan(0, 0, CAPABILITY) is None
    # the same shape with plain instructions still becomes steps
    assert paragraph_plan(0, 0, "Read the ticket. Create the branch.") is not None


def test_a_planner_may_not_number_a_capability_sentence() -> None:
    plan = ParagraphPlan(section=0, block=0, steps=[[0], [1]])
    assert plan_problem(CAPABILITY, plan) is not None
    two = "Export the slot table. Create, update, and archive shelf slots of any size."
    assert plan_problem(two, plan) == (
        "a capability summary (a series of verbs) would become a step"
    )


def test_compile_leaves_a_capability_description_word_for_word() -> None:
    body = f"## Core capabilities\n\n### 1. Slots\n\n{CAPABILITY}\n"
    res = compiled(body, skips_verification=False)
    assert CAPABILITY in res.package.text(SKILL_MD)
    assert not [r for s in res.report.sections for r in s.rewritten if r.kind == "steps"]
    # and a hybrid plan that numbers it is refused by the guard of the plan
    pkg = pkg_of(body)
    (sec,) = [s for s in parse_doc(pkg.text(SKILL_MD)).sections if s.title == "1. Slots"]
    block = next(i for i, b in enumerate(sec.blocks) if b.kind == "para")
    hybrid = StaticPlan(
        source="model",
        paragraphs=[ParagraphPlan(section=sec.index, block=block, steps=[[0], [1]])],
    )
    res2 = compile_static(pkg, student(skips_verification=False), plan=hybrid)
    assert CAPABILITY in res2.package.text(SKILL_MD)
    (rep,) = [s for s in res2.report.sections if s.title == "1. Slots"]
    assert rep.status == "rolled_back" and "summary" in " ".join(rep.reasons)


# ---------------------------------------------------------------------------- (b) quick ref


def test_a_quick_reference_or_cheat_sheet_is_core() -> None:
    for title in ("Quick Reference", "Quick-reference", "Cheat sheet", "Commands at a glance"):
        assert CORE_TITLES.search(title), title


def test_a_quick_reference_section_stays_in_the_bootstrap_when_others_move() -> None:
    table = "| Task | Command |\n|---|---|\n" + "".join(
        f"| slot {i} | `shelf get {i}` |\n" for i in range(40)
    )
    body = f"## Quick Reference\n\n{table}\n## Slot internals\n\n{FILLER}\n"
    res = compiled(body, skips_verification=False)
    where = {s.title: s.placement for s in res.report.sections if s.file == SKILL_MD}
    assert where["Slot internals"].startswith("moved to "), where
    assert where["Quick Reference"] == "kept"
    assert table in res.package.text(SKILL_MD)


# ---------------------------------------------------------------------------- (c) growth


def test_a_rule_that_would_grow_the_bootstrap_past_the_source_is_left_out() -> None:
    # a small movable section: moving it saves fewer tokens than the verification rule costs
    short = "The value of a shelf slot is an integer index into the table of slots. " * 3
    body = f"## Workflow details\n\n{FILLER}\n\n## Slot history\n\n{short}\n"
    src = pkg_of(body)
    res = compiled(body)
    rep = res.report
    moves = [o for o in rep.ops if o.kind == "move_on_demand" and o.applied]
    rule = next(o for o in rep.ops if o.kind == "verification_rule")
    assert moves, rep.ops  # the section did move
    assert not rule.applied
    assert "not added" in rule.detail and "grow" in rule.detail
    assert any("left out verification rule" in n for n in rep.notes), rep.notes
    assert rep.bootstrap_after < rep.bootstrap_before
    assert rep.self_check is not None and rep.self_check.bootstrap_ok
    assert not any(r.rule.id == "static.verify-before-done" for r in res.package.rules)
    assert src.content_hash != res.package.content_hash


def test_the_rule_is_added_when_the_moves_leave_room_for_it() -> None:
    body = f"## Workflow details\n\n{FILLER}\n\n## Slot history\n\n{FILLER}\n"
    res = compiled(body)
    rule = next(o for o in res.report.ops if o.kind == "verification_rule")
    assert rule.applied, rule.detail
    assert res.report.bootstrap_after < res.report.bootstrap_before
    assert any(r.rule.id == "static.verify-before-done" for r in res.package.rules)


def test_the_rule_is_added_when_nothing_moved() -> None:
    res = compiled("## Notes\n\nRead the ticket.\n")
    rule = next(o for o in res.report.ops if o.kind == "verification_rule")
    assert rule.applied
    assert res.report.self_check is not None and res.report.self_check.bootstrap_ok
