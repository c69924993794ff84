"""Static compile: the rewrites, the guard, the plan, and the byte-exact guarantees."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from skillci.compile.literals import literals
from skillci.compile.mdtext import parse, parse_doc, split_sentences
from skillci.compile.profile import MeasuredTraits, ModelProfile
from skillci.compile.static import (
    ParagraphPlan,
    StaticPlan,
    compile_static,
    deterministic_plan,
    is_imperative,
)
from skillci.compile.static_guard import guard_section
from skillci.compile.vague_replacements import CURATED, curated_texts, rewrite_vague
from skillci.skill.lint import lint
from skillci.skill.package import SKILL_MD, SkillPackage, read_tree
from skillci.skill.porting import import_plain
from skillci.skill.render import render
from skillci.skill.vague import VAGUE_PHRASES, find_vague
from tests.conftest import PLAIN_FIXTURES, ROOT

TASK_SKILL = (
    ROOT / "evals" / "tasks" / "py-shelf-slots" / "environment" / "skills" / "python-ci-fix"
)


def profile(**traits: object) -> ModelProfile:
    measured = bool(traits)
    return ModelProfile(
        route="sim/student",
        model="sim/student",
        context_window=32768,
        harness="skillci-builtin",
        source="runs" if measured else "config",
        traits=MeasuredTraits(runs=3 if measured else 0, **traits),  # type: ignore[arg-type]
    )


def plain(folder: Path) -> SkillPackage:
    return import_plain(read_tree(folder), source=folder.name)


def fences(text: str) -> Counter[str]:
    return Counter(c for s in parse_doc(text).sections for c in s.code_blocks)


# ---------------------------------------------------------------------------- pieces


def test_markdown_parse_is_lossless_and_keeps_fenced_headings_inside_code() -> None:
    text = (PLAIN_FIXTURES / "anthropic-pdf" / "SKILL.md").read_text()
    doc = parse_doc(text)
    assert doc.text == text
    body = "intro\n\n## A\n\n```md\n# not a heading\n```\n\n## B\ntext\n"
    secs = parse(body)
    assert [s.title for s in secs] == ["", "A", "B"]
    assert secs[1].code_blocks == ["```md\n# not a heading\n```\n"]
    assert "".join(s.text for s in secs) == body


def test_sentences_split_outside_code_spans_and_rejoin_exactly() -> None:
    text = "Run `a. B` now. Then check it!  Next, 读取日志。然后修复。\n"
    sents, seps = split_sentences(text)
    assert sents == ["Run `a. B` now.", "Then check it!", "Next, 读取日志。", "然后修复。"]
    assert "".join(s + p for s, p in zip(sents, seps, strict=True)) == text


def test_literals_cover_paths_commands_flags_numbers_identifiers_urls() -> None:
    got = literals(
        "Run `pytest -x` on src/a.py with --track-changes=all, 3 times, see "
        "https://docs.python.org/3/ and call pypdf.PdfReader or load_config().\n1. Step one"
    )
    assert {
        "`pytest -x`",
        "src/a.py",
        "--track-changes=all",
        "3",
        "https://docs.python.org/3/",
        "pypdf.PdfReader",
        "load_config()",
    } <= set(got)
    assert "1" not in got  # a list marker is structure


def test_every_lint_vague_pattern_has_a_curated_check_free_of_literals_and_vagueness() -> None:
    assert len(CURATED) == len(VAGUE_PHRASES)
    for text in curated_texts():
        assert not literals(text), text
        assert not find_vague(text), text


@pytest.mark.parametrize(
    "text",
    [
        "Carefully analyze the log.",
        "Make sure the output is correct.",
        "Use the appropriate tools when necessary, and handle errors flexibly.",
        "Run the necessary validation if needed; use your best judgment as appropriate.",
        "Consider everything. Do a thorough review with a minimal-risk change.",
        "仔细分析日志，确保修复正确，必要时使用工具，视情况灵活处理，充分理解，综合考虑。",
    ],
)
def test_rewrite_vague_leaves_no_lint_hit(text: str) -> None:
    out, hits = rewrite_vague(text)
    assert hits and not find_vague(out)


def test_imperative_detection() -> None:
    assert is_imperative("Read `ci.log` first.")
    assert is_imperative("Then, run the test.")
    assert is_imperative("Carefully analyze the function.")
    assert is_imperative("Never edit tests.")
    assert not is_imperative("The project uses Python 3.11.")


# ---------------------------------------------------------------------------- the task skill


def test_task_skill_compiles_to_steps_checks_and_a_verification_rule() -> None:
    pkg = plain(TASK_SKILL)
    vague = [f for f in lint(pkg).findings if f.code == "SK010"]
    assert len(vague) == 3  # three vague phrases (warnings: the publisher's own prose)
    res = compile_static(pkg, profile(verification_skip_rate=1.0))
    text = res.package.text(SKILL_MD)
    assert "1. Read `ci.log` and note the failing test id.\n" in text
    assert "Make sure" not in text and "carefully" not in text.lower()
    # "when necessary" is the condition itself: kept and flagged for a person, not swapped
    assert "use the appropriate tools when necessary" in text
    assert lint(res.package).errors == 0  # lint warns on an imported skill's own prose
    assert [(f.code, f.severity) for f in lint(res.package).findings if f.code == "SK010"] == [
        ("SK010", "warning")
    ]
    flags = [f for s in res.report.sections for f in s.flags]
    assert flags == [
        "vague 'use the appropriate tools when necessary' kept: a replacement would change "
        "the condition; write the concrete condition or action"
    ]
    rewritten = [r for s in res.report.sections for r in s.rewritten]
    assert [(r.kind, r.before[:30]) for r in rewritten] == [
        ("steps", "Read `ci.log` and note the fai"),
        ("vague", "Carefully analyze the function"),
        ("vague", "Make sure the fix is correct."),
    ]
    # the Rules paragraph is a prohibition and a condition ("when necessary"): prose, as is
    assert "Do not edit files under `tests/`. Keep the change minimal and use" in text
    ops = {o.kind: o for o in res.report.ops}
    assert ops["verification_rule"].applied
    boot = render(res.package).file(SKILL_MD)
    assert boot is not None and b"rerun_the_check_the_task_names_after_every_edit" in boot.content
    # frontmatter and the code block are byte-exact
    assert text.startswith(parse_doc(pkg.text(SKILL_MD)).frontmatter)
    assert fences(text) == fences(pkg.text(SKILL_MD))


def test_no_verification_rule_without_measured_runs() -> None:
    res = compile_static(plain(TASK_SKILL), profile())
    assert not res.report.ops
    assert any("no measured runs" in n for n in res.report.notes)


def test_existing_covering_rule_is_not_duplicated(repo_debugger: Path) -> None:
    pkg = SkillPackage.from_dir(repo_debugger)
    res = compile_static(pkg, profile(verification_skip_rate=1.0))
    (op,) = [o for o in res.report.ops if o.kind == "verification_rule"]
    assert not op.applied and "already covers" in op.detail


def test_over_budget_bootstrap_moves_reference_sections_on_demand() -> None:
    pkg = plain(TASK_SKILL)
    big = "\n## Appendix\n\n" + "The value of a shelf slot is an integer index. " * 100 + "\n"
    pkg = pkg.with_files({SKILL_MD: pkg.files[SKILL_MD] + big.encode()})
    res = compile_static(pkg, profile(bootstrap_sensitivity=-0.2))
    moves = [o for o in res.report.ops if o.kind == "move_on_demand" and o.applied]
    assert moves and "skillci/workflows/appendix.md" in res.package.files
    assert "## Appendix" not in res.package.text(SKILL_MD)
    assert "## Workflow" in res.package.text(SKILL_MD)  # procedure stays
    assert res.report.bootstrap_after <= res.report.bootstrap_budget < res.report.bootstrap_before
    rendered = render(res.package).file(SKILL_MD)
    assert rendered is not None and b"`skillci/workflows/appendix.md`" in rendered.content


def test_real_world_fixtures_keep_frontmatter_code_and_literals() -> None:
    for folder in ("anthropic-pdf", "anthropic-webapp-testing"):
        pkg = plain(PLAIN_FIXTURES / folder)
        res = compile_static(pkg, profile(verification_skip_rate=0.5))
        before, after = pkg.text(SKILL_MD), res.package.text(SKILL_MD)
        assert after.startswith(parse_doc(before).frontmatter)
        assert fences(after) == fences(before)
        assert not literals(before) - literals(after), folder
        for rel in pkg.files:  # bundled files untouched
            if rel != SKILL_MD:
                assert res.package.files[rel] == pkg.files[rel]


# ---------------------------------------------------------------------------- guard + plans


def test_guard_names_each_kind_of_damage() -> None:
    (sec,) = parse("## S\n\nRun `make test` on src/a.py 3 times. Check it.\n\n```sh\nls\n```\n")
    (ok,) = parse(
        "## S\n\n1. Run `make test` on src/a.py 3 times.\n2. Check it.\n\n```sh\nls\n```\n"
    )
    assert guard_section(sec, ok) == []
    cases = {
        "heading changed": "## T\n\nRun `make test` on src/a.py 3 times. Check it.\n\n```sh\nls\n```\n",
        "code blocks changed": "## S\n\nRun `make test` on src/a.py 3 times. Check it.\n\n```sh\nls -l\n```\n",
        "literal(s) lost": "## S\n\nRun the tests on src/a.py 3 times. Check it.\n\n```sh\nls\n```\n",
        "new literal": "## S\n\nRun `make test` on src/a.py 3 times. Check it with --all.\n\n```sh\nls\n```\n",
        "step coverage": "## S\n\nRun `make test` on src/a.py 3 times.\n\n```sh\nls\n```\n",
        "new vague": "## S\n\nRun `make test` on src/a.py 3 times. Check it as appropriate.\n\n```sh\nls\n```\n",
    }
    for want, text in cases.items():
        (bad,) = parse(text)
        assert any(want in r for r in guard_section(sec, bad)), want


def test_a_plan_that_drops_a_sentence_rolls_the_section_back() -> None:
    pkg = plain(TASK_SKILL)
    det = deterministic_plan(pkg.text(SKILL_MD))
    wf = next(p for p in det.paragraphs if p.steps and len(p.steps) >= 3)
    bad = StaticPlan(
        source="model",
        paragraphs=[
            ParagraphPlan(section=wf.section, block=wf.block, steps=[s for s in wf.steps[:-1]])
        ],
    )
    res = compile_static(pkg, profile(), mode="hybrid", plan=bad, planner="fake/planner")
    (rb,) = res.report.rolled_back
    assert rb.title == "Workflow" and any("drop a sentence" in r for r in rb.reasons)
    src = parse_doc(pkg.text(SKILL_MD)).sections[wf.section].text
    assert src in res.package.text(SKILL_MD)  # the original, byte for byte


def test_a_model_plan_that_merges_two_instructions_into_one_step_is_refused() -> None:
    pkg = plain(TASK_SKILL)
    det = deterministic_plan(pkg.text(SKILL_MD))
    wf = next(p for p in det.paragraphs if len(p.steps) >= 3)
    ids = [i for s in wf.steps for i in s]
    for steps, ok in (([ids[:2], ids[2:]], False), ([[i] for i in ids], True)):
        plan = StaticPlan(
            source="model",
            paragraphs=[
                ParagraphPlan(section=wf.section, block=wf.block, intro=wf.intro, steps=steps)
            ],
        )
        res = compile_static(pkg, profile(), mode="hybrid", plan=plan, planner="fake/planner")
        text = res.package.text(SKILL_MD)
        if ok:
            assert not res.report.rolled_back
            assert "1. Read `ci.log` and note the failing test id.\n2. Open the source" in text
        else:
            (rb,) = res.report.rolled_back
            assert any("merge two sentences" in r for r in rb.reasons), rb.reasons
            assert "Read `ci.log` and note the failing test id. Open the source file" in text
