"""Each lint problem, seeded into the bundled package, is reported with file:line."""

from __future__ import annotations

import pytest

from skillci.skill.lint import iter_codes, lint
from skillci.skill.package import SkillPackage
from tests.unit.skill.helpers import bundled, edit, line_of


def codes(pkg: SkillPackage) -> dict[str, list[tuple[str, int]]]:
    out: dict[str, list[tuple[str, int]]] = {}
    for f in lint(pkg).findings:
        rel = f.file.removeprefix(pkg.root + "/")
        out.setdefault(f.code, []).append((rel, f.line))
    return out


def test_bundled_skill_is_clean() -> None:
    report = lint(bundled())
    assert report.findings == [], [f.format() for f in report.findings]


def test_schema_error_with_yaml_line() -> None:
    pkg = edit(
        bundled(),
        "skillci/rules/testing.yaml",
        "  workflow: unit-test-failure",
        "  workflow: [1, 2]",
    )
    found = codes(pkg)["SK001"]
    assert (
        "skillci/rules/testing.yaml",
        line_of(pkg, "skillci/rules/testing.yaml", "workflow: [1, 2]"),
    ) in found


def test_manifest_schema_error_line() -> None:
    pkg = edit(bundled(), "skillci.yaml", "  context_window: 32768", "  context_window: -5")
    assert codes(pkg)["SK001"] == [
        ("skillci.yaml", line_of(pkg, "skillci.yaml", "context_window: -5"))
    ]


def test_invalid_yaml_syntax_line() -> None:
    pkg = edit(bundled(), "skillci/rules/finish.yaml", "status: active", "status: [active")
    (f,) = [f for f in lint(pkg).findings if f.code == "SK001"]
    assert f.file.endswith("/skillci/rules/finish.yaml") and f.line >= line_of(
        pkg, "skillci/rules/finish.yaml", "[active"
    )


@pytest.mark.parametrize(
    ("phrase", "where"),
    [
        ("carefully analyze the failure", "SKILL.md"),
        ("consider comprehensively", "SKILL.md"),
        ("use tools when necessary", "SKILL.md"),
        ("ensure the result is correct", "SKILL.md"),
        ("handle flexibly", "SKILL.md"),
        ("仔细分析日志", "SKILL.md"),
        ("综合考虑", "SKILL.md"),
        ("必要时使用工具", "SKILL.md"),
        ("确保结果正确", "SKILL.md"),
        ("根据情况灵活处理", "SKILL.md"),
        ("carefully_analyze_the_log", "skillci/rules/finish.yaml"),
        ("确保结果正确", "skillci/rules/finish.yaml"),
        ("carefully analyze the log", "skillci/workflows/ci-failure.md"),
    ],
)
def test_vague_phrases(phrase: str, where: str) -> None:
    pkg = bundled()
    if where == "SKILL.md":
        pkg = edit(pkg, where, "Work in this order", f"Work in this order ({phrase})")
        needle = phrase
    elif where.startswith("skillci/rules/"):
        pkg = edit(
            pkg,
            where,
            "    - rerun_the_failing_test_after_every_edit",
            f"    - {phrase}\n    - rerun_the_failing_test_after_every_edit",
        )
        needle = phrase
    else:
        pkg = edit(pkg, where, "1. Open the CI log", f"1. {phrase}. Open the CI log")
        needle = phrase
    assert (where, line_of(pkg, where, needle)) in codes(pkg)["SK010"]


def test_budget_bootstrap_total_and_per_workflow() -> None:
    pkg = edit(bundled(), "skillci.yaml", "  bootstrap: 1800", "  bootstrap: 100")
    pkg = edit(pkg, "skillci.yaml", "  per_workflow: 1200", "  per_workflow: 50")
    pkg = edit(pkg, "skillci.yaml", "  max_total: 4200", "  max_total: 500")
    c = codes(pkg)
    assert c["SK020"] == [("SKILL.md", 1)]
    assert ("skillci/workflows/unit-test-failure.md", 1) in c["SK021"]
    assert c["SK022"] == [("skillci.yaml", 1)]
    msg = next(f.message for f in lint(pkg).findings if f.code == "SK020")
    assert "over token_budget.bootstrap 100 by" in msg


def test_budget_relative_to_the_context_window() -> None:
    from skillci.skill.render import render

    rendered = render(bundled(), "folder")
    at_once = rendered.bootstrap_tokens + max(
        f.tokens for f in rendered.files if f.kind == "on_demand"
    )
    fits = 4 * at_once  # exactly 25%: fits
    pkg = edit(bundled(), "skillci.yaml", "context_window: 32768", f"context_window: {fits}")
    assert "SK023" not in codes(pkg)
    small = edit(pkg, "skillci.yaml", f"context_window: {fits}", f"context_window: {fits - 4}")
    assert codes(small)["SK023"] == [("SKILL.md", 1)]
    # the skill's own budgets (generous, as import writes them) do not hide it
    assert "SK020" not in codes(small)


def test_duplicate_rule_id() -> None:
    pkg = edit(
        bundled(),
        "skillci/rules/finish.yaml",
        "id: finish.report-success",
        "id: test.run-smallest-first",
    )
    assert codes(pkg)["SK030"] == [
        ("skillci/rules/testing.yaml", line_of(pkg, "skillci/rules/testing.yaml", "id: test."))
    ]
    msg = next(f.message for f in lint(pkg).findings if f.code == "SK030")
    assert "first defined in skillci/rules/finish.yaml:2" in msg


def test_conflict_step_is_active_anti_pattern() -> None:
    pkg = edit(
        bundled(),
        "skillci/rules/finish.yaml",
        "    - rerun_the_failing_test_after_every_edit",
        "    - run_full_suite_before_local_reproduction",
    )
    assert codes(pkg)["SK031"] == [
        (
            "skillci/rules/finish.yaml",
            line_of(pkg, "skillci/rules/finish.yaml", "run_full_suite_before_local_reproduction"),
        )
    ]


def test_tool_not_required() -> None:
    pkg = edit(bundled(), "skillci/rules/finish.yaml", "  tools: [run]", "  tools: [run, browser]")
    assert codes(pkg)["SK032"] == [
        ("skillci/rules/finish.yaml", line_of(pkg, "skillci/rules/finish.yaml", "browser"))
    ]


def test_rule_without_provenance() -> None:
    pkg = bundled()
    text = pkg.files["skillci/rules/security.yaml"].decode()
    text = text[: text.index("provenance:")]
    pkg = pkg.with_files({"skillci/rules/security.yaml": text.encode()})
    assert codes(pkg)["SK033"] == [
        (
            "skillci/rules/security.yaml",
            line_of(pkg, "skillci/rules/security.yaml", "id: security."),
        )
    ]


def test_retired_rule_still_referenced() -> None:
    pkg = edit(bundled(), "skillci/rules/security.yaml", "status: active", "status: retired")
    pkg = edit(
        pkg,
        "skillci/rules/finish.yaml",
        "trigger:",
        "references: [security.untrusted-content]\ntrigger:",
    )
    pkg = edit(
        pkg,
        "SKILL.md",
        "Follow the rules below.",
        "Follow the rules below, security.untrusted-content first.",
    )
    c = codes(pkg)["SK034"]
    assert (
        "skillci/rules/finish.yaml",
        line_of(pkg, "skillci/rules/finish.yaml", "references:"),
    ) in c
    assert ("SKILL.md", line_of(pkg, "SKILL.md", "security.untrusted-content first")) in c


def test_unknown_workflow_scope() -> None:
    pkg = edit(
        bundled(),
        "skillci/rules/testing.yaml",
        "workflow: unit-test-failure",
        "workflow: no-such-flow",
    )
    assert codes(pkg)["SK035"] == [
        ("skillci/rules/testing.yaml", line_of(pkg, "skillci/rules/testing.yaml", "no-such-flow"))
    ]


def test_frontmatter_rules() -> None:
    pkg = edit(bundled(), "SKILL.md", "name: repo-debugger", "name: Repo--Debugger")
    pkg = edit(pkg, "SKILL.md", "description: Fix", "description: <b>Fix")
    found = lint(pkg).findings
    # the spec refuses the name (capitals, --): an error naming field and reason
    name = [(f.code, f.severity, f.line, f.reason) for f in found if f.field == "name"]
    assert name == [("SK005", "error", 2, "uppercase"), ("SK005", "error", 2, "double-hyphen")]
    # angle brackets and a missing license are not the spec's business
    assert not [f for f in found if f.field in ("description", "license")]
    assert "SK001" not in codes(pkg)


def test_extension_fields_warn_and_strict_makes_them_errors() -> None:
    pkg = edit(
        bundled(), "SKILL.md", "name: repo-debugger", "name: repo-debugger\nargument-hint: x"
    )
    (f,) = lint(pkg).findings
    assert (f.code, f.severity, f.line, f.field) == ("SK006", "warning", 3, "argument-hint")
    assert "Claude Code" in f.message
    (g,) = lint(pkg, strict=True).findings
    assert (g.code, g.severity) == ("SK006", "error")
    flow = edit(bundled(), "SKILL.md", "name: repo-debugger", "name: repo-debugger\nx: [1]")
    assert {f.code for f in lint(flow).findings} == {"SK006", "SK007"}


def test_name_must_match_the_folder_when_lint_knows_it() -> None:
    assert lint(bundled(), folder="repo-debugger").findings == []
    (f,) = lint(bundled(), folder="debugger").findings
    assert (f.code, f.severity, f.reason) == ("SK005", "error", "folder-mismatch")


def test_every_documented_code_is_exercised_here() -> None:
    import inspect
    import sys

    src = inspect.getsource(sys.modules[__name__])
    missing = [
        c
        for c in iter_codes()
        if f'"{c}"' not in src and c not in ("SK002", "SK003", "SK040", "SK041")
    ]
    assert missing == []


def test_missing_files_and_name_mismatch() -> None:
    pkg = bundled()
    assert codes(pkg.with_files({"SKILL.md": None}))["SK002"] == [("SKILL.md", 1)]
    pkg2 = edit(pkg, "skillci.yaml", "name: repo-debugger", "name: other-name")
    assert codes(pkg2)["SK003"] == [("SKILL.md", 2)]


def test_on_demand_guidance_and_examples_warn() -> None:
    pkg = bundled().with_files(
        {
            "skillci/tools/new.md": b"# New tool\n\nUse it.\n",
            "skillci/examples/bad.jsonl": b'{"ok": 1}\nnot json\n',
        }
    )
    report = lint(pkg)
    assert {
        (f.code, f.severity, f.file.removeprefix(pkg.root + "/"), f.line) for f in report.findings
    } == {
        ("SK040", "warning", "skillci/tools/new.md", 1),
        ("SK041", "warning", "skillci/examples/bad.jsonl", 2),
    }
    assert report.errors == 0


@pytest.mark.parametrize(
    ("value", "problem"),
    [("/etc/passwd", "outside"), ("../x/SKILL.md", "outside"), ("NOPE.md", "not a file")],
)
def test_entry_points_stay_inside_the_package(value: str, problem: str) -> None:
    pkg = edit(bundled(), "skillci.yaml", "default: SKILL.md", f"default: {value}")
    line = line_of(pkg, "skillci.yaml", value)
    assert codes(pkg)["SK004"] == [("skillci.yaml", line)]
    (f,) = [f for f in lint(pkg).findings if f.code == "SK004"]
    assert problem in f.message


def _plain(body: str, **files: bytes) -> SkillPackage:
    skill = f"---\nname: s\ndescription: d\n---\n{body}".encode()
    return SkillPackage({"SKILL.md": skill, **files}, root="s")


def test_broken_links_and_anchors() -> None:
    body = (
        "# Use\n\n## Success Criteria\n\nSee [ok](#success-criteria), [gone](#results),\n"
        "[doc](references/a.md#setup), [renamed](references/old.md), [web](https://x.y/z),\n"
        "`[code](nowhere.md)` and [dir](references/).\n\n```\n[fenced](nowhere.md)\n```\n"
    )
    pkg = _plain(body, **{"references/a.md": b"# A\n\n## Set-up steps\n"})
    found = [(f.code, f.line, f.col, f.message) for f in lint(pkg).findings if f.code == "SK050"]
    assert [(c, ln) for c, ln, _, _ in found] == [("SK050", 9), ("SK050", 10), ("SK050", 10)]
    assert "#results" in found[0][3] and "this document" in found[0][3]
    assert "#setup" in found[1][3] and "references/a.md" in found[1][3]
    assert "'references/old.md'" in found[2][3]
    fixed = _plain(body.replace("#results", "#use").replace("#setup", "#set-up-steps"))
    fixed = fixed.with_files(
        {"references/a.md": b"# A\n\n## Set-up steps\n", "references/old.md": b"# Old\n"}
    )
    assert [f for f in lint(fixed).findings if f.code == "SK050"] == []


def test_anchor_slugs_follow_github() -> None:
    from skillci.skill.references import anchors

    text = '# Step 1: Run `tests`!\n## 하지 말 것\n## Dup\n## Dup\n<a id="Here"></a>\n'
    assert anchors(text) == {"step-1-run-tests", "하지-말-것", "dup", "dup-1", "here"}


def test_bundled_files_nothing_points_to() -> None:
    pkg = _plain(
        "Read [the guide](references/guide.md) and run `python scripts/run.py`.\n",
        **{
            "references/guide.md": b"# Guide\n\nFill the form in assets/form.pdf.\n",
            "references/old.md": b"# Old\n",
            "scripts/run.py": b"import helper\n",
            "scripts/helper.py": b"X = 1\n",
            "scripts/unused.py": b"Y = 2\n",
            "assets/form.pdf": b"%PDF",
            "LICENSE.txt": b"MIT\n",
        },
    )
    orphans = sorted(f.file for f in lint(pkg).findings if f.code == "SK051")
    assert orphans == ["s/references/old.md", "s/scripts/unused.py"]


def test_scripts_run_as_commands_need_a_shebang_and_the_exec_bit() -> None:
    files = {
        "scripts/a.sh": b"echo a\n",  # run directly, no #!
        "scripts/b.sh": b"#!/bin/sh\necho b\n",  # run directly, no exec bit
        "scripts/c.py": b"print(1)\n",  # run through python: fine
        "scripts/d.sh": b"echo d\n",  # executable without #!
    }
    body = "Run `./scripts/a.sh`, then:\n\n```\nscripts/b.sh --all\npython scripts/c.py\n```\n"
    body += "If it hangs, `bash scripts/d.sh`.\n"
    pkg = _plain(body, **files)
    pkg = SkillPackage(pkg.files, root="s", executable=frozenset({"scripts/d.sh"}))
    got = {f.file: f.message for f in lint(pkg, modes_known=True).findings if f.code == "SK052"}
    assert sorted(got) == ["s/scripts/a.sh", "s/scripts/b.sh", "s/scripts/d.sh"]
    assert "no #! line" in got["s/scripts/a.sh"] and "executable bit" in got["s/scripts/b.sh"]
    # from git or memory the modes are unknown: only what the text shows
    unknown = {f.file for f in lint(pkg).findings if f.code == "SK052"}
    assert unknown == {"s/scripts/a.sh"}


def test_a_plain_skill_needs_no_skillci_yaml() -> None:
    pkg = _plain("# Skill\n\nRun `pytest -q`.\n")
    assert lint(pkg, folder="s").findings == []
