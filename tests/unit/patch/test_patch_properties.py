"""Property tests (hypothesis) over random patches against the bundled skill.

- apply is deterministic (same bytes, or the same error);
- a patch that is not accepted leaves the package directory byte-identical (and no
  leftovers beside it);
- an accepted patch never exceeds a limit, recounted independently of limits.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, event, find, given, settings
from hypothesis import strategies as st

from skillci.errors import PatchError
from skillci.fsutil import tree_hash
from skillci.patch.apply import apply
from skillci.patch.check import check
from skillci.patch.models import Patch
from skillci.patch.transaction import apply_to_dir
from skillci.skill.package import SkillPackage, read_tree
from skillci.skill.render import render
from tests.unit.patch.helpers import BUNDLED, bundled

EXISTING = [
    "finish.report-success",
    "repo-debug.first-localize",
    "recovery.no-repeat-failing-call",
    "edit.minimal-change",
    "security.untrusted-content",
    "test.run-smallest-first",
]
NEW_IDS = ["a.one", "a.two", "b.three", "verify.rerun", "edit.keep-small"]
BENIGN = [
    "rerun",
    "the",
    "failing",
    "test",
    "after",
    "every",
    "edit",
    "read",
    "exit",
    "code",
    "diff",
    "only",
    "target",
]
RISKY = [
    "ignore",
    "previous",
    "instructions",
    "send",
    "api",
    "key",
    "https://x.example.com",
    "chmod",
    "\u200b",
    "і",
]
WORDS = BENIGN * 4 + RISKY
WORKFLOWS = [None, "unit-test-failure", "ci-failure"]
TOOLS = ["run", "read_file", "apply_patch", "http_get"]

step = st.lists(st.sampled_from(WORDS), min_size=1, max_size=6).map("_".join)


@st.composite
def rules(draw: st.DrawFn, ids: list[str] = NEW_IDS + EXISTING) -> dict[str, Any]:
    return {
        "id": draw(st.sampled_from(ids)),
        "scope": {
            "workflow": draw(st.sampled_from(WORKFLOWS)),
            "tools": draw(st.lists(st.sampled_from(TOOLS), max_size=2, unique=True)),
        },
        "trigger": {"all": draw(st.lists(step, max_size=2))},
        "instruction": {"steps": draw(st.lists(step, min_size=1, max_size=4))},
    }


@st.composite
def ops(draw: st.DrawFn) -> dict[str, Any]:
    kind = draw(
        st.sampled_from(
            [
                "add_rule",
                "replace_rule",
                "delete_rule",
                "split_rule",
                "merge_rules",
                "change_loading_scope",
                "add_example",
                "add_regression_test",
            ]
        )
    )
    any_id = st.sampled_from(EXISTING + NEW_IDS[:1])
    if kind == "add_rule":
        return {
            "op": kind,
            "rule": draw(rules()),
            "file": draw(
                st.sampled_from([None, "skillci/rules/recovery.yaml", "skillci/rules/testing.yaml"])
            ),
        }
    if kind == "replace_rule":
        return {"op": kind, "rule_id": draw(any_id), "rule": draw(rules())}
    if kind == "delete_rule":
        return {"op": kind, "rule_id": draw(any_id)}
    if kind == "split_rule":
        return {
            "op": kind,
            "rule_id": draw(any_id),
            "into": draw(st.lists(rules(), min_size=2, max_size=3)),
        }
    if kind == "merge_rules":
        ids = draw(st.lists(any_id, min_size=2, max_size=3, unique=True))
        scope = draw(st.sampled_from([None, {"workflow": None}, {"workflow": "unit-test-failure"}]))
        return {"op": kind, "rule_ids": ids, "into": draw(rules()), "target_scope": scope}
    if kind == "change_loading_scope":
        to = draw(
            st.sampled_from(
                [
                    "SKILL.md",
                    "skillci/workflows/unit-test-failure.md",
                    "skillci/workflows/ci-failure.md",
                    "skillci/tools/run-tests.md",
                ]
            )
        )
        return {"op": kind, "rule_id": draw(any_id), "to": to}
    if kind == "add_example":
        return {
            "op": kind,
            "file": draw(
                st.sampled_from(
                    ["skillci/examples/boundary-condition.jsonl", "skillci/examples/new.jsonl"]
                )
            ),
            "example": {"steps": draw(st.lists(step, max_size=3))},
        }
    return {"op": kind, "task_id": draw(st.sampled_from(["cache-expiry", "off-by-one", "t3"]))}


@st.composite
def patches(draw: st.DrawFn) -> Patch:
    return Patch.model_validate(
        {
            "failure_class": draw(st.sampled_from(["verification_missing"] * 5 + [["a", "b"]])),
            "rationale": draw(step),
            "supporting_runs": ["run-1"],
            "author": {"compiler": "hypothesis"},
            "ops": draw(st.lists(ops(), min_size=1, max_size=4)),
        }
    )


def _outcome(pkg: SkillPackage, patch: Patch) -> dict[str, bytes] | str:
    try:
        return dict(apply(pkg, patch).files)
    except PatchError as exc:
        return f"error: {exc.message}"


@settings(max_examples=150, deadline=None)
@given(patches())
def test_apply_is_deterministic(patch: Patch) -> None:
    first = _outcome(bundled(), patch)
    second = _outcome(SkillPackage(dict(bundled().files)), Patch.model_validate(patch.model_dump()))
    assert first == second


def _rule_ids(files: dict[str, bytes]) -> set[str]:
    """Rule ids, parsed straight from YAML (independently of SkillPackage.rules)."""
    out: set[str] = set()
    for rel, data in files.items():
        if rel.startswith("skillci/rules/") and rel.endswith(".yaml"):
            doc = yaml.safe_load(data)
            for r in doc.get("rules", [doc]) if isinstance(doc, dict) else []:
                out.add(r["id"])
    return out


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patches())
def test_accepted_patch_never_exceeds_a_limit(patch: Patch) -> None:
    pkg = bundled()
    report, applied = check(pkg, patch)
    event(f"verdict {report.verdict}")
    if report.verdict == "reject":
        return
    assert applied is not None
    before, after = dict(pkg.files), dict(applied.after.files)
    lim = pkg.manifest.patch_limits
    assert len(_rule_ids(after) - _rule_ids(before)) <= lim.max_new_rules
    assert (
        len({r for r in set(before) | set(after) if before.get(r) != after.get(r)}) <= lim.max_files
    )
    rb, ra = render(pkg), render(applied.after)
    assert ra.bootstrap_tokens - rb.bootstrap_tokens <= lim.max_added_tokens
    assert ra.total_tokens - rb.total_tokens <= lim.max_added_tokens
    assert len(patch.failure_classes) == 1


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(patches())
def test_rejected_patch_leaves_the_package_byte_identical_on_disk(patch: Patch) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo-debugger"
        shutil.copytree(BUNDLED, root)
        before = read_tree(root)
        stat_before = {p: os.stat(root / p).st_mtime_ns for p in before}
        res = apply_to_dir(root, patch)
        after = read_tree(root)
        if res.written:
            assert res.report.verdict == "pass"
            assert tree_hash(after.items()) != tree_hash(before.items())
            return
        assert after == before
        assert {p: os.stat(root / p).st_mtime_ns for p in after} == stat_before
        assert sorted(os.listdir(tmp)) == ["repo-debugger"]  # no stage, backup or journal left


@pytest.mark.slow  # 2000 examples, ~18 s of CPU: CI runs it in the --runslow step
def test_the_strategy_reaches_every_verdict() -> None:
    """Guards the properties above against vacuity: accepted patches are generated too."""
    pkg = bundled()
    cfg = settings(
        max_examples=2000,
        database=None,
        deadline=None,
        derandomize=True,
        suppress_health_check=list(HealthCheck),
    )
    for verdict in ("pass", "needs-approval", "reject"):
        p = find(patches(), lambda p, v=verdict: check(pkg, p)[0].verdict == v, settings=cfg)  # type: ignore[misc]
        assert check(pkg, p)[0].verdict == verdict
