"""Static compile checks itself (issue 33, design 334-336): constraints stay in the bootstrap
verbatim, links resolve, line endings are the file's own, moves shrink the bootstrap, and
numbered-step rewrites never turn a condition or a summary into a step, reorder, or merge
two lists."""

from __future__ import annotations

from skillci.compile.mdtext import parse
from skillci.compile.profile import MeasuredTraits, ModelProfile
from skillci.compile.static import (
    CORE_TITLES,
    ParagraphPlan,
    StaticPlan,
    StaticResult,
    compile_static,
    paragraph_plan,
)
from skillci.compile.static_check import (
    check_package,
    constraint_sentences,
    eol,
    missing_constraints,
)
from skillci.compile.static_rewrite import has_condition, is_rule
from skillci.flows.pipeline.reports import static_markdown
from skillci.skill.package import SKILL_MD, SkillPackage
from skillci.skill.porting import import_plain

FILLER = "The value of a shelf slot is an integer index into the table of slots. " * 60

HEAD = """---
name: shelf-tool
description: Use when working with shelf slots.
---

# Shelf tool

## Workflow

1. Read the task.
2. Run `pytest -q` and fix what fails.

"""


def profile() -> ModelProfile:
    return ModelProfile(
        route="sim/student",
        model="sim/student",
        context_window=8192,
        harness="skillci-builtin",
        source="runs",
        traits=MeasuredTraits(runs=3, bootstrap_sensitivity=-0.2),
    )


def pkg_of(body: str, extra: dict[str, bytes] | None = None, *, crlf: bool = False) -> SkillPackage:
    text = HEAD + body
    if crlf:
        text = text.replace("\n", "\r\n")
    files = {SKILL_MD: text.encode("utf-8"), **(extra or {})}
    return import_plain(files, source="shelf-tool")


def compiled(pkg: SkillPackage) -> StaticResult:
    res = compile_static(pkg, profile())
    assert res.report.self_check is not None
    return res


def placement(res: StaticResult, title: str) -> str:
    (rep,) = [s for s in res.report.sections if s.file == SKILL_MD and s.title == title]
    return rep.placement


# ---------------------------------------------------------------------------- self-check


def test_a_crlf_skill_comes_back_crlf_in_every_file_it_touches() -> None:
    body = (
        "## Notes\n\nRun the build. Check the log. Write the report.\n\n"
        f"## Appendix\n\n{FILLER}\n\n## Glossary\n\n{FILLER}\n"
    )
    pkg = pkg_of(body, crlf=True)
    assert eol(pkg.files[SKILL_MD]) == "crlf"
    res = compiled(pkg)
    moved = [p for p in res.package.files if p not in pkg.files and p.endswith(".md")]
    assert moved, "the appendix should move on demand"
    assert res.package.files[SKILL_MD] != pkg.files[SKILL_MD]
    for rel in [SKILL_MD, *moved]:
        assert eol(res.package.files[rel]) == "crlf", rel
    assert res.report.self_check is not None and not res.report.self_check.encoding_problems
    # the numbered steps are CRLF too
    assert b"1. Run the build.\r\n2. Check the log.\r\n" in res.package.files[SKILL_MD]


def test_a_link_to_a_section_keeps_it_and_a_move_that_breaks_a_link_is_undone() -> None:
    body = (
        "## Checks\n\nWhen done, compare with [the criteria](#success-criteria).\n\n"
        f"## Success Criteria\n\n{FILLER}\n\n"
        f"## Layout\n\nThe slots are listed in [the table](reference/slots.md). {FILLER}\n\n"
        f"## Appendix\n\n{FILLER}\n"
    )
    pkg = pkg_of(body, {"reference/slots.md": b"# Slots\n\nA table.\n"})
    res = compiled(pkg)
    assert placement(res, "Success Criteria") == "kept"
    assert placement(res, "Appendix").startswith("moved to ")
    # moving "Layout" to workflows/ would break its relative link: the move is undone
    assert placement(res, "Layout") == "kept"
    undone = [o for o in res.report.ops if "moved back" in o.detail]
    assert undone and any("link broken: " in p for o in undone for p in o.problems)
    chk = res.report.self_check
    assert chk is not None and chk.ok and chk.internal_links >= 2
    assert any("'Layout' moved back" in u for u in chk.undone)
    md = static_markdown(res.report)
    assert "| Appendix | moved to " in md and "| Success Criteria | kept |" in md


def test_the_check_itself_finds_a_broken_link_a_lost_constraint_and_mixed_endings() -> None:
    before = {SKILL_MD: b"# A\r\n\r\nNever push to main.\r\n\r\nSee [B](#b).\r\n\r\n## B\r\n"}
    after = {SKILL_MD: b"# A\r\n\r\nPush to main.\nSee [B](#b).\r\n", "w/b.md": b"## B\n"}
    chk = check_package(
        before, after, SKILL_MD, moved=True, bootstrap_before=10, bootstrap_after=11
    )
    assert chk.constraints_missing == ["Never push to main."]
    assert chk.links_broken == ["#b"]
    assert any("mixed" in p for p in chk.encoding_problems)
    assert any("w/b.md" in p and "crlf" in p for p in chk.encoding_problems)
    assert not chk.bootstrap_ok and not chk.ok


def test_a_korean_do_not_section_stays_in_the_bootstrap_verbatim() -> None:
    body = (
        "## 하지 말 것\n\n- 테스트를 건너뛰지 마세요.\n- 기본 브랜치에 직접 푸시하지 마세요.\n\n"
        f"## 참고 자료\n\n{FILLER}\n\n## 부록\n\n{FILLER}\n"
    )
    pkg = pkg_of(body)
    res = compiled(pkg)
    assert placement(res, "하지 말 것") == "kept"
    moved = [placement(res, "참고 자료"), placement(res, "부록")]
    assert all(m.startswith("moved to skillci/workflows/section-") for m in moved)
    assert moved[0] != moved[1]  # two CJK titles, two files
    out = res.package.text(SKILL_MD)
    assert "## 하지 말 것" in out and "- 테스트를 건너뛰지 마세요." in out
    assert "## 하지 말 것" in constraint_sentences(pkg.text(SKILL_MD))
    assert not missing_constraints(pkg.text(SKILL_MD), out)


def test_avoid_in_chinese_japanese_and_korean_is_a_constraint() -> None:
    # cangjie/cangjie-coding's moved "证据与验证" held "…避免复用二进制不兼容的旧产物。"
    text = (
        "## 证据与验证\n\n切换版本后先执行 `cjpm clean`，避免复用旧产物。\n\n"
        "## 参考\n\n请勿手改生成文件。古いキャッシュは避けてください。캐시를 피하세요.\n"
    )
    found = constraint_sentences(f"---\nname: x\n---\n{text}")
    assert found == [
        "切换版本后先执行 `cjpm clean`，避免复用旧产物。",
        "请勿手改生成文件。",
        "古いキャッシュは避けてください。",
        "캐시를 피하세요.",
    ], found


def test_when_this_skill_applies_stays_like_when_to_use() -> None:
    # k-dense/optimize-for-gpu's "When This Skill Applies" moved while "When to Use" stays
    for title in ("When to Use", "When This Skill Applies", "When To Apply"):
        assert CORE_TITLES.search(title), title
    assert not CORE_TITLES.search("Reference Files")


def test_a_restriction_with_only_is_a_constraint() -> None:
    # obra/finishing-a-development-branch's moved "Common Rationalizations" table
    text = (
        "## Common Rationalizations\n\n| Excuse | Reality |\n|---|---|\n"
        '| "Force-push will fix it" | Investigate; force-push only on your partner\'s '
        "request. |\n\nSkip gates only when the flag was passed. Claude reads the file.\n"
    )
    found = constraint_sentences(f"---\nname: x\n---\n{text}")
    assert found == [
        '| "Force-push will fix it" | Investigate; force-push only on your partner\'s request. |',
        "Skip gates only when the flag was passed.",
    ], found


def test_a_decision_moves_whole_or_not_at_all_never_branch_by_branch() -> None:
    branches = "".join(
        f"### Option {c}: {name}\n\n{FILLER}\n\n"
        for c, name in zip("ABCD", ["Docker", "Fly", "Render", "Bare metal"], strict=True)
    )
    body = f"## Choose a deploy method\n\nPick one of these.\n\n{branches}"
    res = compiled(pkg_of(body))
    places = {
        s.title: s.placement
        for s in res.report.sections
        if s.title.startswith(("Option", "Choose"))
    }
    assert len(places) == 5 and len(set(places.values())) == 1, places  # one place for all
    kept = res.package.text(SKILL_MD)
    in_bootstrap = {t for t in places if f"# {t}\n" in kept}
    assert in_bootstrap in (set(), set(places))


def test_a_compile_that_would_grow_the_bootstrap_moves_nothing() -> None:
    # one tiny movable section: its on-demand index entry costs more than it saves
    body = f"## Workflow notes\n\n{FILLER * 3}\n\n## Tiny\n\nSee the table.\n"
    res = compiled(pkg_of(body))
    assert placement(res, "Tiny") == "kept"
    chk = res.report.self_check
    assert chk is not None and chk.bootstrap_ok
    assert any("bootstrap did not shrink" in p for o in res.report.ops for p in o.problems)


# ---------------------------------------------------------------------------- steps


def steps_of(text: str) -> list[list[int]] | None:
    plan = paragraph_plan(0, 0, text)
    return None if plan is None else [plan.intro, *plan.steps]


def test_a_condition_anywhere_keeps_the_paragraph_prose() -> None:
    # design 405: any condition in a paragraph leaves it alone (issue 33's own pairs)
    for text in (
        "Call `ask_user` exactly once. If the parameters were pre-filled, skip the question. "
        "Write the answer to `out.md`.\n",
        # obra/brainstorming: a condition and "Only ... once ..." are not steps
        "Wait for the user's response. If they request changes, make them and re-run the "
        "spec review loop. Only proceed once the user approves.\n",
        "Ensure work happens in an isolated workspace. Prefer your platform's native "
        "worktree tools. Fall back to manual git worktrees only when no native tool is "
        "available.\n",
        "Keep tests green. Use the cache unless the user names a different one.\n",
        "Run the build. Rerun the failing test once the fix is in.\n",
    ):
        assert steps_of(text) is None, text


def test_condition_words_in_any_position_and_language() -> None:
    assert has_condition("Only proceed once the user approves.")
    assert has_condition("Skip gates only when the flag was passed.")
    assert has_condition("Use opus unless the user names a model.")
    assert has_condition("如果测试失败，重新运行。")
    assert has_condition("テストが失敗した場合は再実行する。")
    assert has_condition("테스트가 실패한 경우 다시 실행한다.")
    assert not has_condition("Call `ask_user` exactly once.")
    assert not has_condition("Run `if-changed` on the tree.")  # a code span is not a condition
    assert not has_condition("Confirm the identifiers before calling tools.")


def test_one_instruction_per_step_and_no_standing_rule_as_a_step() -> None:
    # anthropics/algorithmic-art: "Output" is no known instruction verb, so it would have
    # joined step 2 with "Avoid ..." (two instructions merged) -> prose
    art = (
        "**The algorithmic philosophy should be 4-6 paragraphs long.** Fill it with poetic "
        "computational philosophy that brings together the intended vision. Avoid repeating "
        "the same points. Output this algorithmic philosophy as a .md file.\n"
    )
    assert steps_of(art) is None
    # a prohibition holds for every step: numbering it would place it after step 1
    assert (
        steps_of("Then mark the todo complete and move on. Never move to the next task.\n") is None
    )
    assert steps_of("Keep tests green. Don't add behavior.\n") is None
    # a statement between instructions is not a step either
    assert steps_of("Read the log. The log may be long. Fix the test.\n") is None
    # anthropics/skill-creator: "Start by writing a draft" cannot be step 3
    assert (
        steps_of(
            "Try to explain why things are important. Use theory of mind. Start by writing a "
            "draft and then look at it with fresh eyes and improve it.\n"
        )
        is None
    )
    # unconditional instructions, one per step, in order
    text = "Select the workflow. Confirm the identifiers before calling tools. Write `out.md`.\n"
    assert steps_of(text) == [[], [0], [1], [2]]
    assert is_rule("**Always run scripts with `--help` first**.") and is_rule("Then, never push.")


def test_a_paragraph_that_opens_with_a_condition_stays_a_paragraph() -> None:
    assert steps_of("If they didn't ask, skip this phase. Run the tests. Commit the fix.\n") is None


def test_a_summary_sentence_is_a_lead_in_not_step_one() -> None:
    text = (
        "Create a git branch following the naming conventions. Read the ticket type. "
        "Pick a short slug from the title. Create the branch `<type>/<slug>`.\n"
    )
    assert steps_of(text) == [[0], [1], [2], [3]]


def _section_compile(body: str, plan: StaticPlan | None = None) -> StaticResult:
    pkg = pkg_of(body)
    mode = "hybrid" if plan is not None else "deterministic"
    return compile_static(pkg, profile(), mode=mode, plan=plan, planner="fake/planner")


def test_a_model_plan_that_reorders_or_makes_a_condition_a_step_is_refused() -> None:
    body = "## Notes\n\nRun the build. If it fails, read the log. Fix the code. Rerun it.\n"
    index = next(s.index for s in parse(pkg_of(body).skill_md.body) if s.title == "Notes")
    for steps, why in (
        ([[0], [2], [1, 3]], "reorder"),
        ([[0], [1], [2], [3]], "condition would become a step"),
    ):
        plan = StaticPlan(
            source="model", paragraphs=[ParagraphPlan(section=index, block=1, steps=steps)]
        )
        res = _section_compile(body, plan)
        (rb,) = res.report.rolled_back
        assert rb.title == "Notes" and any(why in r for r in rb.reasons), rb.reasons
        assert "Run the build. If it fails, read the log." in res.package.text(SKILL_MD)


def test_a_paragraph_next_to_a_numbered_list_is_not_made_a_second_list() -> None:
    body = "## Notes\n\nRun the build. Check the log. Write the report.\n\n1. Open a PR.\n"
    res = _section_compile(body)
    out = res.package.text(SKILL_MD)
    assert "Run the build. Check the log. Write the report.\n\n1. Open a PR.\n" in out
    assert out.count("1. ") == 2  # the workflow's and the existing list's, nothing more
