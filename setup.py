"""Build hook: the wheel carries the bundled skill and tasks as package data.

skills/ and evals/ live at the repository root (where the tests, the docs and the demo of a
checkout use them); a wheel has no repository root, so ``build_py`` copies both into
``skillci/data/`` of the build, which is where ``skillci demo`` looks when it is not running
from a checkout. Everything else is configured in pyproject.toml. Design 122.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist

ROOT = Path(__file__).resolve().parent
BUNDLED = ("skills", "evals")
SDIST_COMMIT = "BUILD_COMMIT"


def build_commit() -> str | None:
    """The full sha of the commit being built, or None (not a checkout, no recorded sha)."""
    if (ROOT / ".git").exists():
        try:
            proc = subprocess.run(
                ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
                capture_output=True,
                text=True,
                check=False,
            )
        except OSError:  # no git: nothing recorded
            return None
        sha = proc.stdout.strip()
    elif (ROOT / SDIST_COMMIT).is_file():
        sha = (ROOT / SDIST_COMMIT).read_text(encoding="utf-8").strip()
    else:
        return None
    return sha if re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha) else None


class SdistWithCommit(sdist):
    def make_release_tree(self, base_dir: str, files: list[str]) -> None:
        super().make_release_tree(base_dir, files)
        sha = build_commit()
        if sha:
            (Path(base_dir) / SDIST_COMMIT).write_text(sha + "\n", encoding="utf-8")


class BuildPyWithBundledData(build_py):
    def run(self) -> None:
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads them from the checkout
        for name in BUNDLED:
            dest = Path(self.build_lib) / "skillci" / "data" / name
            if dest.exists():
                shutil.rmtree(dest)
            shutil.copytree(
                ROOT / name, dest, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        sha = build_commit()
        if sha:
            (Path(self.build_lib) / "skillci" / "data" / "commit.txt").write_text(
                sha + "\n", encoding="utf-8"
            )


setup(cmdclass={"build_py": BuildPyWithBundledData, "sdist": SdistWithCommit})
