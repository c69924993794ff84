"""No demo defaults outside the demo: the skill is inferred when there is one, the gate's
suites come from the skill's metadata, a missing suite is a clear exit-2 error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.flows.context import RepoContext
from skillci.flows.gate import suites_for
from skillci.flows.skills import resolve_skill
from tests.integration.loop.conftest import git, make_scratch

MANIFEST = "skills/repo-debugger/skillci.yaml"


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    return make_scratch(tmp_path / "repo")


def test_missing_suite_names_the_suite_and_the_file(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(scratch, "rm", "-q", "evals/suites/security.yaml")
    git(scratch, "commit", "-qm", "no security suite yet")
    rc = main(["gate", "--repo", str(scratch), "--base", "main", "--head", "main"])
    err = capsys.readouterr().err
    assert rc == 2
    assert (
        "the gate needs suite 'security' but evals/suites/security.yaml does not exist at main"
        in err
    )
    assert "worktrees" not in err and ".git" not in err


def test_suites_follow_the_manifest_and_the_skill_is_inferred(scratch: Path) -> None:
    ctx = RepoContext.open(scratch)
    assert resolve_skill(ctx, None) == "skills/repo-debugger"
    assert suites_for(ctx, "skills/repo-debugger", "main") == (
        "validation",
        "regression",
        "security",
    )
    m = scratch / MANIFEST
    m.write_text(
        m.read_text().replace("require_security_suite: true", "require_security_suite: false")
    )
    git(scratch, "commit", "-qam", "no security suite required")
    assert suites_for(ctx, "repo-debugger", "main") == ("validation", "regression")


def test_several_skills_ask_which(scratch: Path, capsys: pytest.CaptureFixture[str]) -> None:
    shutil.copytree(scratch / "skills/repo-debugger", scratch / "skills/other")
    m = scratch / "skills/other/skillci.yaml"
    m.write_text(m.read_text().replace("name: repo-debugger", "name: other"))
    git(scratch, "add", "-A")
    git(scratch, "commit", "-qm", "second skill")
    rc = main(["propose", "--repo", str(scratch), "--task", "py-page-count", "--dry-run"])
    err = capsys.readouterr().err
    assert rc == 2
    assert "2 skills in this repository (skills/other, skills/repo-debugger): which one?" in err
