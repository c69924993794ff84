"""The file tools over a shell (ShellFiles) answer what the host Workspace answers for the
same files: run through a real bash subprocess (PlainShell) on a real directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.agents.shellfiles import CHUNK, ShellFiles
from skillci.agents.workspace import ToolError, Workspace
from skillci.runners.sandbox import PlainShell


def _tree(root: Path) -> None:
    (root / "src" / "pkg").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: x needle\n")
    (root / "b.txt").write_text("beta\nneedle here\n")
    (root / "a.txt").write_text("alpha\n")
    (root / "src" / "z.py").write_text("x = 'needle'\n")
    (root / "src" / "pkg" / "m.py").write_text("# needle: 'quoted' $HOME\n")
    (root / "bin.dat").write_bytes(b"\x00needle\x00")
    (root / "odd name's.txt").write_text("needle with spaces\n")


@pytest.fixture
def pair(tmp_path: Path) -> tuple[Workspace, ShellFiles]:
    ws = tmp_path / "ws"
    ws.mkdir()
    _tree(ws)
    return Workspace(ws, "/app"), ShellFiles(PlainShell(ws), str(ws))


def test_listing_and_search_match_the_host_workspace(pair: tuple[Workspace, ShellFiles]) -> None:
    host, remote = pair
    assert remote.files() == host.files()
    assert remote.files("src") == host.files("src")
    assert remote.files("a.txt") == ["a.txt"]
    assert remote.files("missing") == host.files("missing") == []
    want = [h for h in host.search("needle") if not h.startswith("bin.dat")]
    assert remote.search("needle") == want  # a binary file is no text to search
    assert remote.search("needle", "src") == host.search("needle", "src")
    assert remote.search("'quoted' $HOME") == host.search("'quoted' $HOME")
    assert len(remote.search("needle")) == 4


def test_read_write_replace_round_trip(pair: tuple[Workspace, ShellFiles]) -> None:
    host, remote = pair
    assert remote.read("b.txt") == host.read("b.txt")
    assert remote.read(f"{remote.mount}/a.txt") == "alpha\n"
    text = "ünïcode 'quotes' $VAR `tick`\n" + "x" * (CHUNK * 2)  # three write commands
    assert remote.write("new/deep/f.txt", text) == len(text.encode())
    assert host.read("new/deep/f.txt") == text
    assert remote.replace("b.txt", "needle", "pin") == 2
    assert host.read("b.txt") == "beta\npin here\n"
    assert remote.write("empty.txt", "") == 0
    assert host.read("empty.txt") == ""


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (lambda f: f.read("nope.txt"), "nope.txt: no such file"),
        (lambda f: f.read("src"), "src: no such file"),
        (lambda f: f.write("src", "x"), "src: is a directory"),
        (lambda f: f.read("../escape"), "outside the workspace"),
        (lambda f: f.read("/etc/passwd"), "outside the workspace"),
        (lambda f: f.replace("a.txt", "zzz", "y"), "found 0 times"),
        (lambda f: f.search(""), "pattern must be non-empty"),
    ],
)
def test_errors_are_the_host_workspace_errors(
    pair: tuple[Workspace, ShellFiles], op: object, message: str
) -> None:
    host, remote = pair
    for files in (host, remote):
        with pytest.raises(ToolError, match=message.replace("(", r"\(")):
            op(files)  # type: ignore[operator]
