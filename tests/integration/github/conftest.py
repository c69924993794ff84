"""Fixtures for GitHubForge against the fake GitHub API (tests/fakes/github_api.py).

The fake serves a real bare repository; tests make commits in a clone and ``git push``
them, like a developer or a workflow would.
"""

from __future__ import annotations

import gc
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from skillci.forge.github import GitHubForge
from skillci.forge.github_retry import RetryPolicy
from skillci.vcs.git import Git
from tests import services
from tests.fakes.github_api import FakeGitHub
from tests.fakes.openapi import Contract, SpecUnavailable, npm_install_command

_LOADED: list[Contract] = []
_FORGES: list[GitHubForge] = []


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture(scope="session")
def contract() -> Contract:
    """GitHub's OpenAPI description, installed by .ci/run (never by the test run): tests
    using it are marked ``github_openapi`` and skip without it, or fail under
    ``SKILLCI_REQUIRE_SERVICES`` (tests/conftest.py)."""
    services.need("github_openapi")
    try:
        c = Contract.load()
    except SpecUnavailable as exc:
        pytest.fail(
            f"GitHub's OpenAPI description is unavailable: {exc}\n"
            f"install it with: {' '.join(npm_install_command())}",
            pytrace=False,
        )
    _LOADED.append(c)
    return c


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for c in _LOADED:
        terminalreporter.write_line(f"fake GitHub API: {c.figures()}")


@pytest.fixture
def bare(tmp_path: Path) -> Path:
    """The repository "on GitHub", seeded with main = one commit."""
    b = tmp_path / "remote.git"
    b.mkdir()
    sh(b, "init", "-q", "--bare", "-b", "main")
    seed = tmp_path / "seed"
    seed.mkdir()
    sh(seed, "init", "-q", "-b", "main")
    (seed / "a.txt").write_text("one\n")
    (seed / "skills" / "demo").mkdir(parents=True)
    (seed / "skills" / "demo" / "SKILL.md").write_text("# demo\n")
    sh(seed, "add", ".")
    sh(seed, "commit", "-qm", "init")
    sh(seed, "push", "-q", str(b), "main")
    return b


@pytest.fixture
def work(tmp_path: Path, bare: Path) -> Path:
    """A clone of the remote, where tests build commits."""
    w = tmp_path / "work"
    subprocess.run(
        ["git", "clone", "-q", str(bare), str(w)], check=True, capture_output=True, text=True
    )
    return w


@pytest.fixture
def fake(bare: Path, contract: Contract) -> Iterator[FakeGitHub]:
    with FakeGitHub(bare, contract) as f:
        yield f
    assert f.violations == [], "the fake (or the client) left GitHub's contract:\n" + "\n".join(
        f.violations
    )


class Sleeps(list[float]):
    """A sleep that records instead of waiting."""

    def __call__(self, seconds: float) -> None:
        self.append(seconds)


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


def make_forge(fake: FakeGitHub, sleeps: Sleeps | None = None, **kw: Any) -> GitHubForge:
    kw.setdefault("retry", RetryPolicy(sleep=sleeps if sleeps is not None else Sleeps()))
    kw.setdefault("token", fake.token)
    forge = GitHubForge(
        f"{fake.owner}/{fake.name}",
        base_url=fake.base_url,
        seconds_between_requests=0,
        seconds_between_writes=0,
        **kw,
    )
    _FORGES.append(forge)
    return forge


@pytest.fixture(autouse=True)
def _close_forges() -> Iterator[None]:
    """Close every forge a test made, so no pooled socket outlives its test (an unclosed
    socket found by a later garbage collection fails whichever test runs then)."""
    yield
    while _FORGES:
        _FORGES.pop().disconnect()
    gc.collect()


@pytest.fixture
def forge(fake: FakeGitHub, sleeps: Sleeps) -> GitHubForge:
    return make_forge(fake, sleeps)


def commit_on(
    work: Path, branch: str, files: dict[str, str | None], base: str = "origin/main"
) -> str:
    """A commit on local ``branch`` (created from ``base`` if absent), without a worktree."""
    g = Git(work)
    parent = g.rev(f"refs/heads/{branch}") or g.rev(base)
    assert parent
    tree = g.tree_with(
        parent, {k: (v.encode() if v is not None else None) for k, v in files.items()}
    )
    c = g.commit_tree(tree, [parent], f"change on {branch}\n")
    g.update_ref(f"refs/heads/{branch}", c, g.rev(f"refs/heads/{branch}"))
    return c


def push(work: Path, branch: str, *, force: bool = False) -> None:
    """Real ``git push`` into the fake's bare repository."""
    args = ["push", "-q"] + (["--force"] if force else []) + ["origin", f"{branch}:{branch}"]
    sh(work, *args)


def push_branch(
    work: Path, branch: str, files: dict[str, str | None], base: str = "origin/main"
) -> str:
    sha = commit_on(work, branch, files, base)
    push(work, branch)
    return sha
