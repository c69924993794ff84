"""Scratch repositories for release / channel / canary tests, built from the bundled skill.

Gate reports are built the way the gate builds them (TrialOutcomes -> compute_metrics ->
decide) and stored in the trace store; the end-to-end test with a real gate run is in
test_release_real_gate.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillci.flows.canary import channel_init
from skillci.flows.context import RepoContext
from skillci.flows.gate import GATE_BLOB
from skillci.flows.release import release_pr
from skillci.forge.base import PullRequest
from skillci.gate.decision import suite_result
from skillci.gate.metrics import TrialOutcome
from skillci.gate.outcomes import Comparability
from skillci.gate.verdict import Complexity, GateReport, decide, reasons
from skillci.skill.models import ReleaseGate
from skillci.trace.models import (
    AgentRole,
    Cost,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillRef,
    new_run_id,
)
from skillci.vcs.candidate import commit_candidate
from tests.builders import run_record
from tests.conftest import ROOT

SKILL = "repo-debugger"
SKILL_DIR = f"skills/{SKILL}"
ROOT_CHANGELOG = "# skillci-scratch changelog\n\nThe project's own changelog.\n"

FINISH_RULE = """\
schema_version: 1
id: finish.report-success
status: candidate
scope:
  workflow: null
  tools: [run]
trigger:
  all:
    - code_was_edited
instruction:
  steps:
    - rerun_the_failing_test_after_every_edit
    - report_success_only_after_the_target_test_exits_0
provenance:
  introduced_by: patch-0123456789abcdef
  supporting_runs: [run-a, run-b]
  failure_class: reported_success_without_verification
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The bundled skill without finish.yaml, on main, with a root CHANGELOG.md."""
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("SKILLCI_ACTOR", "alice")
    r = tmp_path / "repo"
    r.mkdir()
    shutil.copytree(ROOT / SKILL_DIR, r / SKILL_DIR)
    (r / SKILL_DIR / "skillci" / "rules" / "finish.yaml").unlink()
    (r / "CHANGELOG.md").write_text(ROOT_CHANGELOG)
    git(r, "init", "-q", "-b", "main")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "scratch: bundled skill without one rule")
    return r


def open_candidate_pr(
    repo: Path,
    branch: str = "skillci/repo-debugger/fix-1",
    patch_id: str = "patch-0123456789abcdef",
) -> PullRequest:
    """A PR like `skillci propose` opens: finish.report-success back as a candidate, and one
    more step in test.run-smallest-first."""
    ctx = RepoContext.open(repo)
    testing = (repo / SKILL_DIR / "skillci" / "rules" / "testing.yaml").read_text()
    testing = testing.replace(
        "    - do_not_edit_code_until_failure_is_reproduced\n",
        "    - do_not_edit_code_until_failure_is_reproduced\n    - note_the_exit_code\n",
    )
    commit_candidate(
        ctx.git,
        base="main",
        branch=branch,
        skill_dir=SKILL_DIR,
        changes={
            "skillci/rules/finish.yaml": FINISH_RULE.encode(),
            "skillci/rules/testing.yaml": testing.encode(),
        },
        subject="skill(repo-debugger): verify before reporting success",
        trailers={
            "Skill-Patch-Id": patch_id,
            "Failure-Class": "reported_success_without_verification",
            "Skill": SKILL_DIR,
        },
    )
    return ctx.forge.open_pr(
        title="Verify before reporting success",
        body="evidence",
        base="main",
        head_branch=branch,
        labels=["skillci"],
        patch_id=patch_id,
        skill=SKILL,
    )


def _outcomes(
    side: str, passes: list[bool], tool_calls: int, prefix: str = "task"
) -> list[TrialOutcome]:
    return [
        TrialOutcome(
            task_id=f"{prefix}-{i}",
            side=side,  # type: ignore[arg-type]
            repeat=0,
            reward=1.0 if ok else 0.0,
            passed=ok,
            tool_calls=tool_calls,
        )
        for i, ok in enumerate(passes)
    ]


def make_report(
    repo: Path,
    pr: PullRequest,
    *,
    head_sha: str | None = None,
    accept: bool = True,
    gate_id: str = "gate-0000000000000001",
    created_at: str = "2026-11-01T10:00:00+00:00",
    inconclusive: bool = False,
) -> GateReport:
    """A gate report for the PR's head: validation 25% -> 100% (six repairs: enough
    discordant pairs for the paired test at one round, design 290), or with ``accept=False``
    a regression on the regression suite, or with ``inconclusive`` no task changing outcome
    (0% -> 0%: nothing to tell the sides apart)."""
    head_val = [False] * 8 if inconclusive else [True] * 8
    base_val = [False] * 8 if inconclusive else [True, True] + [False] * 6
    suites = [
        suite_result(
            "validation", _outcomes("base", base_val, 12) + _outcomes("head", head_val, 10)
        ),
        suite_result(
            "regression",
            _outcomes("base", [True, True], 8, "reg") + _outcomes("head", [True, accept], 8, "reg"),
        ),
        suite_result(
            "security", _outcomes("base", [True], 5, "sec") + _outcomes("head", [True], 5, "sec")
        ),
    ]
    cx = Complexity(
        bootstrap_tokens=900,
        total_tokens=3000,
        avg_loaded_tokens=None,
        rules=6,
        conflicting_rules=0,
        never_hit_rules=[],
        lint_errors=0,
    )
    comp = Comparability(comparable=True)
    verdict, checks = decide(
        gate=ReleaseGate(),
        suites=suites,
        comparability=comp,
        base=cx,
        head=cx,
        guard_verdict="pass",
        same_instance=None,
    )
    report = GateReport(
        gate_id=gate_id,
        skill=SKILL,
        base_ref="main",
        head_ref=head_sha or pr.head_sha,
        base_sha=pr.base_sha,
        head_sha=head_sha or pr.head_sha,
        created_at=created_at,
        student="sim/student",
        repeat=1,
        verdict=verdict,
        reasons=reasons(checks),
        checks=checks,
        suites=suites,
        comparability=comp,
        base_complexity=cx,
        head_complexity=cx,
        guard_verdict="pass",
    )
    want = "inconclusive" if inconclusive else "accept" if accept else "reject"
    assert report.verdict == want, report.reasons
    RepoContext.open(repo).store.put_blob(GATE_BLOB, report, key=gate_id, replace=True)
    return report


def production_record(
    version: str,
    passed: bool,
    *,
    task: str = "req",
    tokens: int = 1000,
    latency: float = 2.0,
    created_at: datetime | None = None,
) -> RunRecord:
    return run_record(
        run_id=new_run_id(),
        task_id=task,
        agent_role=AgentRole.production,
        model=ModelInfo(route="prod/student", quantization="int8"),
        runtime=RuntimeInfo(
            harness="prod-agent",
            skill=SkillRef(name=SKILL, version=version, content_hash="h" * 64),
        ),
        passed=passed,
        cost=Cost(input_tokens=tokens, output_tokens=0, wall_time_sec=latency),
        created_at=created_at or datetime.now(UTC),
    )


def write_jsonl(path: Path, records: list[RunRecord]) -> Path:
    path.write_text("".join(json.dumps(r.model_dump(mode="json")) + "\n" for r in records))
    return path


@pytest.fixture
def released(repo: Path) -> Path:
    """stable = 0.7.0 (channel init), then PR #1 released as 0.7.1 through a passing gate."""
    ctx = RepoContext.open(repo)
    assert channel_init(ctx, SKILL, actor="alice") is not None
    pr = open_candidate_pr(repo)
    make_report(repo, pr)
    release_pr(ctx, pr.number)
    return repo
