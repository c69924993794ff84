from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillci.agents.workspace import ToolError, Workspace


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "a.py").write_text("x = 1\nx = 1\ny = 2\n")
    (tmp_path / "secret.txt").write_text("outside")
    return Workspace(root)


@pytest.mark.parametrize(
    "path", ["../secret.txt", "/etc/passwd", "/app/../secret.txt", "src/../../secret.txt", ""]
)
def test_paths_outside_the_workspace_are_refused(ws: Workspace, path: str) -> None:
    with pytest.raises(ToolError):
        ws.read(path)
    with pytest.raises(ToolError):
        ws.write(path, "pwned")
    assert (ws.root.parent / "secret.txt").read_text() == "outside"


def test_symlinks_pointing_out_are_refused(ws: Workspace) -> None:
    os.symlink(ws.root.parent / "secret.txt", ws.root / "link.txt")
    with pytest.raises(ToolError, match="outside"):
        ws.read("link.txt")
    with pytest.raises(ToolError, match="outside"):
        ws.write("link.txt", "pwned")


def test_app_prefix_maps_to_the_workspace(ws: Workspace) -> None:
    assert ws.read("/app/src/a.py").startswith("x = 1")
    ws.write("/app/new/b.py", "z = 3\n")
    assert (ws.root / "new" / "b.py").read_text() == "z = 3\n"


def test_another_mount_point_maps_to_the_workspace_and_app_does_not(ws: Workspace) -> None:
    """Under the Docker runner the workspace is mounted at the task's WORKDIR (design 250)."""
    rooted = Workspace(ws.root, "/root")
    assert rooted.read("/root/src/a.py").startswith("x = 1")
    rooted.write("/root/data/b.txt", "z\n")
    assert (ws.root / "data" / "b.txt").read_text() == "z\n"
    with pytest.raises(ToolError, match="outside the workspace /root"):
        rooted.read("/app/src/a.py")
    with pytest.raises(ToolError):
        rooted.read("/root/../etc/passwd")


def test_the_prompt_names_the_workdir_and_is_unchanged_for_app() -> None:
    from skillci.agents.prompt import system_prompt

    default = system_prompt(None)
    assert system_prompt(None, workdir="/app") == default
    assert "repository at /app (your working directory)" in default
    rooted = system_prompt(None, workdir="/root", network=True)
    assert rooted == default.replace(" /app", " /root").replace(
        "The sandbox has no network access.", "The sandbox has network access (the task allows it)."
    )


def test_replace_needs_exactly_one_match(ws: Workspace) -> None:
    with pytest.raises(ToolError, match="2 times"):
        ws.replace("src/a.py", "x = 1", "x = 9")
    with pytest.raises(ToolError, match="0 times"):
        ws.replace("src/a.py", "nothing", "x")
    assert ws.replace("src/a.py", "y = 2", "y = 3") == 3


def test_listing_and_search_skip_caches(ws: Workspace) -> None:
    (ws.root / "__pycache__").mkdir()
    (ws.root / "__pycache__" / "a.pyc").write_bytes(b"\0")
    assert ws.files() == ["src/a.py"]
    assert ws.search("y = ") == ["src/a.py:3: y = 2"]
