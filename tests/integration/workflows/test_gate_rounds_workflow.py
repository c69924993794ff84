"""skillci-gate.yml in rounds (docs/design/417), replayed by the offline Actions runner: a
sharded gate whose first round decides dispatches no second round, and its merged report
is the unsharded ``skillci gate``'s."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from skillci.flows.demo import OVERFIT_RULE
from skillci.flows.gate_shard import comparable
from skillci.gate.verdict import GateReport
from tests.fakes.github_api import FakeGitHub
from tests.integration.github.conftest import make_forge
from tests.integration.loop.conftest import write_suites
from tests.integration.workflows.actions_runner import Machine, WorkflowRun
from tests.integration.workflows.conftest import WORKFLOWS
from tests.integration.workflows.test_workflows import ROUND_JOBS, ok, pr_event, run_rounds

#: one suite: a pair the base wins (py-window-end breaks) and a concordant one; the paired
#: test rejects at round 1 of 3, so the gate has decided after round 1
SUITE = {"regression": ["py-window-end", "cfg-bool-flag"]}
SHARDS = 2


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def _caller(tmp_path: Path, suites: str = "regression") -> Path:
    """A repository's skill-pr.yml calling (a copy of) our skillci-gate.yml with one suite."""
    flows = tmp_path / "caller" / ".github" / "workflows"
    flows.mkdir(parents=True)
    shutil.copy(WORKFLOWS / "skillci-gate.yml", flows / "skillci-gate.yml")
    caller = {
        "name": "skill-pr",
        "on": {"pull_request": {}},
        "permissions": {},
        "jobs": {
            "gate": {
                "uses": "./.github/workflows/skillci-gate.yml",
                "permissions": {"contents": "read"},
                "with": {"skillci-install": ".", "shards": SHARDS, "suites": suites},
            }
        },
    }
    (flows / "skill-pr.yml").write_text(yaml.safe_dump(caller, sort_keys=False))
    return flows / "skill-pr.yml"


def _open_pr(
    fake: FakeGitHub, m: Machine, work: Path, suites: dict[str, list[str]] | None = None
) -> int:
    _git(work.parent, "clone", "-q", str(m.bare), str(work))
    write_suites(work, suites or SUITE)
    _git(work, "add", "-A")
    _git(work, "commit", "-q", "--allow-empty", "-m", "evals: the gate's suites")
    _git(work, "push", "-q", "origin", "main")
    (work / "skills" / "repo-debugger" / "skillci" / "rules" / "overfit.yaml").write_text(
        OVERFIT_RULE
    )
    _git(work, "checkout", "-q", "-b", "fast-path")
    _git(work, "add", "-A")
    _git(work, "commit", "-qm", "skill(repo-debugger): fast path")
    _git(work, "push", "-q", "origin", "fast-path")
    return make_forge(fake).open_pr(
        title="skill(repo-debugger): fast path", body="by hand", base="main",
        head_branch="fast-path", labels=[],
    ).number  # fmt: skip


@pytest.mark.slow  # > 20 s: 62-145 s wall (the gate sharded in the runner, then unsharded)
@pytest.mark.parametrize("github", ["full"], indirect=True)
def test_a_decided_first_round_dispatches_no_second(
    github: tuple[FakeGitHub, Machine], tmp_path: Path
) -> None:
    fake, m = github
    work = tmp_path / "dev"
    n = _open_pr(fake, m, work)
    pr = fake.pulls[n]

    run = WorkflowRun(m, _caller(tmp_path), "pull_request", pr_event(fake, n, "opened"))
    matrix = json.loads(ok(run.run_job("plan")).outputs["matrix"])
    assert [e["shard"] for e in matrix["include"]] == ["0/2", "1/2"]
    assert run_rounds(run) == ["round-1", "decide-1"]
    assert run.jobs["decide-1"].outputs["decided"] == "true"
    assert json.loads(run.jobs["decide-1"].outputs["matrix"]) == {"include": []}  # no shard left
    for later in ("round-2", "decide-2", "round-3"):
        assert run.jobs[later].result == "skipped", later
    merge = run.run_job("merge")  # runs although the later rounds were skipped
    assert merge.step("Merge").rc == 1  # exit 1: rejected (a verdict)
    art = WorkflowRun.artifacts_of(m, run.run_id)
    assert sorted(p.name for p in art.iterdir()) == [
        "eval-r1-0",
        "eval-r1-1",
        "skillci-gate-report",
    ]
    sharded = GateReport.model_validate_json(
        (art / "skillci-gate-report" / "report.json").read_text()
    )
    sharding = sharded.config["sharding"]
    assert isinstance(sharding, dict)
    # 2 tasks x 3 base + head round 1 only: fewer than the one-shot plan's 2 x (3 + 3)
    assert sharding["trials"] == 2 * 3 + 2 < 2 * (3 + 3)
    assert sharding["unused_trials"] == 0 and sharding["rounds"] == 1

    # the unsharded `skillci gate` on the same commits, flags as the workflow's
    _git(work, "fetch", "-q", "origin")
    gate = subprocess.run(
        [
            sys.executable, "-m", "skillci", "gate", "--skill", "skills/repo-debugger",
            "--suites", "regression", "--model", "sim/student", "--judge", "sim/judge",
            "--base", pr.base_sha, "--head", pr.head_sha, "--json",
        ],
        cwd=work, capture_output=True, text=True, check=False,
        env={**os.environ, "SKILLCI_HOME": str(tmp_path / "unsharded-home")},
    )  # fmt: skip
    assert gate.returncode == 1, gate.stderr  # rejected
    unsharded = GateReport.model_validate_json(gate.stdout)
    assert sharded.verdict == unsharded.verdict == "reject"
    want = comparable(unsharded)
    # how --model was given is not part of a plan (GateSpec): never in a merged report
    assert want["config"].pop("student_source") == "--model"  # type: ignore[attr-defined]
    assert comparable(sharded) == want


#: regression decides at round 1 (the base wins its one pair); security's one concordant
#: pair leaves its test open through every round (as in test_sharded_rounds.py)
OPEN_SUITES = {"regression": ["py-window-end"], "security": ["sec-secret-reveal"]}


@pytest.mark.slow  # > 20 s: three rounds of shard jobs and two decisions in the runner
@pytest.mark.parametrize("github", ["full"], indirect=True)
def test_a_later_round_runs_only_the_shards_with_open_units(
    github: tuple[FakeGitHub, Machine], tmp_path: Path
) -> None:
    """Design 427: decide-K's matrix is the next round's dispatch, the shards holding a unit
    still open — one of the two here — and the merge takes the rounds as they ran."""
    fake, m = github
    n = _open_pr(fake, m, tmp_path / "dev", OPEN_SUITES)
    run = WorkflowRun(m, _caller(tmp_path, "regression,security"), "pull_request",
                      pr_event(fake, n, "opened"))  # fmt: skip
    matrix = json.loads(ok(run.run_job("plan")).outputs["matrix"])
    assert [e["shard"] for e in matrix["include"]] == ["0/2", "1/2"]
    assert run_rounds(run) == list(ROUND_JOBS)  # security stays open to the last round
    first, second = (json.loads(run.jobs[d].outputs["matrix"]) for d in ("decide-1", "decide-2"))
    assert len(first["include"]) == 1 and second == first  # one shard of two, both times
    (open_index,) = [e["index"] for e in first["include"]]
    merge = run.run_job("merge")
    assert merge.step("Merge").rc == 1  # exit 1: rejected (a verdict), as unsharded
    art = WorkflowRun.artifacts_of(m, run.run_id)
    assert sorted(p.name for p in art.iterdir()) == sorted(
        ["eval-r1-0", "eval-r1-1", f"eval-r2-{open_index}", f"eval-r3-{open_index}",
         "skillci-gate-report"]
    )  # fmt: skip
    sharding = GateReport.model_validate_json(
        (art / "skillci-gate-report" / "report.json").read_text()
    ).config["sharding"]
    assert isinstance(sharding, dict)
    assert sharding["rounds"] == 3 and sharding["unused_trials"] == 0
