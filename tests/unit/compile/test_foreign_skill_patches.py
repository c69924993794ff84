"""Template patches for a skill that is not the bundled fixture (issue 29): written from
generic templates in the skill's own area, with the task's check — never with the bundled
repo-debugger's text; and every one of them passes the limits the gate enforces and the
gate's change guard, as it passed propose's own guard."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from skillci.analyze.taxonomy import TAXONOMY, FailureClass, is_compilable
from skillci.compile import CompileInput, TemplateCompiler, check_patch
from skillci.compile.rule_templates import CLASS_TEMPLATES, RULE_BASES
from skillci.compile.skill_view import builds_on_fixture, procedure
from skillci.gate.change_guard import guard_change
from skillci.patch.findings import walk_strings
from skillci.patch.limits import token_growth
from skillci.skill.package import SkillPackage, read_executables, read_tree
from skillci.skill.porting import import_plain
from skillci.skill.render import render
from skillci.trace.models import RunRecord
from tests.unit.analyze.traj import T
from tests.unit.compile.test_template import make_diagnosis
from tests.unit.skill.helpers import bundled

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "fixtures" / "real-skills"
COMPILABLE = [c for c in TAXONOMY if is_compilable(c)]
#: Three small non-debugging skills of the corpus (any skill works; these keep it fast).
SKILLS = ("anthropics/brand-guidelines", "anthropics/internal-comms", "obra/brainstorming")
CHECKS = ("python -m json.tool",)


def _fixture_texts() -> set[str]:
    """Every rule text of the bundled fixture and its rule bases (class names excluded:
    they are skillci's taxonomy, not the fixture's words)."""
    out: set[str] = set()
    pkg = bundled()
    for lr in pkg.rules:
        pairs: list[tuple[str, str]] = []
        walk_strings(lr.rule.model_dump(mode="json", exclude_none=True), "", pairs)
        out |= {t for f, t in pairs if not f.startswith((".provenance", ".status", ".id"))}
    for b in RULE_BASES.values():
        out |= {*b.steps, *b.trigger_all, *b.trigger_any, *b.validation, *b.anti_patterns}
    for t in CLASS_TEMPLATES.values():
        out |= {*t.required, *t.reinforce, *t.validation}
    out |= set(RULE_BASES)  # the fixture's rule ids
    return {t for t in out if len(t) > 12} - {c.value for c in FailureClass}


def _load(rel: str) -> SkillPackage:
    folder = CORPUS / rel
    return import_plain(read_tree(folder), executable=read_executables(folder), source=rel)


def _teacher() -> RunRecord:
    return (
        T("teacher", "run-teacher-1", task="task-calc")
        .write("config.json", content='{"a": 1}')
        .run("python3 -m json.tool config.json > /dev/null", 0, "")
        .say("done")
        .build(passed=True)
    )


@pytest.mark.parametrize("rel", SKILLS)
def test_no_fixture_text_in_another_skills_patch(rel: str) -> None:
    pkg = _load(rel)
    assert not builds_on_fixture(pkg)
    fixture = _fixture_texts()
    teacher = _teacher()
    for cls in COMPILABLE:
        req = CompileInput(
            diagnosis=make_diagnosis(cls, pkg),
            package=pkg,
            teacher=teacher,
            checks=CHECKS,
        )
        out = TemplateCompiler().compile(req)
        pairs: list[tuple[str, str]] = []
        for op in out.patch.ops:
            walk_strings(op.model_dump(mode="json", exclude_none=True), "", pairs)
        texts = [t for _, t in pairs]
        leaked = sorted({f for f in fixture for t in texts if f in t})
        assert not leaked, (cls.value, leaked)
        area = pkg.manifest.name
        rule_ids = [t for f, t in pairs if f.endswith(".id")]
        assert all(r.startswith(area + ".") for r in rule_ids), (cls.value, rule_ids)
        # the patch passes propose's checks, hence the gate's limits and change guard
        check, applied = check_patch(pkg, out.patch, [])
        assert check.ok and applied is not None, (cls.value, check.problems())
        before, after = applied.before.manifest, applied.after
        lim = {r.limit: r for r in (check.limits.results if check.limits else [])}
        assert lim["token_growth"].ok
        tg = token_growth(
            render(pkg).bootstrap_tokens,
            render(after).bootstrap_tokens,
            max_growth=before.release_gate.max_token_growth,
            max_added=before.patch_limits.max_added_tokens,
        )
        assert tg.passed, (cls.value, tg.value)
        verdict, findings = guard_change(pkg, after)
        # what propose's guard said, the gate's change guard says (a rule about secrets
        # needs a person on both sides)
        assert verdict == check.guard_verdict, (cls.value, [f.message for f in findings])
        assert verdict in ("pass", "needs-approval")


def test_the_check_the_teacher_used_is_in_the_verification_rule() -> None:
    pkg = _load(SKILLS[0])
    req = CompileInput(
        diagnosis=make_diagnosis(FailureClass.missing_validation, pkg),
        package=pkg,
        teacher=_teacher(),
        checks=CHECKS,
    )
    rule = yaml.safe_dump(TemplateCompiler().compile(req).patch.ops[0].model_dump(mode="json"))
    assert "after_every_write_run_the_check `python -m json.tool <file>`" in rule


def test_the_bundled_fixture_keeps_its_own_templates() -> None:
    assert builds_on_fixture(bundled())


def test_the_llm_compiler_prompt_shows_the_skills_own_procedure() -> None:
    from skillci.compile.llm import compile_messages

    pkg = _load(SKILLS[2])
    view = procedure(pkg)
    steps = view["steps"]
    assert view["sections"] and isinstance(steps, list) and steps
    req = CompileInput(
        diagnosis=make_diagnosis(FailureClass.missing_validation, pkg),
        package=pkg,
        teacher=_teacher(),
        students=[T(task="task-calc").write("config.json", content="{").say("done").build()],
        instruction="Fix config.json so that it is valid JSON.",
        checks=CHECKS,
    )
    user = compile_messages(req)[1]["content"]
    assert "The skill's own procedure" in user and str(steps[0])[:40] in user.replace("\\", "")
    assert "Fix config.json so that it is valid JSON." in user
    assert "first divergence" in user and "<<<UNTRUSTED-DATA aligned" in user


def test_token_growth_passes_a_small_bootstrap_within_the_added_limit() -> None:
    small = token_growth(257, 380, max_growth=0.25, max_added=400)
    assert small.passed and small.growth > 0.25  # +47.9%, but only 123 tokens added
    big = token_growth(4000, 5100, max_growth=0.25, max_added=400)
    assert not big.passed and "+1100 tokens" in big.value
    assert token_growth(4000, 5100, max_growth=0.25, max_added=1200).passed
    assert token_growth(0, 0, max_growth=0.25, max_added=0).passed
