"""Static compile never changes meaning: the cases issue 13 found on real skills."""

from __future__ import annotations

from skillci.compile.mdtext import inline_spans, markup, split_sentences
from skillci.compile.profile import MeasuredTraits, ModelProfile
from skillci.compile.static import compile_static
from skillci.compile.static_rewrite import rewrite_markdown, rewrite_vague_text
from skillci.skill.package import SKILL_MD
from skillci.skill.porting import import_plain

FM = "---\nname: meaning\ndescription: Cases where a rewrite would change meaning.\n---\n"


def _rewrite(body: str) -> tuple[str, list[str]]:
    out, reports = rewrite_markdown(FM + body, SKILL_MD, None, has_frontmatter=True)
    return out[len(FM) :], [f for r in reports for f in r.flags]


def test_conditions_are_kept_and_flagged_not_swapped() -> None:
    body = (
        "## Fonts\n\nType: a display face, a body face, and a utility face for captions or "
        "data if needed.\n\n## Cleanup\n\nRun the cleanup script. Only perform if necessary "
        "or requested.\n\n## Baseline\n\nRead the old version. Use your judgment on what "
        "makes sense as the baseline.\n"
    )
    out, flags = _rewrite(body)
    for phrase in ("data if needed", "if necessary or requested", "Use your judgment on what"):
        assert phrase in out
    assert "when a check fails" not in out and "follow the steps of this skill" not in out
    # the imperative one is flagged for a person; descriptive prose is left alone
    assert flags == [
        "vague 'Use your judgment' kept: a replacement would change the condition; write "
        "the concrete condition or action"
    ]


def test_a_replacement_that_keeps_the_condition_applies_only_to_instructions() -> None:
    said = rewrite_vague_text("Make sure the output is correct.")
    assert said.text.startswith("Confirm the output by running the check the task names")
    described = rewrite_vague_text("The old tool did not make sure the output is correct.")
    assert described.text == "The old tool did not make sure the output is correct."
    bold = rewrite_vague_text("Run it, and **make sure the output is correct**.")
    assert "**make sure the output is correct**" in bold.text
    assert bold.flags and "inside bold, italic or link text" in bold.flags[0]


def test_steps_never_split_inside_bold_links_or_code() -> None:
    para = (
        "**Use the Edit tool for the replacement. Do not write Python scripts.** Run the "
        "tests after [the setup. See the guide](docs/setup.md). Open `a. B` next. Check it.\n"
    )
    sentences, _ = split_sentences(para)
    assert sentences[0] == (
        "**Use the Edit tool for the replacement. Do not write Python scripts.**"
    )
    out, _ = _rewrite("## Editing\n\n" + para)
    assert "1. **Use the Edit tool for the replacement. Do not write Python scripts.**\n" in out
    assert set(markup(out, has_frontmatter=False)) == set(
        markup("## Editing\n\n" + para, has_frontmatter=False)
    )
    assert ("link", "[the setup. See the guide](docs/setup.md)") in inline_spans(out)


def _big_skill(body: str) -> str:
    filler = "The catalogue lists every option this tool has. " * 120
    return (
        FM + "\n# Big\n\n## Workflow\n\nRun the tool.\n\n" + body + f"\n## Appendix\n\n{filler}\n"
    )


def _moved(text: str) -> tuple[list[str], str]:
    pkg = import_plain({SKILL_MD: text.encode()}, source="meaning")
    profile = ModelProfile(
        route="sim/student",
        model="sim/student",
        context_window=4096,
        harness="skillci-builtin",
        source="runs",
        traits=MeasuredTraits(runs=3, bootstrap_sensitivity=-0.2),
    )
    res = compile_static(pkg, profile)
    moved = [o.detail for o in res.report.ops if o.kind == "move_on_demand" and o.applied]
    return moved, res.package.text(SKILL_MD)


def test_a_staged_procedure_and_marked_lines_stay_in_the_bootstrap() -> None:
    long = "This stage reads many inputs and writes many outputs. " * 40
    stages = "".join(f"## Stage {i}: part {i}\n\n{long}\n\n" for i in (1, 2, 3))
    marked = f"## Output format\n\n{long}\n\nIMPORTANT: write the report as JSON.\n\n"
    grouped = f"## Migration guide\n\n### 1. Export\n\n{long}\n\n### 2. Import\n\n{long}\n\n"
    moved, boot = _moved(_big_skill(stages + marked + grouped))
    assert any("'Appendix'" in m for m in moved)  # the budget does force moves
    for title in ("Stage 1", "Stage 2", "Stage 3", "Output format", "Migration guide"):
        assert not any(f"'{title}" in m for m in moved), title
        assert f"## {title}" in boot
    assert "IMPORTANT: write the report as JSON." in boot


def test_the_report_lists_what_was_left_for_a_person() -> None:
    from skillci.flows.pipeline.reports import static_markdown

    text = (
        FM
        + "\n# S\n\n## Rules\n\nKeep the change small and use the appropriate tools when necessary.\n"
    )
    pkg = import_plain({SKILL_MD: text.encode()}, source="meaning")
    profile = ModelProfile(
        route="sim/student", model="sim/student", harness="skillci-builtin", source="config"
    )
    md = static_markdown(compile_static(pkg, profile).report)
    assert "## Left for a person\n\n- SKILL.md § Rules: vague 'use the appropriate tools" in md


def test_constraints_in_any_case_or_language_stages_and_link_targets_stay() -> None:
    long = "This part reads many inputs and writes many outputs. " * 40
    body = (
        f"## When NOT to use\n\n{long}\n\nDo not use it on binary files.\n\n"
        f"## Guardrails\n\n{long}\n\n"
        f"## 하지 말 것\n\n{long}\n\n"
        f"## Phase 6a: deploy\n\n{long}\n\n"
        "## Criteria\n\nSee [Success Criteria](#success-criteria) before you stop.\n\n"
        f"## Success Criteria\n\n{long}\n\n"
        f"## Background notes\n\n{long}\n\nwe never tested old versions; you must not care.\n\n"
    )
    moved, boot = _moved(_big_skill(body))
    assert any("'Appendix'" in m for m in moved)  # the budget does force moves
    for title in (
        "When NOT to use",
        "Guardrails",
        "하지 말 것",
        "Phase 6a: deploy",
        "Success Criteria",
        "Background notes",
    ):
        assert not any(f"'{title}'" in m for m in moved), title
        assert f"## {title}" in boot
