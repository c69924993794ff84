"""A plug-in package outside ``skillci/``, installed the way pip installs one: a module and
a ``.dist-info`` dir with ``entry_points.txt`` on the path of a real ``python -m skillci``
subprocess (no monkeypatched metadata)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]


def install_plugin(site: Path, dist: str, modules: dict[str, str], entry_points: str) -> Path:
    """``modules`` (name -> source) and a ``<dist>-0.1.dist-info`` declaring
    ``entry_points`` (the ``entry_points.txt`` text) in the directory ``site``."""
    site.mkdir(parents=True, exist_ok=True)
    for name, source in modules.items():
        (site / f"{name}.py").write_text(source, encoding="utf-8")
    info = site / f"{dist}-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {dist}\nVersion: 0.1\n", encoding="utf-8"
    )
    (info / "entry_points.txt").write_text(entry_points, encoding="utf-8")
    return site


def run_skillci(
    site: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m skillci ARGS`` with ``site`` on the path, after this checkout."""
    return run_python(site, "-m", "skillci", *args, env=env, cwd=cwd)


def run_python(
    site: Path, *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``python ARGS`` with ``site`` on the path, after this checkout."""
    full = {**os.environ, **(env or {})}
    full["PYTHONPATH"] = os.pathsep.join([str(ROOT), str(site)])
    return subprocess.run(
        [sys.executable, *args],
        capture_output=True,
        text=True,
        env=full,
        cwd=cwd,
        timeout=120,
        check=False,
    )


@pytest.fixture
def site(tmp_path: Path) -> Path:
    return tmp_path / "site-packages"
