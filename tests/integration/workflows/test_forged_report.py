"""The forged-report attack of issue 16, replayed against the trusted report workflow.

A pull request that the gate rejects (an over-fitting rule regresses a task) tries to get
``skillci/gate`` = success:

1. it edits ``skill-pr.yml`` (a fork can: on ``pull_request`` the workflow file comes from
   the PR) so the run uploads a report that says *accept* with every check passing;
2. it replays the report locally with ``skillci review --from-report forged.json``;
3. without touching the workflow, its run's artifacts are tampered with afterwards (as
   a trial escaping its sandbox could): the report flipped, and one trial's record handed
   in for another.

skill-report.yml (the base branch's file, with write access) must never post success.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillci.flows.demo import OVERFIT_RULE
from skillci.forge.github import GitHubForge
from tests.fakes.github_api import FakeGitHub
from tests.integration.github.conftest import make_forge
from tests.integration.workflows.actions_runner import Machine, WorkflowRun
from tests.integration.workflows.conftest import WORKFLOWS
from tests.integration.workflows.test_workflows import (
    STICKY,
    gate_pr,
    ok,
    pr_event,
    report,
    run_rounds,
)

#: What the PR's own workflow does after the real merge: rewrite the report to "accept".
FORGE_REPORT = (
    "import json, pathlib; p = pathlib.Path('gate/report.json'); d = json.loads(p.read_text()); "
    "d['verdict'] = 'accept'; d['reasons'] = []; "
    "[c.update(passed=True) for c in d['checks']]; p.write_text(json.dumps(d))"
)


def forged_workflow() -> dict[str, Any]:
    """skill-pr.yml as a fork would edit it: the reusable gate inlined (its inputs as
    literals), and the merge job forging the uploaded report."""
    text = (WORKFLOWS / "skillci-gate.yml").read_text()
    declared = yaml.safe_load(text)[True]["workflow_call"]["inputs"]
    for k, spec in declared.items():
        expr = "${{ inputs." + k + " }}"
        text = text.replace(expr, json.dumps(str(spec.get("default", "."))))
    wf = yaml.safe_load(text)
    del wf[True]
    wf = {"name": "skill-pr", "on": {"pull_request": {}}, **wf}
    steps = wf["jobs"]["merge"]["steps"]
    at = next(i for i, s in enumerate(steps) if s.get("id") == "merge") + 1
    steps.insert(
        at,
        {"name": "Forge", "if": "${{ !cancelled() }}", "run": f'python -c "{FORGE_REPORT}"'},
    )
    return wf


def open_overfit_pr(
    fake: FakeGitHub, m: Machine, tmp_path: Path, *, workflow: dict[str, Any] | None
) -> int:
    work = tmp_path / "dev"
    subprocess.run(["git", "clone", "-q", str(m.bare), str(work)], check=True)
    (work / "skills" / "repo-debugger" / "skillci" / "rules" / "overfit.yaml").write_text(
        OVERFIT_RULE
    )
    if workflow is not None:
        path = work / ".github" / "workflows" / "skill-pr.yml"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(workflow, sort_keys=False))
    for args in (
        ["checkout", "-q", "-b", "fast-path"],
        ["add", "-A"],
        ["commit", "-qm", "skill(repo-debugger): fast path"],
        ["push", "-q", "origin", "fast-path"],
    ):
        subprocess.run(["git", *args], cwd=work, check=True, capture_output=True)
    forge: GitHubForge = make_forge(fake)
    return forge.open_pr(
        title="skill(repo-debugger): fast path",
        body="trust me",
        base="main",
        head_branch="fast-path",
        labels=[],
    ).number


def statuses(fake: FakeGitHub, n: int) -> list[dict[str, Any]]:
    return [
        s for s in fake.statuses.get(fake.pulls[n].head_sha, []) if s["context"] == "skillci/gate"
    ]


def sticky(fake: FakeGitHub, n: int) -> str:
    (c,) = [c for c in fake.comments.values() if c.issue == n and c.body.startswith(STICKY)]
    return str(c.body)


@pytest.mark.parametrize("github", ["full"], indirect=True)
def test_forged_workflow_report_sets_no_success(
    github: tuple[FakeGitHub, Machine], tmp_path: Path
) -> None:
    fake, m = github
    forged = forged_workflow()
    n = open_overfit_pr(fake, m, tmp_path, workflow=forged)
    wf_file = tmp_path / "forged-skill-pr.yml"
    wf_file.write_text(yaml.safe_dump(forged, sort_keys=False))

    # the PR's run: the real gate rejects, then the forged step rewrites the report
    run = WorkflowRun(m, wf_file, "pull_request", pr_event(fake, n, "opened"))
    ok(run.run_job("plan"))
    run_rounds(run)
    merge = run.run_job("merge")
    assert merge.step("Merge").rc == 1  # rejected
    assert merge.step("Forge").outcome == "success"
    art = WorkflowRun.artifacts_of(m, run.run_id)
    uploaded = json.loads((art / "skillci-gate-report" / "report.json").read_text())
    assert uploaded["verdict"] == "accept" and all(c["passed"] for c in uploaded["checks"])

    # the trusted workflow: not verified (the PR changed the workflow file), never success
    job = report(m, fake, run, n)
    step = job.step("Sticky comment")
    assert step.rc == 2, step.stderr
    (st,) = statuses(fake, n)
    assert st["state"] == "error" and st["description"].startswith("not verified")
    body = sticky(fake, n)
    assert "not verified" in body and ".github/workflows/skill-pr.yml" in body
    assert "ACCEPT" not in body

    # the local replay of the forged report: refused, no status set
    forged_file = tmp_path / "forged.json"
    forged_file.write_text(json.dumps(uploaded))
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GITHUB_")},
        "GITHUB_TOKEN": m.token,
        "GITHUB_REPOSITORY": m.repository,
        "GITHUB_API_URL": m.api_url,
        "SKILLCI_GITHUB_THROTTLE": "off",
    }
    clone = tmp_path / "maintainer"
    subprocess.run(["git", "clone", "-q", str(m.bare), str(clone)], check=True)
    replay = subprocess.run(
        [
            sys.executable,
            "-m",
            "skillci",
            "review",
            "--from-report",
            str(forged_file),
            "--pr",
            str(n),
            "--forge",
            "github",
        ],
        cwd=clone,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert replay.returncode == 2, replay.stderr
    assert "cannot be verified" in replay.stderr
    assert len(statuses(fake, n)) == 1  # still only the error status


@pytest.mark.parametrize("github", ["full"], indirect=True)
def test_tampered_artifacts_of_an_honest_run_set_no_success(
    github: tuple[FakeGitHub, Machine], tmp_path: Path
) -> None:
    fake, m = github
    n = open_overfit_pr(fake, m, tmp_path, workflow=None)
    run = gate_pr(m, fake, n)
    art = WorkflowRun.artifacts_of(m, run.run_id)

    # the uploaded report flipped to accept: ignored, the verdict is recomputed (reject)
    rep = art / "skillci-gate-report" / "report.json"
    d = json.loads(rep.read_text())
    d.update(verdict="accept", reasons=[])
    rep.write_text(json.dumps(d))
    ok(report(m, fake, run, n))
    first = statuses(fake, n)[-1]
    assert first["state"] == "failure", first
    body = sticky(fake, n)
    assert "REJECT" in body and "Recomputed" in body

    # one trial's record handed in for another (a passing base record for a failing head
    # trial): the records are not the plan's trials -> error, not success
    shards = sorted(p for p in art.iterdir() if p.name.startswith("eval-"))
    swapped = False
    for shard in shards:
        result = json.loads((shard / "shard.json").read_text())
        heads = [t for t in result["trials"] if t["side"] == "head" and t["run_id"]]
        bases = [t for t in result["trials"] if t["side"] == "base" and t["run_id"]]
        if heads and bases:
            heads[0]["run_id"] = bases[0]["run_id"]
            (shard / "shard.json").write_text(json.dumps(result))
            swapped = True
            break
    assert swapped
    job = report(m, fake, run, n)
    assert job.step("Sticky comment").rc == 2
    last = statuses(fake, n)[-1]
    assert last["state"] == "error", last
    assert "not trial" in last["description"] or "differ" in sticky(fake, n)
    shutil.rmtree(art / "skillci-gate-report")  # the report file is not even needed
