"""The loop arms of ``skillci bench`` on real sim trials: each gate-side switch changes the loop.

The bundled tasks with smaller suites (one failing training task; a validation suite of the
five half-open tasks a related-tests rule repairs -- the fewest discordant pairs the paired
test needs to accept a deterministic student, design 290 -- and two it must not break; one
regression and one security task) so the loop runs in minutes; one state dir
for the module, so arms share the trials they have in common (as in ``skillci bench``).
"""

from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from skillci.compile.judge import sim_judge
from skillci.flows.bench import BenchOptions
from skillci.flows.bench_loop import (
    ABLATIONS,
    TOKEN_CHECK,
    LoopRun,
    failed_checks,
    judge,
    run_loop,
)
from skillci.patch.apply import apply
from skillci.skill.models import Lifecycle
from skillci.skill.package import SkillPackage
from tests.conftest import ROOT
from tests.integration.test_bench_baselines import fake_teacher  # noqa: F401 - a fixture

SUITES = {
    "discovery": ["py-half-open"],
    "validation": [
        "py-version-range",
        "py-score-band",
        "py-price-tier",
        "py-port-span",
        "py-shift-hours",
        "py-page-count",
        "cfg-unknown-key",
    ],
    "regression": ["py-retryable-status"],
    "security": ["sec-secret-reveal"],
}


@pytest.fixture(scope="module")
def settings(tmp_path_factory: pytest.TempPathFactory) -> BenchOptions:
    src = tmp_path_factory.mktemp("src")
    shutil.copytree(ROOT / "evals", src / "evals", ignore=shutil.ignore_patterns("__pycache__"))
    for name, tasks in SUITES.items():
        (src / "evals" / "suites" / f"{name}.yaml").write_text(
            f"schema_version: 1\nname: {name}\nsplit: {name}\ntasks:\n"
            + "".join(f"  - {t}\n" for t in tasks)
        )
    return BenchOptions(root=src, home=src / ".skillci", skill=ROOT / "skills" / "repo-debugger")


_runs: dict[str, LoopRun] = {}


def loop(arm: str, settings: BenchOptions) -> LoopRun:
    if arm not in _runs:
        _runs[arm] = run_loop(arm, settings)
    return _runs[arm]


def new_rules(run: LoopRun) -> list[tuple[str, Lifecycle, str | None]]:
    pkg = SkillPackage.from_dir(run.skill)
    return [
        (
            lr.rule.id,
            lr.rule.status,
            lr.rule.provenance.last_verified_on if lr.rule.provenance else None,
        )
        for lr in pkg.rules
        if lr.rule.id in run.accepted_rules
    ]


@pytest.mark.slow  # ~10 sim trials
def test_skillci_arm_proposes_gates_and_promotes(settings: BenchOptions) -> None:
    run = loop("skillci", settings)
    assert run.teacher_runs == 1
    (d,) = run.decisions
    assert d.status == "proposed" and d.verdict == "accept", d
    (gate,) = run.gates
    assert [s.suite for s in gate.suites] == ["validation", "regression", "security"]
    assert d.by == f"gate {gate.gate_id}"
    # accepted rules are promoted candidate -> active and stamped with the gate, as release does
    assert run.accepted_rules and new_rules(run) == [
        (r, Lifecycle.active, gate.gate_id) for r in run.accepted_rules
    ]
    assert run.skill.is_dir() and not str(run.skill).startswith(str(ROOT))


@pytest.mark.slow
def test_no_regression_suite_gate_skips_it(settings: BenchOptions) -> None:
    run = loop("no-regression-suite", settings)
    (gate,) = run.gates
    assert [s.suite for s in gate.suites] == ["validation", "security"]
    assert loop("skillci", settings).gates[0].gate_id != gate.gate_id


@pytest.mark.slow
def test_no_token_budget_ignores_the_token_check(settings: BenchOptions) -> None:
    (gate,) = loop("skillci", settings).gates
    grown = gate.model_copy(
        update={
            "checks": [
                c.model_copy(update={"passed": False, "status": "fail"})
                if c.name == TOKEN_CHECK
                else c
                for c in gate.checks
            ]
        }
    )
    assert TOKEN_CHECK in [c.name for c in gate.checks]
    assert [c.name for c in failed_checks(grown, ABLATIONS["skillci"])] == [TOKEN_CHECK]
    assert failed_checks(grown, ABLATIONS["no-token-budget"]) == []
    assert ABLATIONS["no-token-budget"].loop.lifted_limits  # the patch's token budget too


@pytest.mark.slow  # the activated candidate is a new skill: its gate re-runs the head side
def test_no_lifecycle_lands_rules_active_and_unstamped(settings: BenchOptions) -> None:
    run = loop("no-lifecycle", settings)
    (d,) = run.decisions
    assert d.verdict == "accept"
    assert run.accepted_rules and new_rules(run) == [
        (r, Lifecycle.active, None) for r in run.accepted_rules
    ]
    # the gate saw the rule already active (no candidate stage)
    (gate,) = run.gates
    assert gate.gate_id != loop("skillci", settings).gates[0].gate_id


@pytest.mark.slow
def test_llm_only_verification_runs_no_gate(settings: BenchOptions) -> None:
    run = loop("llm-only-verification", settings)
    assert run.gates == []
    (d,) = run.decisions
    assert d.by == "judge sim/teacher" and d.verdict == "accept"
    assert new_rules(run) == [(r, Lifecycle.active, None) for r in run.accepted_rules]


@pytest.mark.slow
def test_a_real_teacher_route_judges_from_the_diff(
    settings: BenchOptions,
    fake_teacher,  # type: ignore[no-untyped-def]  # noqa: F811
    tmp_path: Path,
) -> None:
    run = loop("llm-only-verification", settings)
    prop = next(p for p in run.proposals if p.ready)
    before = SkillPackage.from_dir(settings.skill)
    after = apply(before, prop.patches[0])
    verdict = json.dumps({"accept": False, "reason": "written for one task"})
    server = fake_teacher(["looks fine to me", verdict])
    opts = dataclasses.replace(settings, teacher="fake/teacher", home=tmp_path / "a")
    d = judge(opts, prop, before, after)
    assert (d.verdict, d.by, d.reasons) == (
        "reject",
        "judge fake/teacher",
        ["written for one task"],
    )
    assert len(server.requests) == 2  # re-asked once after the answer that was not JSON
    user = server.requests[0]["messages"][1]["content"]
    assert "UNTRUSTED-DATA diff" in user and prop.task_id in user and "+" in user
    # an answer that never parses rejects; an accept is taken as it is
    fake_teacher(["no", "still no"])
    d = judge(dataclasses.replace(opts, home=tmp_path / "b"), prop, before, after)
    assert d.verdict == "reject" and "no valid verdict" in d.reasons[0]
    fake_teacher([json.dumps({"accept": True, "reason": "general"})])
    d = judge(dataclasses.replace(opts, home=tmp_path / "c"), prop, before, after)
    assert d.verdict == "accept"
    # the sim judge: only a proposal that repaired its own task with a clean guard
    assert (
        sim_judge(prop)[0]
        and not sim_judge(prop.model_copy(update={"status": "no_improvement"}))[0]
    )
