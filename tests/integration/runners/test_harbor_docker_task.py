"""What skillci hands Harbor's docker environment for a task (design 413): a no-network task
is exported with only its network line made public, plus a Compose overlay that closes the
network (and sets the build's network when asked); anything else goes as it is. Real task
dirs in tmp; Harbor's side runs in tests/integration/harnesses/test_harbor_remote_docker.py."""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

import pytest

from skillci.errors import RunnerError
from skillci.runners.harbor_docker import docker_task

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "evals" / "tasks" / "cfg-bool-flag"


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def _task(tmp: Path, toml_env: str | None = None) -> Path:
    root = tmp / "src" / "cfg-bool-flag"
    shutil.copytree(BUNDLED, root)
    if toml_env is not None:
        text = (root / "task.toml").read_text()
        head = text[: text.index("[environment]")]
        (root / "task.toml").write_text(head + toml_env)
    return root


def test_a_no_network_task_is_exported_with_only_its_network_line_public(tmp_path: Path) -> None:
    task = docker_task(BUNDLED, tmp_path / "run", build_network="none")
    assert task.path == tmp_path / "run" / "task" / "cfg-bool-flag"
    before, after = _files(BUNDLED), _files(task.path)
    assert sorted(before) == sorted(after)
    assert {k for k in before if before[k] != after[k]} == {"task.toml"}
    old = BUNDLED.joinpath("task.toml").read_text().splitlines()
    new = task.path.joinpath("task.toml").read_text().splitlines()
    assert [(a, b) for a, b in zip(old, new, strict=True) if a != b] == [
        ("allow_internet = false", "allow_internet = true")
    ]
    (overlay,) = task.overlays
    assert json.loads(overlay.read_text()) == {
        "services": {"main": {"network_mode": "none", "build": {"network": "none"}}}
    }


def test_network_mode_no_network_becomes_public_and_no_build_network_is_left_out(
    tmp_path: Path,
) -> None:
    src = _task(tmp_path, '[environment]\ncpus = 1\nnetwork_mode = "no-network"  # closed\n')
    task = docker_task(src, tmp_path / "run")
    cfg = tomllib.loads((task.path / "task.toml").read_text())
    assert cfg["environment"] == {"cpus": 1, "network_mode": "public"}
    (overlay,) = task.overlays
    assert json.loads(overlay.read_text()) == {"services": {"main": {"network_mode": "none"}}}


@pytest.mark.parametrize(
    ("toml_env", "own_compose", "overlay"),
    [
        ("[environment]\nallow_internet = true\n", False, None),  # public: nothing to close
        ("[environment]\nallow_internet = true\n", False, {"build": {"network": "none"}}),
        ("[environment]\nallow_internet = false\n", True, None),  # the task's own compose
        ('[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n', False, None),
    ],
)
def test_other_tasks_go_as_they_are(
    tmp_path: Path, toml_env: str, own_compose: bool, overlay: dict[str, object] | None
) -> None:
    src = _task(tmp_path, toml_env)
    if own_compose:
        (src / "environment" / "docker-compose.yaml").write_text("services: {}\n")
    build = "none" if overlay and "build" in overlay else None
    task = docker_task(src, tmp_path / "run", build_network=build)
    assert task.path == src and not (tmp_path / "run" / "task").exists()
    if overlay is None:
        assert task.overlays == ()
    else:
        (path,) = task.overlays
        assert json.loads(path.read_text()) == {"services": {"main": overlay}}


def test_a_network_setting_it_cannot_rewrite_is_refused_naming_the_file(tmp_path: Path) -> None:
    src = _task(tmp_path, "[environment]\ncpus = 1\n")
    text = (src / "task.toml").read_text().replace("[environment]\n", "")
    (src / "task.toml").write_text("environment = { allow_internet = false }\n" + text)
    assert tomllib.loads((src / "task.toml").read_text())["environment"]["allow_internet"] is False
    with pytest.raises(RunnerError, match="cannot rewrite") as err:
        docker_task(src, tmp_path / "run")
    assert err.value.file == str(src / "task.toml") and err.value.exit_code == 4
