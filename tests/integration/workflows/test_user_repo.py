"""Evidence for issue 19: a user's repository that holds only a real public skill, its
tasks and the caller files ``skillci init`` writes — no copy of skillci's workflows —
goes PR -> report -> release through the workflow runner and the fake GitHub API.

The callers name ``acme/skillci/.github/workflows/skillci-*.yml@<sha>``; the runner
resolves that repository to this checkout (``Machine.remotes``), as GitHub would fetch
skillci's repository at that commit.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.forge.github import GitHubForge
from tests.conftest import ROOT
from tests.fakes.github_api import FakeGitHub
from tests.fakes.openapi import Contract
from tests.integration.github.conftest import contract, make_forge  # noqa: F401 - fixture
from tests.integration.workflows.actions_runner import Machine, WorkflowRun
from tests.integration.workflows.test_workflows import STICKY, bare_git, ok, pr_event, run_rounds

SHA = "1111111111111111111111111111111111111111"
SKILL = "systematic-debugging"
SUITES = {
    # five tasks the added section repairs: what a deterministic student needs for the
    # paired test to accept at one round (design 290)
    "validation": [
        "py-page-count",
        "py-cache-expiry",
        "cfg-two-typos-server",
        "cfg-typo-and-flag",
        "cfg-two-typos-logging",
        "cfg-two-typos-port",
    ],
    "regression": ["cfg-bool-flag"],
}
ADDITION = """
## Before you report success

- `rerun_the_failing_test_after_every_edit`
- `if_exit_code_is_not_0_revert_or_change_the_edit_and_rerun`
- `run_git_diff_and_confirm_only_the_target_source_file_changed`
- `report_success_only_after_the_target_test_exits_0`
"""


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


def user_repo(path: Path) -> Path:
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    shutil.copytree(
        ROOT / "tests" / "fixtures" / "real-skills" / "obra" / SKILL, path / "skills" / SKILL
    )
    assert main(["init", "--repo", str(path), "--skillci", f"acme/skillci@{SHA}"]) == 0
    for tasks in SUITES.values():
        for t in tasks:
            shutil.copytree(ROOT / "evals" / "tasks" / t, path / "evals" / "tasks" / t)
    for name, tasks in SUITES.items():
        (path / "evals" / "suites" / f"{name}.yaml").write_text(
            f"schema_version: 1\nname: {name}\nsplit: {name}\ntasks:\n"
            + "".join(f"  - {t}\n" for t in tasks)
        )
    git(path, "add", "-A")
    git(path, "commit", "-qm", "my skill, skillci init, three tasks")
    return path


@pytest.fixture
def site(tmp_path: Path, contract: Contract) -> Iterator[tuple[FakeGitHub, Machine, Path]]:  # noqa: F811
    repo = user_repo(tmp_path / "my-skills")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    git(repo, "push", "-q", str(bare), "main")
    with FakeGitHub(bare, contract, owner="alice", name="my-skills") as fake:
        machine = Machine(
            bare=bare,
            api_url=fake.base_url,
            server_url=fake.web,
            repository=f"{fake.owner}/{fake.name}",
            token=fake.token,
            tmp=tmp_path / "actions",
            extra_env={"SKILLCI_GITHUB_THROTTLE": "off"},
            remotes={"acme/skillci": ROOT},
        )
        yield fake, machine, repo
    assert fake.violations == [], "\n".join(fake.violations)


@pytest.mark.slow  # the sharded gate twice (PR, release) on three tasks
@pytest.mark.timeout(1500)
def test_user_repo_pr_report_release_through_the_callers_init_wrote(
    site: tuple[FakeGitHub, Machine, Path],
) -> None:
    fake, m, repo = site
    flows = repo / ".github" / "workflows"
    assert sorted(p.name for p in flows.iterdir()) == [
        "skill-dashboard.yml",
        "skill-pr.yml",
        "skill-release.yml",
        "skill-report.yml",
        "skill-schedule.yml",
    ]
    # a person's change to the skill, pushed and opened as a PR on "GitHub"
    git(repo, "checkout", "-q", "-b", "alice/verify-before-success")
    with (repo / "skills" / SKILL / "SKILL.md").open("a") as f:
        f.write(ADDITION)
    git(repo, "commit", "-qam", "Say when success may be reported")
    git(repo, "push", "-q", str(m.bare), "alice/verify-before-success")
    forge: GitHubForge = make_forge(fake)
    n = forge.open_pr(
        title="Say when success may be reported",
        body="by hand",
        base="main",
        head_branch="alice/verify-before-success",
        labels=[],
    ).number

    # skill-pr.yml: the reusable gate, sharded
    pr_run = WorkflowRun(m, flows / "skill-pr.yml", "pull_request", pr_event(fake, n, "opened"))
    plan = ok(pr_run.run_job("plan"))
    assert plan.outputs["skill"] == f"skills/{SKILL}"
    run_rounds(pr_run)
    ok(pr_run.run_job("merge"))
    out = pr_run.call_outputs("gate")
    assert out["verdict"] == "accept"
    assert out["report-url"].startswith(f"{fake.web}/alice/my-skills/actions/runs/")

    # skill-report.yml: verified against the user's own skill-pr.yml, recomputed, posted
    head = fake.pulls[n].head_sha
    event = {
        "action": "completed",
        "workflow_run": {
            "id": pr_run.run_id,
            "path": ".github/workflows/skill-pr.yml",
            "event": "pull_request",
            "conclusion": "success",
            "head_sha": head,
            "html_url": f"{fake.repo_web}/actions/runs/{pr_run.run_id}",
            "pull_requests": [],
        },
    }
    rep = WorkflowRun(m, flows / "skill-report.yml", "workflow_run", event)
    ok(rep.run_job("report"))
    assert rep.call_outputs("report")["verdict"] == "accept"
    assert fake.statuses[head][-1]["state"] == "success"
    (comment,) = [c for c in fake.comments.values() if c.issue == n]
    assert comment.body.startswith(STICKY) and "ACCEPT" in comment.body

    # skill-release.yml on the skillci:accept label: trusted gate, then the release
    label = pr_event(fake, n, "labeled", label={"name": "skillci:accept"})
    rel = WorkflowRun(m, flows / "skill-release.yml", "pull_request", label)
    ok(rel.run_job("gate"))
    step = ok(rel.run_job("release")).step("Release")
    assert f"released {SKILL}@0.1.1" in step.stdout, step.stdout + step.stderr
    assert rel.call_outputs("release")["verdict"] == "accept"
    assert fake.pulls[n].merged_at is not None
    assert f"{SKILL}@0.1.1" in bare_git(m, "tag", "--list", f"{SKILL}@*").split()
    assert [r["tag_name"] for r in fake.releases.values()] == [f"{SKILL}@0.1.1"]
