"""``skillci pr`` on the LocalForge: list, show with the event log, close, guarded merge."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.forge.base import PRState
from skillci.forge.local import LocalForge
from skillci.vcs.git import Git
from tests.integration.forge.conftest import make_branch, sh


def _open(repo: Path, branch: str) -> int:
    make_branch(repo, branch, {f"{branch.replace('/', '-')}.txt": "x\n"})
    return (
        LocalForge(Git(repo))
        .open_pr(
            title=f"t {branch}",
            body="the evidence",
            base="main",
            head_branch=branch,
            labels=["skillci"],
        )
        .number
    )


def test_pr_commands_on_the_local_forge(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a, b = _open(repo, "skillci/a"), _open(repo, "skillci/b")
    r = ["--repo", str(repo)]
    assert main(["pr", "list", "--json", *r]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [(p["number"], p["state"]) for p in listed] == [(a, "open"), (b, "open")]

    assert main(["pr", "show", str(a), "--log", *r]) == 0
    out = capsys.readouterr().out
    assert "the evidence" in out and "opened" in out

    assert main(["pr", "close", str(a), "--comment", "rejected", *r]) == 0
    assert sh(repo, "branch", "--list", "skillci/a") == ""  # branch gone, record kept
    assert LocalForge(Git(repo)).get_pr(a).state == PRState.closed

    main_before = sh(repo, "rev-parse", "main")
    assert main(["pr", "merge", str(b), "--dry-run", *r]) == 0
    assert sh(repo, "rev-parse", "main") == main_before
    # the head guard: a stale expected head is a conflict (exit 4), nothing merged
    assert main(["pr", "merge", str(b), "--expected-head", main_before, *r]) == 4
    assert sh(repo, "rev-parse", "main") == main_before
    capsys.readouterr()
    assert main(["pr", "merge", str(b), "--json", *r]) == 0
    merged = json.loads(capsys.readouterr().out)
    assert merged["state"] == "merged" and sh(repo, "rev-parse", "main") != main_before
    assert sh(repo, "show", "main:skillci-b.txt") == "x"
