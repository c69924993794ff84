"""A trial's workspace: a copy of the task's template (its files, modes, links and the
baseline ``.git``), built once per task content even when many trials start together
(docs/design/281)."""

from __future__ import annotations

import os
import stat
import subprocess
import threading
from pathlib import Path

import pytest

from skillci.runners import local
from skillci.runners.local import GIT_ENV, cached_workspace, copy_tree


def _tree(root: Path) -> dict[str, tuple[str, int, str]]:
    """path -> (kind, permission bits, content or link target) of everything under root."""
    out: dict[str, tuple[str, int, str]] = {}
    for p in sorted(root.rglob("*")):
        rel, st = str(p.relative_to(root)), p.lstat()
        if p.is_symlink():
            out[rel] = ("link", 0, os.readlink(p))
        elif p.is_dir():
            out[rel] = ("dir", stat.S_IMODE(st.st_mode), "")
        else:
            out[rel] = ("file", stat.S_IMODE(st.st_mode), p.read_bytes().hex())
    return out


def _env(tmp_path: Path) -> Path:
    env = tmp_path / "environment"
    (env / "src" / "deep").mkdir(parents=True)
    (env / "README.md").write_text("hello\n")
    (env / "src" / "deep" / "mod.py").write_text("x = 1\n")
    run = env / "run.sh"
    run.write_text("#!/bin/sh\necho ok\n")
    run.chmod(0o750)
    (env / "readonly.txt").write_text("ro\n")
    (env / "readonly.txt").chmod(0o444)
    (env / "link-to-readme").symlink_to("README.md")
    (env / "dangling").symlink_to("does-not-exist")
    (env / "Dockerfile").write_text("FROM scratch\n")  # left out of workspaces
    return env


@pytest.mark.parametrize("with_cp", [True, False], ids=["cp", "python"])
def test_a_copy_keeps_files_modes_and_links(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, with_cp: bool
) -> None:
    src = _env(tmp_path)
    if not with_cp:  # a machine without cp: the portable copy, same result
        empty = tmp_path / "no-tools"
        empty.mkdir()
        monkeypatch.setenv("PATH", str(empty))
    dst = tmp_path / "copy"
    copy_tree(src, dst)
    assert _tree(dst) == _tree(src)
    with pytest.raises(FileExistsError):  # never copies *into* an existing dir
        copy_tree(src, dst)


def test_the_workspace_is_the_template_with_its_baseline_commit(tmp_path: Path) -> None:
    env = _env(tmp_path)
    cache, ws = tmp_path / "cache", tmp_path / "trial" / "workspace"
    ws.parent.mkdir()
    cached_workspace(env, ws, cache, "k1")
    files = {k: v for k, v in _tree(ws).items() if not k.startswith(".git")}
    expected = {k: v for k, v in _tree(env).items() if k != "Dockerfile"}
    assert files == expected
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=ws, env=GIT_ENV, capture_output=True, text=True
    )
    assert status.returncode == 0 and status.stdout == ""  # the copy is clean vs baseline
    (ws / "README.md").write_text("changed\n")
    assert (cache / "k1" / "README.md").read_text() == "hello\n"  # the template is not shared


def test_trials_starting_together_build_the_template_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path)
    builds: list[Path] = []
    real = local.prepare_workspace

    def counted(task_env: Path | None, workspace: Path) -> None:
        builds.append(workspace)
        real(task_env, workspace)

    monkeypatch.setattr(local, "prepare_workspace", counted)
    start = threading.Barrier(8)
    errors: list[BaseException] = []

    def trial(i: int) -> None:
        try:
            start.wait()
            cached_workspace(env, tmp_path / f"ws{i}", tmp_path / "cache", "same-task")
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=trial, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert errors == []
    assert len(builds) == 1  # was one git init/add/commit per trial
    assert all((tmp_path / f"ws{i}" / ".git").is_dir() for i in range(8))
    assert [p.name for p in (tmp_path / "cache").iterdir()] == ["same-task"]  # no temp left
