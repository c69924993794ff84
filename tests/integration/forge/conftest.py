from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from skillci.vcs.git import Git


def sh(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=cwd, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    r.mkdir()
    sh(r, "init", "-q", "-b", "main")
    (r / "a.txt").write_text("one\n")
    sh(r, "add", ".")
    sh(r, "commit", "-qm", "init")
    return r


def make_branch(repo: Path, name: str, files: dict[str, str], base: str = "main") -> str:
    g = Git(repo)
    base_sha = g.rev(base)
    assert base_sha
    tree = g.tree_with(base_sha, {k: v.encode() for k, v in files.items()})
    c = g.commit_tree(tree, [base_sha], f"change on {name}\n")
    g.update_ref(f"refs/heads/{name}", c, None)
    return c
