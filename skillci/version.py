"""What ``skillci --version`` prints: the version and the commit this copy was built from.

The version has one home, ``skillci.__version__`` (pyproject.toml reads it; the release
check in scripts/release.py compares the tag, the CHANGELOG heading and ``init``'s callers
with it). The commit comes from git when skillci runs from a checkout, else from
``skillci/data/commit.txt``, which the wheel build writes (setup.py; design 350). A wheel
built without git has no commit, and the line is just the version.

May import: ``skillci`` (``__version__``).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from skillci import __version__

PACKAGE = Path(__file__).resolve().parent
#: Written by setup.py's build_py into the wheel: the full commit sha, one line.
RECORDED = PACKAGE / "data" / "commit.txt"
SHORT = 12


def commit(package: Path = PACKAGE) -> str | None:
    """The commit (12 hex digits) this copy of skillci comes from, or None when unknown."""
    root = package.parent
    if (root / ".git").exists() and (root / "pyproject.toml").is_file():  # a checkout
        try:
            proc = subprocess.run(
                ["git", "-C", str(root), "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                timeout=10,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        sha = proc.stdout.strip()
        return sha[:SHORT] if proc.returncode == 0 and _is_sha(sha) else None
    recorded = package / "data" / "commit.txt"
    if recorded.is_file():
        sha = recorded.read_text(encoding="utf-8").strip()
        return sha[:SHORT] if _is_sha(sha) else None
    return None


def describe(package: Path = PACKAGE) -> str:
    """``skillci 0.1.0 (commit 0123456789ab)``, or ``skillci 0.1.0`` without a commit."""
    sha = commit(package)
    return f"skillci {__version__}" + (f" (commit {sha})" if sha else "")


def _is_sha(text: str) -> bool:
    return len(text) in (40, 64) and all(c in "0123456789abcdef" for c in text)
