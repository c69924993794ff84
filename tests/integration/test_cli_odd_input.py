"""Odd input (issue 16) ends in exit 0 or 2 with one line naming the file, within seconds."""

from __future__ import annotations

import os
import shutil
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import PLAIN_FIXTURES, ROOT
from tests.integration.test_cli_skill import skillci


def _package(tmp_path: Path) -> Path:
    pkg = tmp_path / "pkg"
    shutil.copytree(ROOT / "skills" / "repo-debugger", pkg)
    return pkg


def _bad_name(pkg: Path) -> str:
    fd = os.open(os.fsencode(pkg / "references") + b"/bad\xff.md", os.O_CREAT | os.O_WRONLY)
    os.close(fd)
    return "bad\\xff.md"


def _fifo(pkg: Path) -> str:
    os.mkfifo(pkg / "references" / "pipe")
    return "pipe"


def _chardev(pkg: Path) -> str:
    os.mknod(pkg / "references" / "null", 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    return "null"


def _dir_link(pkg: Path) -> str:
    (pkg / "references" / "linked").symlink_to(pkg / "skillci")
    return "linked"


def _outside_link(pkg: Path) -> str:
    (pkg / "references" / "passwd").symlink_to("/etc/passwd")
    return "passwd"


CASES: dict[str, Callable[[Path], str]] = {
    "non-utf8-name": _bad_name,
    "fifo": _fifo,
    "char-device": _chardev,
    "symlinked-dir": _dir_link,
    "symlink-outside": _outside_link,
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("command", ["lint", "render", "export", "import"])
def test_unrepresentable_files_exit_2_naming_the_file(
    tmp_path: Path, case: str, command: str
) -> None:
    pkg = _package(tmp_path)
    (pkg / "references").mkdir()
    if command == "import":  # the same file in a plain skill folder
        shutil.rmtree(pkg)
        shutil.copytree(PLAIN_FIXTURES / "anthropic-pdf", pkg)
        (pkg / "references").mkdir(exist_ok=True)
    name = CASES[case](pkg)
    args = {
        "lint": ["skill", "lint", str(pkg)],
        "render": ["skill", "render", str(pkg)],
        "export": ["skill", "export", str(pkg), "--out", str(tmp_path / "out")],
        "import": ["skill", "import", str(pkg), "--out", str(tmp_path / "out")],
    }[command]
    start = time.monotonic()
    r = skillci(*args)
    assert time.monotonic() - start < 60
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.count("\n") == 1 and "Traceback" not in r.stderr
    assert name in r.stderr, r.stderr


def test_symlink_to_a_file_inside_is_imported_as_a_copy_with_a_warning(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(PLAIN_FIXTURES / "anthropic-pdf", src)
    (src / "again.md").symlink_to("SKILL.md")
    r = skillci("skill", "import", str(src), "--out", str(tmp_path / "pkg"))
    assert r.returncode == 0, r.stderr
    assert "again.md: symlink to SKILL.md read as a copy" in r.stdout + r.stderr
    assert (tmp_path / "pkg" / "again.md").read_bytes() == (src / "SKILL.md").read_bytes()


def test_deep_json_example_and_long_file_name_import_lint_and_export(tmp_path: Path) -> None:
    src = tmp_path / "src"
    shutil.copytree(PLAIN_FIXTURES / "anthropic-pdf", src)
    (src / "examples").mkdir()
    (src / "examples" / "deep.json").write_text("[" * 100_000 + "]" * 100_000)
    long_name = "r" * 250 + ".md"
    (src / long_name).write_text("# long\n")
    pkg = tmp_path / "pkg"
    start = time.monotonic()
    assert skillci("skill", "import", str(src), "--out", str(pkg)).returncode == 0
    (pkg / "skillci" / "examples").mkdir(parents=True)
    (pkg / "skillci" / "examples" / "deep.jsonl").write_text("[" * 100_000 + "]" * 100_000 + "\n")
    r = skillci("skill", "lint", str(pkg))
    assert r.returncode in (0, 2) and "Traceback" not in r.stderr
    assert "deep.jsonl:1:1: warning SK041" in r.stdout
    r = skillci("skill", "export", str(pkg), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    assert (tmp_path / "out" / long_name).read_text() == "# long\n"
    assert (tmp_path / "out" / "examples" / "deep.json").stat().st_size == 200_000
    assert time.monotonic() - start < 120


def test_entry_point_outside_the_package_is_a_lint_error(tmp_path: Path) -> None:
    pkg = _package(tmp_path)
    manifest = pkg / "skillci.yaml"
    manifest.write_text(manifest.read_text().replace("default: SKILL.md", "default: /etc/passwd"))
    r = skillci("skill", "lint", str(pkg))
    assert r.returncode == 2
    line = next(i for i, t in enumerate(manifest.read_text().splitlines(), 1) if "/etc/passwd" in t)
    assert f"skillci.yaml:{line}:" in r.stdout and "SK004" in r.stdout
