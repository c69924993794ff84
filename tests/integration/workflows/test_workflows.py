"""Our GitHub Actions workflows, run job by job against the fake GitHub API.

Every ``run:`` step is the real ``skillci`` command of the workflow file, executed by bash
with a synthesized event payload (GITHUB_EVENT_PATH), GITHUB_OUTPUT and
GITHUB_STEP_SUMMARY files, and GITHUB_API_URL pointing at the fake
(tests/integration/workflows/actions_runner.py says what is simulated).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from skillci.flows.demo import OVERFIT_RULE
from skillci.forge.github import GitHubForge
from skillci.gate.verdict import GateReport
from tests.fakes.github_api import FakeGitHub
from tests.integration.github.conftest import make_forge
from tests.integration.workflows.actions_runner import JobResult, Machine, WorkflowRun
from tests.integration.workflows.conftest import WORKFLOWS

TASK = "py-page-count"  # fails without the finish rule: propose has something to fix
STICKY = "<!-- skillci:gate-report -->"


def bare_git(m: Machine, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=m.bare, check=True, capture_output=True, text=True
    ).stdout.strip()


def ok(job: JobResult) -> JobResult:
    bad = [s for s in job.steps if s.outcome == "failure"]
    assert job.result == "success", "\n".join(
        f"--- {s.name} (exit {s.rc})\n{s.stdout[-3000:]}\n{s.stderr[-3000:]}" for s in bad
    )
    return job


def pr_event(fake: FakeGitHub, number: int, action: str, **extra: Any) -> dict[str, Any]:
    p = fake.pulls[number]
    return {
        "action": action,
        "number": number,
        "pull_request": {
            "number": number,
            "state": p.state,
            "merged": p.merged_at is not None,
            "base": {"ref": p.base_ref, "sha": p.base_sha},
            "head": {"ref": p.head_ref, "sha": p.head_sha},
            "labels": [{"name": n} for n in p.labels],
        },
        **extra,
    }


def propose(m: Machine, **inputs: str) -> JobResult:
    run = WorkflowRun(
        m,
        WORKFLOWS / "skill-propose.yml",
        "workflow_dispatch",
        {"inputs": {"skill": "repo-debugger", "task": "", "suite": "", **inputs}},
    )
    listed = ok(run.run_job("skills"))
    assert json.loads(listed.outputs["skills"]) == ["skills/repo-debugger"]
    (job,) = run.run_all("propose")
    return ok(job)


def gate_pr(m: Machine, fake: FakeGitHub, number: int) -> WorkflowRun:
    """skill-pr.yml: plan, the shard matrix, merge."""
    run = WorkflowRun(
        m, WORKFLOWS / "skill-pr.yml", "pull_request", pr_event(fake, number, "opened")
    )
    ok(run.run_job("plan"))
    run_rounds(run)
    run.run_job("merge")  # exit 1 on a rejected gate: the report is uploaded all the same
    return run


#: skillci-gate.yml's jobs between plan and merge, in order (docs/design/417)
ROUND_JOBS = ("round-1", "decide-1", "round-2", "decide-2", "round-3")


def run_rounds(run: WorkflowRun) -> list[str]:
    """The gate's rounds and the decisions between them, as GitHub orders them; the round
    jobs that ran (a round after a decision is skipped)."""
    ran = []
    for name in ROUND_JOBS:
        for job in run.run_all(name):
            if job.result != "skipped":
                ok(job)
                ran.append(name)
    return sorted(set(ran), key=ROUND_JOBS.index)


def report(m: Machine, fake: FakeGitHub, pr_run: WorkflowRun, number: int) -> JobResult:
    """skill-report.yml on workflow_run of ``pr_run`` (a fork-style payload: no PR list)."""
    head = fake.pulls[number].head_sha
    event = {
        "action": "completed",
        "workflow_run": {
            "id": pr_run.run_id,
            "path": ".github/workflows/skill-pr.yml",
            "event": "pull_request",
            "conclusion": pr_run.jobs["merge"].result,
            "head_sha": head,
            "html_url": f"{fake.repo_web}/actions/runs/{pr_run.run_id}",
            "pull_requests": [],
        },
    }
    return WorkflowRun(m, WORKFLOWS / "skill-report.yml", "workflow_run", event).run_job("report")


def release(m: Machine, fake: FakeGitHub, number: int) -> WorkflowRun:
    """skill-release.yml on the ``skillci:accept`` label: gate job, then release job."""
    event = pr_event(fake, number, "labeled", label={"name": "skillci:accept"})
    run = WorkflowRun(m, WORKFLOWS / "skill-release.yml", "pull_request", event)
    run.run_job("gate")  # exit 1 when the gate rejects; the report is uploaded anyway
    run.run_job("release")
    return run


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_propose_review_release_through_the_workflows(github: tuple[FakeGitHub, Machine]) -> None:
    fake, m = github
    main_before = bare_git(m, "rev-parse", "main")

    # skill-propose.yml: the candidate is pushed through the API, then its PR opened
    job = propose(m, task=TASK)
    assert "opened PR #1" in job.step("Propose").stdout
    pr = fake.pulls[1]
    assert "skillci" in pr.labels and pr.head_ref.startswith("skillci/repo-debugger/")
    assert bare_git(m, "rev-parse", f"refs/heads/{pr.head_ref}") == pr.head_sha

    # skill-pr.yml: lint, plan 3 shards, run them, merge into one report + HTML
    pr_run = gate_pr(m, fake, 1)
    plan = pr_run.jobs["plan"]
    matrix = json.loads(plan.outputs["matrix"])
    assert [e["shard"] for e in matrix["include"]] == ["0/3", "1/3", "2/3"]
    assert plan.outputs["skill"] == "skills/repo-debugger"  # the skill folder
    merge = ok(pr_run.jobs["merge"])
    art = WorkflowRun.artifacts_of(m, pr_run.run_id)
    names = {p.name for p in art.iterdir()}
    assert {"eval-r1-0", "eval-r1-1", "eval-r1-2", "skillci-gate-report"} <= names
    rounds = {n.split("-")[1] for n in names - {"skillci-gate-report"}}
    assert names - {"skillci-gate-report"} == {f"eval-{r}-{i}" for r in rounds for i in range(3)}
    gate = GateReport.model_validate_json((art / "skillci-gate-report" / "report.json").read_text())
    assert gate.verdict == "accept" and gate.head_sha == pr.head_sha
    assert (art / "skillci-gate-report" / "html" / "index.html").is_file()
    sharding = gate.config["sharding"]
    assert isinstance(sharding, dict) and sharding["shards"] == 3
    assert "skillci gate" in merge.summary

    # skill-report.yml: sticky comment + status, PR found from the head sha alone
    ok(report(m, fake, pr_run, 1))
    comments = [c for c in fake.comments.values() if c.issue == 1]
    assert len(comments) == 1 and comments[0].body.startswith(STICKY)
    assert "ACCEPT" in comments[0].body and str(pr_run.run_id) in comments[0].body
    assert fake.statuses[pr.head_sha][-1]["state"] == "success"
    assert fake.statuses[pr.head_sha][-1]["context"] == "skillci/gate"

    # skill-release.yml: gate again (trusted job), then merge, tag, release, channel refs
    rel = release(m, fake, 1)
    ok(rel.jobs["gate"])
    out = ok(rel.jobs["release"]).step("Release").stdout
    assert "released repo-debugger@" in out
    merged = fake.pulls[1]
    assert merged.merged_at is not None and merged.merge_commit_sha == bare_git(
        m, "rev-parse", "main"
    )
    assert bare_git(m, "rev-parse", "main^") == main_before  # one squash commit
    tags = bare_git(m, "tag", "--list", "repo-debugger@*").split()
    assert len(tags) == 2  # the new release and the stable version it replaced
    new_tag = max(tags)
    assert bare_git(m, "cat-file", "-t", f"refs/tags/{new_tag}") == "tag"
    assert bare_git(m, "rev-parse", f"{new_tag}^{{commit}}") == merged.merge_commit_sha
    assert [r["tag_name"] for r in fake.releases.values()] == [new_tag]
    assert bare_git(m, "for-each-ref", "refs/skillci/channel-log/").strip()

    # skill-canary.yml: a maintainer starts a canary of the release and pushes the refs;
    # the scheduled run lists it and analyses it (no production records: inconclusive)
    dev = m.tmp / "dev"
    subprocess.run(["git", "clone", "-q", str(m.bare), str(dev)], check=True)
    subprocess.run(
        ["git", "fetch", "-q", "origin", "refs/skillci/*:refs/skillci/*"], cwd=dev, check=True
    )
    start = subprocess.run(
        [sys.executable, "-m", "skillci", "canary", "start", new_tag, "--weight", "50"],
        cwd=dev,
        capture_output=True,
        text=True,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"},
    )
    assert start.returncode == 0, start.stderr
    subprocess.run(
        ["git", "push", "-q", "origin", "refs/skillci/*:refs/skillci/*"], cwd=dev, check=True
    )
    canary = WorkflowRun(m, WORKFLOWS / "skill-canary.yml", "schedule", {"schedule": "17 * * * *"})
    assert canary.run_job("skills").result == "skipped"  # propose: false
    listed = ok(canary.run_job("canaries"))
    assert json.loads(listed.outputs["skills"]) == ["repo-debugger"]
    (analyzed,) = canary.run_all("canary")
    assert "INCONCLUSIVE" in ok(analyzed).step("Analyze").stdout


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_closed_patch_is_not_proposed_again(
    github: tuple[FakeGitHub, Machine], tmp_path: Path
) -> None:
    """The trace store is kept between propose runs (e.g. actions/cache of .skillci): the
    same trials, the same patch id, and GitHub's closed PR refuses it."""
    fake, m = github
    m.extra_env["SKILLCI_HOME"] = str(tmp_path / "kept-state")
    propose(m, task=TASK)
    forge = make_forge(fake)
    forge.close(1, "rejected by a maintainer")
    job = propose(m, task=TASK)
    assert "rejected in PR #1 (closed)" in job.step("Propose").stdout
    assert list(fake.pulls) == [1]


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_closed_patch_is_not_proposed_again_from_a_fresh_machine(
    github: tuple[FakeGitHub, Machine],
) -> None:
    fake, m = github
    propose(m, task=TASK)
    make_forge(fake).close(1, "rejected by a maintainer")
    propose(m, task=TASK)
    assert list(fake.pulls) == [1]


@pytest.mark.parametrize("github", ["full"], indirect=True)
def test_rejected_pr_is_closed_by_the_release_workflow(
    github: tuple[FakeGitHub, Machine], tmp_path: Path
) -> None:
    fake, m = github
    work = tmp_path / "dev"
    subprocess.run(["git", "clone", "-q", str(m.bare), str(work)], check=True)
    rule = work / "skills" / "repo-debugger" / "skillci" / "rules" / "overfit.yaml"
    rule.write_text(OVERFIT_RULE)
    for args in (
        ["checkout", "-q", "-b", "overfit"],
        ["add", "-A"],
        ["commit", "-qm", "skill(repo-debugger): fast path"],
        ["push", "-q", "origin", "overfit"],
    ):
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    forge: GitHubForge = make_forge(fake)
    n = forge.open_pr(
        title="skill(repo-debugger): fast path",
        body="by hand",
        base="main",
        head_branch="overfit",
        labels=["skillci"],
        patch_id="overfit-1",
        skill="skills/repo-debugger",
    ).number

    pr_run = gate_pr(m, fake, n)
    assert pr_run.jobs["merge"].result == "failure"  # exit 1: rejected (a verdict)
    assert pr_run.jobs["merge"].step("Merge").rc == 1
    ok(report(m, fake, pr_run, n))
    assert fake.statuses[fake.pulls[n].head_sha][-1]["state"] == "failure"

    rel = release(m, fake, n)
    assert rel.jobs["gate"].step("Gate").rc == 1  # rejected again by the trusted gate
    step = rel.jobs["release"].step("Release")
    assert step.rc == 1 and f"closed PR #{n}" in step.stdout, step.stderr
    closed = fake.pulls[n]
    assert closed.state == "closed" and closed.merged_at is None
    assert any("Closed by `skillci release`" in c.body for c in fake.comments.values())
    assert (
        subprocess.run(
            ["git", "rev-parse", "--verify", "--quiet", "refs/heads/overfit"],
            cwd=m.bare,
            check=False,
        ).returncode
        != 0
    )
    assert bare_git(m, "tag", "--list").strip() == ""
