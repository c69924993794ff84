"""The same Forge scenarios against LocalForge and GitHubForge (+ the fake GitHub API).

Each scenario only talks to the :class:`~skillci.forge.base.Forge` protocol and to a
:class:`Remote` that says where branches live, so both forges must behave alike.
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from skillci.errors import ConflictError, InvalidInputError
from skillci.forge.base import Forge, PRState
from skillci.forge.local import LocalForge
from skillci.vcs.git import Git
from tests.fakes.github_api import FakeGitHub
from tests.fakes.openapi import Contract
from tests.integration.github.conftest import Sleeps, commit_on, make_forge, push, sh

STICKY = "<!-- skillci:gate-report -->"


@dataclass
class Remote:
    """Where the forge's branches live, and how a test makes and reads them."""

    forge: Forge
    branch: Callable[[str, dict[str, str | None]], str]  # make/extend a branch -> head sha
    repo: Path  # the repository holding the forge's branches (work repo or bare remote)

    def tip(self, ref: str) -> str | None:
        return _git(self.repo, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}")

    def show(self, rev: str, path: str) -> str | None:
        return _git(self.repo, "show", f"{rev}:{path}", strip=False)


def _git(repo: Path, *args: str, strip: bool = True) -> str | None:
    """Plain git (works in the bare remote too); None when git fails."""
    p = subprocess.run(["git", *args], cwd=repo, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        return None
    return p.stdout.strip() if strip else p.stdout


@pytest.fixture(params=["local", "github"])
def remote(
    request: pytest.FixtureRequest, tmp_path: Path, bare: Path, work: Path, contract: Contract
) -> Iterator[Remote]:
    if request.param == "local":

        def local_branch(name: str, files: dict[str, str | None]) -> str:
            return commit_on(work, name, files, base="main")

        yield Remote(LocalForge(Git(work)), local_branch, work)
        return

    with FakeGitHub(bare, contract) as fake:

        def gh_branch(name: str, files: dict[str, str | None]) -> str:
            sha = commit_on(work, name, files)
            push(work, name)
            return sha

        yield Remote(make_forge(fake, Sleeps()), gh_branch, bare)
    assert fake.violations == [], "\n".join(fake.violations)


def _open(r: Remote, branch: str = "skillci/demo/x-1", patch_id: str | None = "p1") -> int:
    return r.forge.open_pr(
        title="skill(demo): add rule",
        body="diagnosis\n\nevidence",
        base="main",
        head_branch=branch,
        labels=["skillci", "missing_validation"],
        patch_id=patch_id,
        skill="demo",
    ).number


def test_open_list_get(remote: Remote) -> None:
    head = remote.branch("skillci/demo/x-1", {"skills/demo/skillci/rules/r.yaml": "id: r\n"})
    n = _open(remote)
    pr = remote.forge.get_pr(n)
    assert (pr.number, pr.head_sha, pr.base, pr.head_branch) == (
        n,
        head,
        "main",
        "skillci/demo/x-1",
    )
    assert pr.body == "diagnosis\n\nevidence"
    assert (pr.patch_id, pr.skill, pr.state) == ("p1", "demo", PRState.open)
    assert pr.labels == ["missing_validation", "skillci"]
    assert [p.number for p in remote.forge.list_prs(state=PRState.open, label="skillci")] == [n]
    assert [p.number for p in remote.forge.list_prs(state=PRState.open)] == [n]
    assert remote.forge.list_prs(state=PRState.closed) == []
    assert remote.forge.list_prs(label="nope") == []


def test_open_missing_pr_is_invalid_input(remote: Remote) -> None:
    with pytest.raises(InvalidInputError, match="no pull request #42"):
        remote.forge.get_pr(42)


def test_labels_add_and_remove(remote: Remote) -> None:
    remote.branch("skillci/demo/x-1", {"b.txt": "two\n"})
    n = _open(remote)
    pr = remote.forge.add_labels(n, ["needs-approval"])
    assert pr.labels == ["missing_validation", "needs-approval", "skillci"]
    pr = remote.forge.remove_label(n, "missing_validation")
    assert pr.labels == ["needs-approval", "skillci"]
    pr = remote.forge.remove_label(n, "never-there")  # tolerated
    assert pr.labels == ["needs-approval", "skillci"]


def test_sticky_comment_is_edited_in_place(remote: Remote) -> None:
    remote.branch("skillci/demo/x-1", {"b.txt": "two\n"})
    n = _open(remote)
    ids = {remote.forge.upsert_comment(n, f"{STICKY}\nreport v{i}").id for i in (1, 2, 3)}
    pr = remote.forge.get_pr(n)
    assert len(ids) == 1
    assert len(pr.comments) == 1
    assert pr.comments[0].body == f"{STICKY}\nreport v3"
    assert pr.comments[0].marker == STICKY


def test_status_on_head(remote: Remote) -> None:
    head = remote.branch("skillci/demo/x-1", {"b.txt": "two\n"})
    n = _open(remote)
    remote.forge.set_status(n, context="skillci/gate", state="pending", description="running")
    st = remote.forge.set_status(n, context="skillci/gate", state="success", description="3/3")
    assert (st.state, st.sha) == ("success", head)
    got = remote.forge.get_pr(n).statuses["skillci/gate"]
    assert (got.state, got.description, got.sha) == ("success", "3/3", head)
    with pytest.raises(InvalidInputError, match="unknown status state"):
        remote.forge.set_status(n, context="skillci/gate", state="green", description="")


def test_close_deletes_branch_keeps_pr_and_patch_stays_findable(remote: Remote) -> None:
    head = remote.branch("skillci/demo/x-1", {"b.txt": "two\n"})
    n = _open(remote, patch_id="rejected-patch")
    pr = remote.forge.close(n, "rejected: regression 1/5")
    assert pr.state == PRState.closed
    assert remote.tip("refs/heads/skillci/demo/x-1") is None
    again = remote.forge.get_pr(n)
    assert again.head_sha == head and again.state == PRState.closed
    assert again.comments[-1].body == "rejected: regression 1/5"
    found = remote.forge.find_by_patch("rejected-patch")
    assert [(p.number, p.state) for p in found] == [(n, PRState.closed)]
    assert remote.forge.find_by_patch("other-patch") == []
    assert [p.number for p in remote.forge.list_prs(state=PRState.closed, label="skillci")] == [n]
    with pytest.raises(InvalidInputError, match="already closed"):
        remote.forge.close(n)


def test_squash_merge_with_head_guard(remote: Remote) -> None:
    head = remote.branch("skillci/demo/x-1", {"b.txt": "two\n"})
    main_before = remote.tip("refs/heads/main")
    n = _open(remote)
    with pytest.raises(ConflictError, match="not the expected"):
        remote.forge.merge(n, title="T", message="M", expected_head_sha="0" * 40)
    pr = remote.forge.merge(
        n, title="skill(demo): add rule", message="body", expected_head_sha=head
    )
    assert pr.state == PRState.merged
    main = remote.tip("refs/heads/main")
    assert main == pr.merge_sha
    assert remote.show("main", "b.txt") == "two\n"
    assert sh(remote.repo, "log", "-1", "--format=%s%n%n%b", "main").strip() == (
        "skill(demo): add rule\n\nbody"
    )
    assert sh(remote.repo, "rev-parse", "main^") == main_before  # squash: one new commit
    assert remote.forge.list_prs(state=PRState.merged)[0].number == n
    with pytest.raises(InvalidInputError, match="merged, not open"):
        remote.forge.merge(n, title="T", message="M", expected_head_sha=head)


def test_merge_after_the_head_moved_needs_the_new_sha(remote: Remote) -> None:
    first = remote.branch("skillci/demo/x-1", {"b.txt": "two\n"})
    n = _open(remote)
    second = remote.branch("skillci/demo/x-1", {"b.txt": "three\n"})
    assert remote.forge.refresh_head(n).head_sha == second
    with pytest.raises(ConflictError, match="not the expected"):
        remote.forge.merge(n, title="T", message="M", expected_head_sha=first)
    assert remote.forge.merge(n, title="T", message="", expected_head_sha=second).state == (
        PRState.merged
    )
    assert remote.show("main", "b.txt") == "three\n"
