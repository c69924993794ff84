"""Helpers for the compile/pipeline integration tests: the CLI in-process and as a subprocess."""

from __future__ import annotations

import contextlib
import io
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from skillci.cli.main import main

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "evals" / "tasks"
TASK = "py-shelf-slots"
TASK_SKILL = TASKS / TASK / "environment" / "skills" / "python-ci-fix"


def cli(*args: str) -> tuple[int, str, str]:
    """``skillci ARGS`` in this process: (exit code, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def cli_json(*args: str) -> Any:
    code, out, err = cli(*args, "--json")
    assert code == 0, (code, out, err)
    return json.loads(out)


def run(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillci", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "COLUMNS": "200", **(env or {})},
        timeout=900,
        check=False,
    )


def snapshot_task(dest: Path) -> Path:
    """A private copy of the bundled task (a tasks root): other work in the shared tree
    may regenerate evals/tasks while a long test runs, which would change its identity."""
    import shutil

    shutil.copytree(TASKS / TASK, dest / TASK, ignore=shutil.ignore_patterns("__pycache__"))
    return dest


@contextlib.contextmanager
def chdir(path: Path) -> Iterator[None]:
    old = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(old)
