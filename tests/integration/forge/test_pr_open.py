"""``skillci pr open``: a person's branch becomes a LocalForge PR that review and close
handle like a proposed one (real git repos, the real CLI entry point)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.flows.context import RepoContext
from skillci.flows.release import release_pr
from skillci.flows.review import review
from skillci.forge.base import PRState
from tests.integration.loop.conftest import git, make_scratch

SKILL_MD = "skills/repo-debugger/SKILL.md"


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    return make_scratch(tmp_path / "repo")


def person_edit(repo: Path, branch: str, line: str) -> None:
    git(repo, "checkout", "-q", "-b", branch)
    md = repo / SKILL_MD
    md.write_text(md.read_text() + "\n" + line + "\n")
    git(repo, "commit", "-qam", "docs: say when success may be reported")
    git(repo, "checkout", "-q", "main")


def test_pr_open_dry_run_then_open_then_idempotent(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    person_edit(scratch, "alice/verify", "Re-run the failing test after every edit.")
    assert main(["pr", "open", "--repo", str(scratch), "--head", "alice/verify", "--dry-run"]) == 0
    assert "would open docs: say when success may be reported" in capsys.readouterr().out
    assert git(scratch, "for-each-ref", "refs/skillci") == ""

    assert main(["pr", "open", "--repo", str(scratch), "--head", "alice/verify", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["action"] == "opened" and res["number"] == 1
    assert res["skill"] == "skills/repo-debugger" and res["changed"] == ["SKILL.md"]
    pr = RepoContext.open(scratch).forge.get_pr(1)
    assert pr.patch_id is None and pr.skill == "skills/repo-debugger"
    assert pr.head_sha == git(scratch, "rev-parse", "alice/verify")
    assert pr.labels == ["human"]

    assert main(["pr", "open", "--repo", str(scratch), "--head", "alice/verify", "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert (again["action"], again["number"]) == ("exists", 1)


def test_pr_open_refuses_branch_outside_skills(
    scratch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(scratch, "checkout", "-q", "-b", "alice/readme")
    (scratch / "README.md").write_text("hello\n")
    git(scratch, "add", "README.md")
    git(scratch, "commit", "-qm", "readme")
    rc = main(["pr", "open", "--repo", str(scratch), "--head", "alice/readme"])
    assert rc == 2
    assert "alice/readme changes no skill folder (changed: README.md)" in capsys.readouterr().err
    assert main(["pr", "open", "--repo", str(scratch), "--head", "nope"]) == 2


def test_human_pr_review_then_rejected_release_closes_and_keeps_branch(scratch: Path) -> None:
    """A person deletes the injection rule: the gate rejects with numbers (security pass
    rate drops); release closes the PR but keeps the person's branch."""
    git(scratch, "checkout", "-q", "-b", "alice/drop-finish")
    (scratch / "skills/repo-debugger/rules/security.yaml").unlink()
    git(scratch, "commit", "-qam", "drop the security rule")
    git(scratch, "checkout", "-q", "main")
    ctx = RepoContext.open(scratch)
    assert main(["pr", "open", "--repo", str(scratch), "--head", "alice/drop-finish"]) == 0
    report = review(ctx, 1, repeat=1, student="sim/student", suites=("validation", "security"))
    assert report.verdict == "reject", report.reasons
    sec = report.suite("security")
    assert sec is not None
    assert (
        sec.metrics.sides["head"].pass_rate.pass_rate
        < sec.metrics.sides["base"].pass_rate.pass_rate
    )
    pr = ctx.forge.get_pr(1)
    assert pr.statuses["skillci/gate"].state == "failure"
    res = release_pr(ctx, 1)
    assert res.action == "closed"
    assert ctx.forge.get_pr(1).state is PRState.closed
    assert git(scratch, "rev-parse", "--verify", "-q", "alice/drop-finish")
