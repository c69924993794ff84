"""Build hook: the wheel carries the bundled skill and tasks as package data.

skills/ and evals/ live at the repository root (where the tests, the docs and the demo of a
checkout use them); a wheel has no repository root, so ``build_py`` copies both into
``skillci/data/`` of the build, which is where ``skillci demo`` looks when it is not running
from a checkout. Everything else is configured in pyproject.toml. Design 122.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

ROOT = Path(__file__).resolve().parent
BUNDLED = ("skills", "evals")


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


setup(cmdclass={"build_py": BuildPyWithBundledData})
