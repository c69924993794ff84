"""Every op of the patch language, its preconditions and its provenance."""

from __future__ import annotations

import json

import pytest
import yaml

from skillci.errors import PatchError
from skillci.patch.apply import apply
from skillci.patch.limits import check_limits
from skillci.skill.models import Lifecycle
from skillci.skill.package import SKILL_MD
from skillci.skill.render import render
from tests.unit.patch.helpers import bundled, make_patch, rule, run, text

# ---------------------------------------------------------------------------- add_rule


def test_add_rule_creates_one_file_per_rule_with_candidate_status_and_provenance() -> None:
    pkg = bundled()
    a = run(pkg, {"op": "add_rule", "rule": rule("verify.rerun-after-edit", "rerun_the_test")})
    assert a.changed_files == ["skillci/rules/verify-rerun-after-edit.yaml"]
    lr = a.after.rule("verify.rerun-after-edit")
    assert lr is not None and lr.file == "skillci/rules/verify-rerun-after-edit.yaml"
    assert lr.rule.status is Lifecycle.candidate
    prov = lr.rule.provenance
    assert prov is not None
    assert prov.introduced_by == a.patch.pid
    assert prov.supporting_runs == ["run-a", "run-b"]
    assert prov.model_extra == {"failure_class": "verification_missing"}


def test_add_rule_overrides_status_and_provenance_given_in_the_patch() -> None:
    r = rule(
        "x.y", status="active", provenance={"introduced_by": "human", "supporting_runs": ["forged"]}
    )
    lr = run(bundled(), {"op": "add_rule", "rule": r}).after.rule("x.y")
    assert lr is not None and lr.rule.status is Lifecycle.candidate
    assert lr.rule.provenance is not None and lr.rule.provenance.supporting_runs == [
        "run-a",
        "run-b",
    ]
    assert lr.rule.provenance.introduced_by != "human"


def test_add_rule_into_a_named_list_file_keeps_the_other_rules_bytes() -> None:
    pkg = bundled()
    old = text(pkg, "skillci/rules/recovery.yaml")
    a = run(
        pkg,
        {"op": "add_rule", "file": "skillci/rules/recovery.yaml", "rule": rule("recovery.narrow")},
    )
    new = text(a.after, "skillci/rules/recovery.yaml")
    assert new.startswith(old)  # appended after the last item, nothing above changed
    assert [lr.rule.id for lr in a.after.rules_in("skillci/rules/recovery.yaml")] == [
        "recovery.no-repeat-failing-call",
        "edit.minimal-change",
        "recovery.narrow",
    ]


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (
            {"op": "add_rule", "rule": rule("test.run-smallest-first")},
            "already exists in skillci/rules/testing.yaml",
        ),
        (
            {"op": "add_rule", "file": "skillci/rules/testing.yaml", "rule": rule("a.b")},
            "single rule mapping",
        ),
        (
            {"op": "add_rule", "file": "skillci/rules/nope.yaml", "rule": rule("a.b")},
            "unknown file skillci/rules/nope.yaml",
        ),
        (
            {"op": "add_rule", "file": "skillci.yaml", "rule": rule("a.b")},
            "not a skillci/rules/*.yaml file",
        ),
        (
            {"op": "add_rule", "file": "skillci/rules/../skillci.yaml", "rule": rule("a.b")},
            "unsafe path",
        ),
    ],
)
def test_add_rule_preconditions(op: dict[str, object], message: str) -> None:
    with pytest.raises(PatchError, match=r"op 0 \(add_rule\): .*" + message.replace("*", r"\*")):
        run(bundled(), op)


def test_add_rule_default_file_taken_names_the_file() -> None:
    pkg = bundled().with_files({"skillci/rules/a-b.yaml": b"schema_version: 1\nrules: []\n"})
    with pytest.raises(PatchError, match=r"skillci/rules/a-b.yaml already exists"):
        run(pkg, {"op": "add_rule", "rule": rule("a.b")})


def test_error_names_the_op_index() -> None:
    with pytest.raises(PatchError, match=r"^op 1 \(delete_rule\): unknown rule id 'no.such'"):
        run(
            bundled(),
            {"op": "add_rule", "rule": rule("a.b")},
            {"op": "delete_rule", "rule_id": "no.such"},
        )


# ---------------------------------------------------------------------------- replace_rule


def test_replace_rule_in_a_list_file_keeps_neighbours_and_comments() -> None:
    pkg = bundled()
    src = "# top comment\n" + text(pkg, "skillci/rules/recovery.yaml").replace(
        "  - id: edit.minimal-change", "  # about minimal change\n  - id: edit.minimal-change"
    )
    pkg = pkg.with_files({"skillci/rules/recovery.yaml": src.encode()})
    new_rule = rule(
        "recovery.no-repeat-failing-call", "stop", "change_one_input", scope={"tools": ["run"]}
    )
    a = run(
        pkg, {"op": "replace_rule", "rule_id": "recovery.no-repeat-failing-call", "rule": new_rule}
    )
    out = text(a.after, "skillci/rules/recovery.yaml")
    tail = src[src.index("  # about minimal change") :]
    assert out.startswith(
        "# top comment\nschema_version: 1\nrules:\n  - id: recovery.no-repeat-failing-call\n"
    )
    assert out.endswith(tail)  # the other rule, with its comment, byte for byte
    lr = a.after.rule("recovery.no-repeat-failing-call")
    assert lr is not None and lr.rule.instruction.steps == ["stop", "change_one_input"]
    assert lr.rule.status is Lifecycle.candidate


def test_replace_rule_in_a_single_file_keeps_the_leading_comment() -> None:
    a = run(
        bundled(),
        {
            "op": "replace_rule",
            "rule_id": "repo-debug.first-localize",
            "rule": rule("repo-debug.first-localize", "read_the_log_first"),
        },
    )
    out = text(a.after, "skillci/rules/localize.yaml")
    assert out.startswith(
        "# Localize before anything else: weak students scan the whole repository first.\n"
    )
    assert yaml.safe_load(out)["instruction"]["steps"] == ["read_the_log_first"]


def test_replace_rule_may_rename_to_a_free_id() -> None:
    a = run(
        bundled(),
        {"op": "replace_rule", "rule_id": "finish.report-success", "rule": rule("finish.verify")},
    )
    assert a.after.rule("finish.report-success") is None
    assert a.after.rule("finish.verify") is not None
    assert a.new_rule_ids == ["finish.verify"]


def test_replace_rule_that_changes_nothing_is_refused() -> None:
    pkg = bundled()
    same = pkg.rule("finish.report-success")
    assert same is not None
    data = same.rule.model_dump(mode="json")
    data["status"] = "candidate"
    with pytest.raises(PatchError, match="is the same as the old"):
        run(pkg, {"op": "replace_rule", "rule_id": "finish.report-success", "rule": data})


def test_replace_rule_rename_onto_existing_id_is_refused() -> None:
    with pytest.raises(PatchError, match=r"'test.run-smallest-first' already exists"):
        run(
            bundled(),
            {
                "op": "replace_rule",
                "rule_id": "finish.report-success",
                "rule": rule("test.run-smallest-first"),
            },
        )


# ---------------------------------------------------------------------------- delete_rule


def test_delete_only_rule_removes_its_file() -> None:
    a = run(bundled(), {"op": "delete_rule", "rule_id": "finish.report-success"})
    assert "skillci/rules/finish.yaml" not in a.after.files
    assert a.changed_files == ["skillci/rules/finish.yaml"]


@pytest.mark.parametrize("victim", ["recovery.no-repeat-failing-call", "edit.minimal-change"])
def test_delete_from_list_file_keeps_the_other_rule_text(victim: str) -> None:
    pkg = bundled()
    a = run(pkg, {"op": "delete_rule", "rule_id": victim})
    out = text(a.after, "skillci/rules/recovery.yaml")
    other = (
        "edit.minimal-change"
        if victim != "edit.minimal-change"
        else "recovery.no-repeat-failing-call"
    )
    src = text(pkg, "skillci/rules/recovery.yaml")
    start = src.index(f"  - id: {other}")
    end = (
        src.index("  - id: ", start + 1)
        if src.index(f"  - id: {other}") < src.index(f"  - id: {victim}")
        else len(src)
    )
    assert src[start:end].rstrip("\n") in out
    assert [lr.rule.id for lr in a.after.rules_in("skillci/rules/recovery.yaml")] == [other]


def test_delete_referenced_rule_is_refused() -> None:
    pkg = bundled()
    a = run(pkg, {"op": "add_rule", "rule": rule("x.uses", references=["finish.report-success"])})
    with pytest.raises(PatchError, match=r"rule 'x.uses' references 'finish.report-success'"):
        run(a.after, {"op": "delete_rule", "rule_id": "finish.report-success"})


# ---------------------------------------------------------------------------- split_rule


def test_split_carries_source_provenance_and_names_the_source() -> None:
    pkg = bundled()
    seeded = run(
        pkg,
        {
            "op": "replace_rule",
            "rule_id": "edit.minimal-change",
            "rule": rule(
                "edit.minimal-change", "edit_one_function", scope={"workflow": "unit-test-failure"}
            ),
        },
        supporting_runs=["run-old"],
    ).after
    a = run(
        seeded,
        {
            "op": "split_rule",
            "rule_id": "edit.minimal-change",
            "into": [
                rule("edit.one-function", "edit_one_function"),
                rule("edit.no-tests", "never_edit_tests"),
            ],
        },
        supporting_runs=["run-new"],
    )
    ids = [lr.rule.id for lr in a.after.rules_in("skillci/rules/recovery.yaml")]
    assert ids == ["recovery.no-repeat-failing-call", "edit.one-function", "edit.no-tests"]
    for rid in ("edit.one-function", "edit.no-tests"):
        lr = a.after.rule(rid)
        assert lr is not None and lr.rule.provenance is not None
        assert lr.rule.provenance.supporting_runs == ["run-new", "run-old"]
        assert lr.rule.provenance.model_extra is not None
        assert lr.rule.provenance.model_extra["sources"] == ["edit.minimal-change"]
        assert lr.rule.status is Lifecycle.candidate
    kinds = sorted((d.kind, d.rule_id) for d in a.effects[0].rules)
    assert kinds == [
        ("added", "edit.no-tests"),
        ("added", "edit.one-function"),
        ("removed", "edit.minimal-change"),
    ]


def test_split_of_a_single_rule_file_becomes_a_list_file() -> None:
    a = run(
        bundled(),
        {
            "op": "split_rule",
            "rule_id": "finish.report-success",
            "into": [rule("finish.report-success", "rerun"), rule("finish.check-diff", "git_diff")],
        },
    )
    data = yaml.safe_load(text(a.after, "skillci/rules/finish.yaml"))
    assert [r["id"] for r in data["rules"]] == ["finish.report-success", "finish.check-diff"]
    assert a.new_rule_ids == ["finish.check-diff"]


def test_split_into_an_existing_id_is_refused() -> None:
    with pytest.raises(PatchError, match=r"'test.run-smallest-first' already exists"):
        run(
            bundled(),
            {
                "op": "split_rule",
                "rule_id": "finish.report-success",
                "into": [rule("finish.a"), rule("test.run-smallest-first")],
            },
        )


def test_split_needs_two_results() -> None:
    with pytest.raises(ValueError, match="at least 2"):
        make_patch({"op": "split_rule", "rule_id": "finish.report-success", "into": [rule("a.b")]})


# ---------------------------------------------------------------------------- merge_rules


def test_merge_of_different_scopes_needs_target_scope() -> None:
    with pytest.raises(
        PatchError, match=r"different scopes \(bootstrap, unit-test-failure\).*target_scope"
    ):
        run(
            bundled(),
            {
                "op": "merge_rules",
                "rule_ids": ["finish.report-success", "test.run-smallest-first"],
                "into": rule("test.verify"),
            },
        )


def test_merge_with_target_scope_unions_provenance() -> None:
    pkg = bundled()
    step1 = run(
        pkg,
        {
            "op": "replace_rule",
            "rule_id": "finish.report-success",
            "rule": rule("finish.report-success", "rerun_then_report", scope={"tools": ["run"]}),
        },
        supporting_runs=["run-1"],
    ).after
    a = run(
        step1,
        {
            "op": "merge_rules",
            "rule_ids": ["finish.report-success", "test.run-smallest-first"],
            "target_scope": {"workflow": "unit-test-failure", "tools": ["run"]},
            "into": rule("test.verify", "run_one_test", "rerun_after_edit"),
        },
        supporting_runs=["run-2"],
    )
    assert (
        a.after.rule("finish.report-success") is None
        and a.after.rule("test.run-smallest-first") is None
    )
    lr = a.after.rule("test.verify")
    assert lr is not None and lr.file == "skillci/rules/finish.yaml"  # the first source's place
    assert "skillci/rules/testing.yaml" not in a.after.files
    assert lr.rule.scope.workflow == "unit-test-failure"
    prov = lr.rule.provenance
    assert prov is not None and prov.supporting_runs == ["run-1", "run-2"]
    assert prov.model_extra is not None
    assert prov.model_extra["sources"] == ["finish.report-success", "test.run-smallest-first"]
    assert a.declared_files == {"skillci/rules/finish.yaml", "skillci/rules/testing.yaml"}


def test_merge_within_one_file_same_scope() -> None:
    pkg = bundled()
    a = run(
        pkg,
        {
            "op": "add_rule",
            "file": "skillci/rules/recovery.yaml",
            "rule": rule("edit.keep-small", scope={"workflow": "unit-test-failure"}),
        },
    )
    m = run(
        a.after,
        {
            "op": "merge_rules",
            "rule_ids": ["edit.keep-small", "edit.minimal-change"],
            "into": rule("edit.minimal-change", "edit_one_function_minimally"),
        },
    )
    ids = [lr.rule.id for lr in m.after.rules_in("skillci/rules/recovery.yaml")]
    assert ids == ["recovery.no-repeat-failing-call", "edit.minimal-change"]
    lr = m.after.rule("edit.minimal-change")
    assert lr is not None and lr.rule.scope.workflow == "unit-test-failure"


def test_merge_into_scope_conflicting_with_sources_is_refused() -> None:
    pkg = bundled()
    a = run(pkg, {"op": "add_rule", "rule": rule("finish.also", scope={"workflow": None})})
    with pytest.raises(PatchError, match=r"into.scope differs"):
        run(
            a.after,
            {
                "op": "merge_rules",
                "rule_ids": ["finish.also", "finish.report-success"],
                "into": rule("finish.merged", scope={"workflow": "unit-test-failure"}),
            },
        )


def test_merge_lists_a_rule_twice_is_invalid() -> None:
    with pytest.raises(ValueError, match="twice"):
        make_patch({"op": "merge_rules", "rule_ids": ["a.b", "a.b"], "into": rule("a.c")})


# ---------------------------------------------------------------------------- change_loading_scope


def test_move_rule_out_of_bootstrap_lowers_bootstrap_tokens() -> None:
    pkg = bundled()
    a = run(
        pkg,
        {
            "op": "change_loading_scope",
            "rule_id": "finish.report-success",
            "to": "skillci/workflows/unit-test-failure.md",
        },
    )
    lr = a.after.rule("finish.report-success")
    assert lr is not None and lr.rule.scope.workflow == "unit-test-failure"
    before, after = render(pkg), render(a.after)
    wf = "skillci/workflows/unit-test-failure.md"
    assert after.bootstrap_tokens < before.bootstrap_tokens
    moved_out = before.bootstrap_tokens - after.bootstrap_tokens
    grew = after.file(wf).tokens - before.file(wf).tokens  # type: ignore[union-attr]
    assert grew > 0 and abs(grew - moved_out) <= 12  # the rule text moved, give or take headings
    lim = check_limits(a)
    assert lim.tokens.bootstrap_delta == after.bootstrap_tokens - before.bootstrap_tokens < 0
    assert lim.tokens.total_delta == after.total_tokens - before.total_tokens
    assert lr.rule.provenance is not None and lr.rule.provenance.model_extra is not None
    assert lr.rule.provenance.model_extra["sources"] == ["finish.report-success"]


def test_move_rule_into_bootstrap_raises_bootstrap_tokens() -> None:
    pkg = bundled()
    a = run(
        pkg, {"op": "change_loading_scope", "rule_id": "test.run-smallest-first", "to": "SKILL.md"}
    )
    assert check_limits(a).tokens.bootstrap_delta > 0
    lr = a.after.rule("test.run-smallest-first")
    assert lr is not None and lr.rule.scope.workflow is None


@pytest.mark.parametrize(
    ("op", "message"),
    [
        ({"rule_id": "finish.report-success", "to": "SKILL.md"}, "already loads from SKILL.md"),
        (
            {"rule_id": "finish.report-success", "to": "skillci/tools/run-tests.md"},
            "can load from SKILL.md or a skillci/workflows",
        ),
        (
            {"rule_id": "finish.report-success", "to": "skillci/workflows/nope.md"},
            "unknown file skillci/workflows/nope.md",
        ),
        (
            {"section": "Nope", "from": "SKILL.md", "to": "skillci/workflows/ci-failure.md"},
            "no section titled 'Nope'",
        ),
        (
            {
                "section": "Repo debugger",
                "from": "SKILL.md",
                "to": "skillci/workflows/ci-failure.md",
            },
            "level-1 section",
        ),
        (
            {
                "section": "X",
                "from": "skillci/workflows/ci-failure.md",
                "to": "skillci/tools/run-tests.md",
            },
            "between SKILL.md and",
        ),
        (
            {"section": "X", "from": "skillci/rules/finish.yaml", "to": "SKILL.md"},
            "neither SKILL.md nor",
        ),
    ],
)
def test_change_loading_scope_preconditions(op: dict[str, object], message: str) -> None:
    with pytest.raises(PatchError, match=message):
        run(bundled(), {"op": "change_loading_scope", **op})


def _with_section(pkg=None):  # type: ignore[no-untyped-def]
    pkg = pkg or bundled()
    body = (
        text(pkg, SKILL_MD) + "\n## Timeouts\n\nIf a command times out, run one test id with -x.\n"
    )
    return pkg.with_files({SKILL_MD: body.encode()})


def test_move_section_from_bootstrap_to_recovery_file() -> None:
    pkg = _with_section()
    a = run(
        pkg,
        {
            "op": "change_loading_scope",
            "section": "Timeouts",
            "from": "SKILL.md",
            "to": "skillci/recovery/command-timeout.md",
        },
    )
    assert "## Timeouts" not in text(a.after, SKILL_MD)
    assert text(a.after, SKILL_MD).startswith(text(pkg, SKILL_MD)[:200])  # frontmatter untouched
    assert a.after.frontmatter == pkg.frontmatter
    assert text(a.after, "skillci/recovery/command-timeout.md").endswith(
        "\n\n## Timeouts\n\nIf a command times out, run one test id with -x.\n"
    )
    lim = check_limits(a)
    assert lim.tokens.bootstrap_delta < 0
    assert a.effects[0].moved_text is not None and a.effects[0].moved_text.startswith("## Timeouts")
    back = run(
        a.after,
        {
            "op": "change_loading_scope",
            "section": "Timeouts",
            "from": "skillci/recovery/command-timeout.md",
            "to": "SKILL.md",
        },
    )
    assert check_limits(back).tokens.bootstrap_delta > 0


def test_section_in_a_code_fence_is_not_a_heading() -> None:
    pkg = bundled()
    body = text(pkg, SKILL_MD) + "\n```\n## Timeouts\n```\n"
    with pytest.raises(PatchError, match="no section titled 'Timeouts'"):
        run(
            pkg.with_files({SKILL_MD: body.encode()}),
            {
                "op": "change_loading_scope",
                "section": "Timeouts",
                "from": "SKILL.md",
                "to": "skillci/tools/run-tests.md",
            },
        )


def test_change_loading_scope_shape_is_validated() -> None:
    with pytest.raises(ValueError, match="exactly one of rule_id and section"):
        make_patch({"op": "change_loading_scope", "to": "SKILL.md"})
    with pytest.raises(ValueError, match="needs `from`"):
        make_patch({"op": "change_loading_scope", "section": "A", "to": "SKILL.md"})


# ---------------------------------------------------------------------------- examples and evals


def test_add_example_appends_one_json_line() -> None:
    pkg = bundled()
    ex = {"task": "off-by-one", "steps": ["read_file ci.log"], "outcome": "passed"}
    a = run(
        pkg,
        {"op": "add_example", "file": "skillci/examples/boundary-condition.jsonl", "example": ex},
    )
    lines = text(a.after, "skillci/examples/boundary-condition.jsonl").splitlines()
    assert lines[0] == text(pkg, "skillci/examples/boundary-condition.jsonl").rstrip("\n")
    assert json.loads(lines[1]) == ex
    with pytest.raises(PatchError, match="already holds this example"):
        run(
            a.after,
            {
                "op": "add_example",
                "file": "skillci/examples/boundary-condition.jsonl",
                "example": ex,
            },
        )


def test_add_example_creates_a_file_and_refuses_other_dirs() -> None:
    a = run(
        bundled(), {"op": "add_example", "file": "skillci/examples/new.jsonl", "example": {"a": 1}}
    )
    assert text(a.after, "skillci/examples/new.jsonl") == '{"a": 1}\n'
    with pytest.raises(PatchError, match=r"not a skillci/examples/\*.jsonl file"):
        run(bundled(), {"op": "add_example", "file": "skillci/rules/x.jsonl", "example": {"a": 1}})


def test_add_regression_test_turns_flow_list_into_block_list() -> None:
    pkg = bundled().with_files({"skillci/evals/regression.yaml": b"schema_version: 1\ntasks: []\n"})
    a = run(pkg, {"op": "add_regression_test", "task_id": "cache-expiry"})
    assert (
        text(a.after, "skillci/evals/regression.yaml")
        == "schema_version: 1\ntasks:\n  - cache-expiry\n"
    )
    b = run(a.after, {"op": "add_regression_test", "task_id": "off-by-one"})
    assert text(b.after, "skillci/evals/regression.yaml") == (
        "schema_version: 1\ntasks:\n  - cache-expiry\n  - off-by-one\n"
    )
    assert b.after.eval_list("regression").tasks == ["cache-expiry", "off-by-one"]
    with pytest.raises(
        PatchError, match=r"'cache-expiry' is already in skillci/evals/regression.yaml"
    ):
        run(b.after, {"op": "add_regression_test", "task_id": "cache-expiry"})


def test_add_regression_test_keeps_comments_and_creates_missing_file() -> None:
    pkg = bundled().with_files(
        {"skillci/evals/regression.yaml": b"# kept\nschema_version: 1\ntasks:\n- a  # first\n"}
    )
    a = run(pkg, {"op": "add_regression_test", "task_id": "b"})
    assert (
        text(a.after, "skillci/evals/regression.yaml")
        == "# kept\nschema_version: 1\ntasks:\n- a  # first\n- b\n"
    )
    gone = bundled().with_files({"skillci/evals/regression.yaml": None})
    c = run(gone, {"op": "add_regression_test", "task_id": "b"})
    assert c.after.eval_list("regression").tasks == ["b"]


# ---------------------------------------------------------------------------- whole patches


def test_ops_apply_in_order_on_the_previous_result() -> None:
    pkg = bundled()
    after = apply(
        pkg,
        make_patch(
            {"op": "add_rule", "rule": rule("a.first")},
            {"op": "replace_rule", "rule_id": "a.first", "rule": rule("a.first", "changed")},
            {"op": "delete_rule", "rule_id": "a.first"},
        ),
    )
    assert after.files == pkg.files


def test_apply_does_not_touch_the_input_package() -> None:
    pkg = bundled()
    files = dict(pkg.files)
    apply(pkg, make_patch({"op": "delete_rule", "rule_id": "finish.report-success"}))
    assert dict(pkg.files) == files
