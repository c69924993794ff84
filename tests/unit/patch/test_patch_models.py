"""The patch file format: validation, content id, YAML round trip."""

from __future__ import annotations

import pytest

from skillci.errors import PatchError
from skillci.patch.models import OP_NAMES, Op, Patch, dump_patch, load_patch
from tests.unit.patch.helpers import make_patch, rule

PATCH_YAML = """\
schema_version: 1
failure_class: verification_missing
rationale: students stop after apply_patch
supporting_runs: [run-1]
author: {compiler: template, model: sim/teacher}
created_at: 2026-11-01T10:00:00Z
ops:
  - op: add_rule
    rule:
      id: verify.rerun-after-edit
      instruction: {steps: [rerun_the_target_test]}
  - op: add_regression_test
    task_id: cache-expiry
"""


def test_load_fills_the_content_id() -> None:
    p = load_patch(PATCH_YAML)
    assert p.id is not None and p.id.startswith("patch-") and len(p.id) == len("patch-") + 16
    assert p.author.model == "sim/teacher"
    assert [op.op for op in p.ops] == ["add_rule", "add_regression_test"]


def test_id_ignores_created_at_and_changes_with_content() -> None:
    a = load_patch(PATCH_YAML)
    b = load_patch(PATCH_YAML.replace("2026-11-01T10:00:00Z", "2027-01-01T00:00:00Z"))
    c = load_patch(PATCH_YAML.replace("cache-expiry", "cache-expiry-2"))
    assert a.id == b.id
    assert a.id != c.id


def test_behaviour_id_names_the_change_not_the_compilation() -> None:
    a = load_patch(PATCH_YAML)
    other_runs = load_patch(
        PATCH_YAML.replace("[run-1]", "[run-7, run-8]")
        .replace("students stop after apply_patch", "seen on another machine")
        .replace("model: sim/teacher", "model: gpt-x")
    )
    assert a.id != other_runs.id  # a different compiled artifact ...
    assert a.behaviour_id() == other_runs.behaviour_id()  # ... of the same change
    changed = load_patch(PATCH_YAML.replace("rerun_the_target_test", "rerun_all_tests"))
    reclassed = load_patch(PATCH_YAML.replace("verification_missing", "wrong_target_file"))
    assert len({a.behaviour_id(), changed.behaviour_id(), reclassed.behaviour_id()}) == 3


def test_stale_id_is_refused_with_its_line() -> None:
    stale = "id: patch-0000000000000000\n" + PATCH_YAML
    with pytest.raises(PatchError, match="does not match the content") as ei:
        load_patch(stale, "P.yaml")
    assert ei.value.file == "P.yaml" and ei.value.line == 1
    good = load_patch(PATCH_YAML)
    assert load_patch(f"id: {good.id}\n" + PATCH_YAML).id == good.id


def test_dump_round_trips() -> None:
    p = load_patch(PATCH_YAML)
    again = load_patch(dump_patch(p))
    assert again == p


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (PATCH_YAML.replace("op: add_rule", "op: rewrite_everything"), "ops.0"),
        (
            PATCH_YAML.replace("rationale:", "mood: happy\nrationale:"),
            "mood: Extra inputs are not permitted",
        ),
        (
            PATCH_YAML.replace("schema_version: 1", "schema_version: 2"),
            "unsupported patch schema_version 2",
        ),
        (PATCH_YAML.split("ops:")[0] + "ops: []\n", "ops: List should have at least 1 item"),
        ("- just a list\n", "must be a YAML mapping"),
        (PATCH_YAML.replace("id: verify.rerun-after-edit", "id: Not An Id"), "ops.0.rule.id"),
    ],
)
def test_invalid_patches_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(PatchError, match=message) as ei:
        load_patch(text, "P.yaml")
    assert ei.value.file == "P.yaml" and ei.value.line is not None


def test_error_line_points_into_the_ops() -> None:
    with pytest.raises(PatchError) as ei:
        load_patch(PATCH_YAML.replace("task_id: cache-expiry", "task_id: ''"), "P.yaml")
    assert ei.value.line == PATCH_YAML.splitlines().index("    task_id: cache-expiry") + 1


def test_failure_classes_collects_patch_and_op_classes() -> None:
    p = make_patch({"op": "add_rule", "rule": rule("a.b"), "failure_class": "other_class"})
    assert p.failure_classes == ["verification_missing", "other_class"]
    q = make_patch({"op": "add_rule", "rule": rule("a.b")}, failure_class=["x", "y"])
    assert q.failure_classes == ["x", "y"]
    assert q.primary_failure_class == "x"


def test_every_op_name_is_in_the_union() -> None:
    import typing

    union = typing.get_args(typing.get_args(Op)[0])
    assert sorted(m.model_fields["op"].default for m in union) == sorted(OP_NAMES)
    assert Patch.model_fields["schema_version"].default == 1
