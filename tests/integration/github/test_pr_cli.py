"""``skillci pr`` on GitHub: the same commands as on LocalForge, through the REST API."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from skillci.forge.base import PRState
from tests.fakes.github_api import FakeGitHub
from tests.integration.github.conftest import make_forge, push_branch

BRANCH = "skillci/demo/missing-validation-abcdef01"


def _skillci(fake: FakeGitHub, work: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GITHUB_REPOSITORY": f"{fake.owner}/{fake.name}",
        "GITHUB_API_URL": fake.base_url,
        "GITHUB_TOKEN": fake.token,
        "SKILLCI_GITHUB_THROTTLE": "off",
    }
    env.pop("GITHUB_ACTIONS", None)
    return subprocess.run(
        [sys.executable, "-m", "skillci", "pr", *args, "--repo", str(work), "--forge", "github"],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_pr_list_show_close_through_github(fake: FakeGitHub, work: Path) -> None:
    push_branch(work, BRANCH, {"skills/demo/skillci/rules/x.yaml": "id: x\n"})
    forge = make_forge(fake)
    n = forge.open_pr(
        title="skill(demo): add rule",
        body="the evidence",
        base="main",
        head_branch=BRANCH,
        labels=["skillci"],
        patch_id="abcdef0123",
        skill="demo",
    ).number

    listed = _skillci(fake, work, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    assert [(p["number"], p["state"], p["head_branch"]) for p in json.loads(listed.stdout)] == [
        (n, "open", BRANCH)
    ]
    shown = _skillci(fake, work, "show", str(n))
    assert shown.returncode == 0 and "the evidence" in shown.stdout
    # the LocalForge event log does not exist on GitHub: a usage error, not a crash
    no_log = _skillci(fake, work, "show", str(n), "--log")
    assert no_log.returncode == 2 and "timeline" in no_log.stderr

    dry = _skillci(fake, work, "close", str(n), "--dry-run")
    assert dry.returncode == 0 and f"would close #{n}" in dry.stdout
    assert forge.get_pr(n).state == PRState.open
    closed = _skillci(fake, work, "close", str(n), "--comment", "rejected: see the gate report")
    assert closed.returncode == 0, closed.stderr
    pr = forge.get_pr(n)
    assert pr.state == PRState.closed
    assert any("rejected: see the gate report" in c.body for c in pr.comments)
