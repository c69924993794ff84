"""One version (design 350): ``skillci.__version__``, pyproject.toml, the CHANGELOG's newest
release, the release tag and the callers ``skillci init`` writes agree, checked by
scripts/release.py; ``skillci --version`` names the commit it was built from."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from skillci import __version__
from skillci.cli.main import main
from skillci.version import commit, describe
from tests.conftest import ROOT
from tests.integration.loop.conftest import git

RELEASE = ROOT / "scripts" / "release.py"
SHA = "0123456789abcdef0123456789abcdef01234567"


def release(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(RELEASE), "--root", str(root), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env={k: v for k, v in os.environ.items() if k != "GITHUB_ACTIONS"},
    )


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """The three files that hold or read the version, copied from this checkout."""
    (tmp_path / "skillci").mkdir()
    shutil.copy(ROOT / "skillci" / "__init__.py", tmp_path / "skillci" / "__init__.py")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    shutil.copy(ROOT / "CHANGELOG.md", tmp_path / "CHANGELOG.md")
    return tmp_path


def test_this_checkout_agrees() -> None:
    proc = release(ROOT, "check")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"release: version {__version__} agrees"


def test_init_writes_callers_of_this_version(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "skills" / "repo-debugger", repo / "skills" / "repo-debugger")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "a skill")
    assert main(["init", "--repo", str(repo)]) == 0
    callers = sorted((repo / ".github" / "workflows").glob("*.yml"))
    assert callers
    for f in callers:
        refs = set(re.findall(r"\bv\d+\.\d+\.\d+\b", f.read_text()))
        assert refs == {f"v{__version__}"}, f"{f.name}: {refs}"


def test_a_cut_release_checks_against_its_tag_and_gives_its_notes(tree: Path) -> None:
    unreleased = (tree / "CHANGELOG.md").read_text().split("## [Unreleased]\n", 1)[1]
    assert release(tree, "check", "--tag", f"v{__version__}").returncode == 2  # not cut yet

    dry = release(tree, "cut", "9.8.7", "--date", "2026-12-03", "--dry-run")
    assert dry.returncode == 0, dry.stderr
    assert "would change skillci/__init__.py: __version__" in dry.stdout
    assert release(tree, "check").returncode == 0  # the dry run wrote nothing

    assert release(tree, "cut", "9.8.7", "--date", "2026-12-03").returncode == 0
    assert '__version__ = "9.8.7"' in (tree / "skillci" / "__init__.py").read_text()
    assert "## [Unreleased]\n\n## [9.8.7] - 2026-12-03\n" in (tree / "CHANGELOG.md").read_text()
    notes = tree / "notes.md"
    ok = release(tree, "check", "--tag", "v9.8.7", "--notes", str(notes))
    assert ok.returncode == 0, ok.stderr
    assert notes.read_text() == unreleased.strip() + "\n"
    again = release(tree, "cut", "9.8.7")
    assert (again.returncode, again.stderr) == (
        2,
        "error: CHANGELOG.md: [9.8.7] is already released\n",
    )


@pytest.mark.parametrize(
    ("edit", "args", "message"),
    [
        (None, ("--tag", "v0.0.1"), "tag 'v0.0.1' is not v"),
        (None, ("--tag", __version__), f"tag {__version__!r} is not v"),
        (
            (
                "CHANGELOG.md",
                "## [Unreleased]\n",
                "## [Unreleased]\n\n## [7.0.0] - 2026-01-01\n- x\n",
            ),
            (),
            "CHANGELOG.md: the newest release is [7.0.0] but skillci/__init__.py says",
        ),
        (
            ("pyproject.toml", 'dynamic = ["version"]', 'version = "0.1.0"'),
            (),
            "pyproject.toml: ",
        ),
        (
            ("skillci/__init__.py", "__version__ = ", "__version__ = 'x' or "),
            (),
            "skillci/__init__.py: expected one line",
        ),
    ],
)
def test_drift_is_a_one_line_error_and_exit_2(
    tree: Path, edit: tuple[str, str, str] | None, args: tuple[str, ...], message: str
) -> None:
    if edit is not None:
        path, old, new = edit
        text = (tree / path).read_text()
        assert old in text
        (tree / path).write_text(text.replace(old, new, 1))
    proc = release(tree, "check", *args)
    assert proc.returncode == 2
    assert proc.stderr.startswith("error: " + message), proc.stderr
    assert proc.stderr.count("\n") == 1


def test_version_names_the_checkout_commit(capsys: pytest.CaptureFixture[str]) -> None:
    head = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"skillci {__version__} (commit {head[:12]})\n"
    assert main(["-v", "--version"]) == 0  # through typer
    assert capsys.readouterr().out == f"skillci {__version__} (commit {head[:12]})\n"


def test_version_of_an_installed_copy_reads_the_recorded_commit(tmp_path: Path) -> None:
    package = tmp_path / "site-packages" / "skillci"
    (package / "data").mkdir(parents=True)
    assert commit(package) is None
    assert describe(package) == f"skillci {__version__}"
    (package / "data" / "commit.txt").write_text("not a sha\n")
    assert commit(package) is None
    (package / "data" / "commit.txt").write_text(SHA + "\n")
    assert describe(package) == f"skillci {__version__} (commit {SHA[:12]})"
