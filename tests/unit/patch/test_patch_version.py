"""Version semantics: the documented bump table, row by row, and the change list."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from skillci.patch.version import ChangeList, change_list, compare, next_version
from skillci.skill.package import MANIFEST, SKILL_MD, SkillPackage
from tests.unit.patch.helpers import bundled, rule, run, text


def at_version(version: str) -> SkillPackage:
    pkg = bundled()
    return pkg.with_files(
        {MANIFEST: text(pkg, MANIFEST).replace("version: 0.7.0", f"version: {version}").encode()}
    )


def bump(pkg: SkillPackage, *ops: dict[str, Any]) -> ChangeList:
    return change_list(run(pkg, *ops))


def replace_steps(rid: str, *steps: str) -> dict[str, Any]:
    old = bundled().rule(rid)
    assert old is not None
    data = old.rule.model_dump(mode="json")
    data["instruction"]["steps"] = list(steps)
    return {"op": "replace_rule", "rule_id": rid, "rule": data}


@pytest.mark.parametrize(
    ("version", "ops", "expected"),
    [
        # add a rule -> patch (the seed's example: a rule added to fix failures, 0.7.0 -> 0.7.1)
        ("0.7.0", [{"op": "add_rule", "rule": rule("a.b")}], ("patch", "0.7.1")),
        ("1.2.3", [{"op": "add_rule", "rule": rule("a.b")}], ("patch", "1.2.4")),
        # replace steps only -> patch
        ("0.7.0", [replace_steps("finish.report-success", "rerun", "report")], ("patch", "0.7.1")),
        ("1.2.3", [replace_steps("finish.report-success", "rerun", "report")], ("patch", "1.2.4")),
        # replace other fields without narrowing (validation, failure policy...) -> patch
        (
            "1.2.3",
            [
                {
                    "op": "replace_rule",
                    "rule_id": "finish.report-success",
                    "rule": rule("finish.report-success"),
                }
            ],
            ("patch", "1.2.4"),
        ),
        # ... but a new id breaks references to the rule -> minor
        (
            "1.2.3",
            [
                {
                    "op": "replace_rule",
                    "rule_id": "finish.report-success",
                    "rule": rule("finish.report-success-v2"),
                }
            ],
            ("minor", "1.3.0"),
        ),
        # delete an active rule: minor before 1.0, major after
        ("0.7.0", [{"op": "delete_rule", "rule_id": "finish.report-success"}], ("minor", "0.8.0")),
        ("1.2.3", [{"op": "delete_rule", "rule_id": "finish.report-success"}], ("major", "2.0.0")),
        # narrowing the loading scope of an active rule: likewise
        (
            "0.7.0",
            [
                {
                    "op": "change_loading_scope",
                    "rule_id": "finish.report-success",
                    "to": "skillci/workflows/ci-failure.md",
                }
            ],
            ("minor", "0.8.0"),
        ),
        (
            "1.2.3",
            [
                {
                    "op": "change_loading_scope",
                    "rule_id": "finish.report-success",
                    "to": "skillci/workflows/ci-failure.md",
                }
            ],
            ("major", "2.0.0"),
        ),
        # widening (workflow -> bootstrap) is not breaking
        (
            "1.2.3",
            [
                {
                    "op": "change_loading_scope",
                    "rule_id": "test.run-smallest-first",
                    "to": "SKILL.md",
                }
            ],
            ("minor", "1.3.0"),
        ),
        # split / merge carry behaviour over -> minor even when sources disappear
        (
            "1.2.3",
            [
                {
                    "op": "split_rule",
                    "rule_id": "finish.report-success",
                    "into": [rule("finish.a"), rule("finish.b")],
                }
            ],
            ("minor", "1.3.0"),
        ),
        (
            "1.2.3",
            [
                {
                    "op": "merge_rules",
                    "rule_ids": ["finish.report-success", "repo-debug.first-localize"],
                    "into": rule("finish.merged"),
                }
            ],
            ("minor", "1.3.0"),
        ),
        # examples and regression tests -> patch
        (
            "1.2.3",
            [{"op": "add_example", "file": "skillci/examples/x.jsonl", "example": {"a": 1}}],
            ("patch", "1.2.4"),
        ),
        ("1.2.3", [{"op": "add_regression_test", "task_id": "t"}], ("patch", "1.2.4")),
        # the largest wins
        (
            "1.2.3",
            [
                {"op": "add_regression_test", "task_id": "t"},
                {"op": "add_rule", "rule": rule("a.b")},
                {
                    "op": "change_loading_scope",
                    "rule_id": "test.run-smallest-first",
                    "to": "SKILL.md",
                },
            ],
            ("minor", "1.3.0"),
        ),
    ],
)
def test_bump_table(version: str, ops: list[dict[str, Any]], expected: tuple[str, str]) -> None:
    cl = bump(at_version(version), *ops)
    assert (cl.bump, cl.to_version) == expected
    assert cl.from_version == version


def test_deleting_a_candidate_rule_after_1_0_is_minor() -> None:
    pkg = run(
        at_version("1.0.0"), {"op": "add_rule", "rule": rule("a.b")}
    ).after  # enters as candidate
    cl = bump(pkg, {"op": "delete_rule", "rule_id": "a.b"})
    assert cl.bump == "minor" and cl.removed[0].was_active is False


def test_trigger_narrowing_of_an_active_rule_is_major_after_1_0() -> None:
    old = bundled().rule("security.untrusted-content")
    assert old is not None
    data = old.rule.model_dump(mode="json")
    data["trigger"]["any"] = ["task_mentions_credentials"]
    cl = bump(
        at_version("1.0.0"),
        {"op": "replace_rule", "rule_id": "security.untrusted-content", "rule": data},
    )
    assert cl.bump == "major"
    assert "no longer fires on file_or_tool_output_contains_instructions" in cl.modified[0].detail


def test_change_list_carries_reasons_and_kinds() -> None:
    cl = bump(
        bundled(),
        {
            "op": "split_rule",
            "rule_id": "finish.report-success",
            "reason": "two separate habits",
            "into": [rule("finish.rerun"), rule("finish.diff")],
        },
        {"op": "add_regression_test", "task_id": "cache-expiry"},
    )
    assert [c.rule_id for c in cl.added] == ["finish.rerun", "finish.diff"]
    assert all(
        c.reason == "two separate habits" and c.detail == "split from finish.report-success"
        for c in cl.added
    )
    assert [(c.rule_id, c.detail) for c in cl.removed] == [
        ("finish.report-success", "split into finish.rerun, finish.diff")
    ]
    assert [(o.kind, o.subject, o.reason) for o in cl.other] == [
        (
            "regression_test_added",
            "cache-expiry",
            "students report success without rerunning the test",
        )
    ]
    assert cl.patch_id is not None and cl.failure_class == "verification_missing"
    assert ChangeList.model_validate_json(cl.model_dump_json()) == cl


def test_target_runtime_change_is_major_even_before_1_0() -> None:
    before = bundled()
    after = before.with_files(
        {
            MANIFEST: text(before, MANIFEST)
            .replace("quantization: int8", "quantization: bf16")
            .encode()
        }
    )
    cl = compare(before, after, reason="retarget")
    assert (cl.bump, cl.to_version) == ("major", "1.0.0")
    assert [(o.subject, o.level) for o in cl.other] == [("target_runtime", "major")]


def test_target_runtime_change_through_change_list_too() -> None:
    a = run(bundled(), {"op": "add_regression_test", "task_id": "t"})
    forged = dataclasses.replace(
        a,
        after=a.after.with_files(
            {MANIFEST: text(a.after, MANIFEST).replace("sim/student", "vllm/qwen").encode()}
        ),
    )
    assert change_list(forged).bump == "major"


def test_compare_finds_rule_changes_without_a_patch() -> None:
    before = bundled()
    after = run(
        before,
        {"op": "add_rule", "rule": rule("a.b")},
        {"op": "delete_rule", "rule_id": "finish.report-success"},
    ).after
    cl = compare(before, after)
    assert [c.rule_id for c in cl.added] == ["a.b"]
    assert [c.rule_id for c in cl.removed] == ["finish.report-success"]
    assert compare(before, before).bump == "none" and compare(before, before).to_version == "0.7.0"


def test_frontmatter_name_change_is_major() -> None:
    before = bundled()
    after = before.with_files(
        {
            SKILL_MD: text(before, SKILL_MD)
            .replace("name: repo-debugger", "name: repo-fixer")
            .encode()
        }
    )
    assert compare(before, after).bump == "major"


def test_next_version_handles_prereleases() -> None:
    assert next_version("1.2.3-rc.1", "patch") == "1.2.3"
    assert next_version("0.7.0", "none") == "0.7.0"
    assert next_version("2.0.0-rc.1", "major") == "2.0.0"
    assert next_version("1.3.0-rc.1", "minor") == "1.3.0"
    assert next_version("1.3.1-rc.1", "minor") == "1.4.0"
