"""``skillci skill diff`` on real git branches: a `git mv` rename and a section moved to
an on-demand file read as a rename and a move, with a patch bump (issue 33)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.cli.main import main
from tests.integration.loop.conftest import git, make_scratch

SKILL = "skills/repo-debugger"
GUIDE = (
    "# Guide\n\n## Setup\n\nInstall the tools with `pip install -e .` and check the version.\n"
    "Run the suite once to warm the cache; it takes about a minute.\n"
)
LIMITS = (
    "\n## When not to use\n\nNever use this for production deploys; never push to main.\n"
    "Do not run it on a dirty tree: stash first, then run it.\n"
)


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    path = make_scratch(tmp_path / "repo")
    manifest = path / SKILL / "skillci.yaml"
    manifest.write_text(manifest.read_text().replace("version: 0.7.0", "version: 1.0.0"))
    (path / SKILL / "references").mkdir()
    (path / SKILL / "references" / "guide.md").write_text(GUIDE)
    md = path / SKILL / "SKILL.md"
    md.write_text(md.read_text() + "\nRead [the guide](references/guide.md).\n" + LIMITS)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "1.0.0 with a guide and limits")
    return path


def diff(repo: Path, branch: str, capsys: pytest.CaptureFixture[str]) -> dict[str, object]:
    capsys.readouterr()
    assert main(["skill", "diff", "main", branch, "--repo", str(repo), "--json"]) == 0
    out: dict[str, object] = json.loads(capsys.readouterr().out)
    return out


def test_git_mv_is_a_rename_and_a_patch(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    git(repo, "checkout", "-q", "-b", "rename")
    git(repo, "mv", f"{SKILL}/references/guide.md", f"{SKILL}/references/setup.md")
    md = repo / SKILL / "SKILL.md"
    md.write_text(md.read_text().replace("references/guide.md", "references/setup.md"))
    git(repo, "commit", "-qam", "rename the guide")
    d = diff(repo, "rename", capsys)
    files = d["diff"]["files"]  # type: ignore[index]
    assert [(f["path"], f["change"], f["from_path"]) for f in files if f["kind"] != "skill_md"] == [
        ("references/setup.md", "renamed", "references/guide.md")
    ]
    assert d["bump"] == "patch"  # was minor (major past 1.0.0) as a removal + an addition
    assert main(["skill", "diff", "main", "rename", "--repo", str(repo)]) == 0
    text = capsys.readouterr().out
    assert "renamed from references/guide.md" in text and "removed" not in text


def test_a_section_moved_out_is_a_move_and_a_patch(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    git(repo, "checkout", "-q", "-b", "static")
    md = repo / SKILL / "SKILL.md"
    md.write_text(
        md.read_text().replace(LIMITS, "\nSee [when not to use](references/limits.md).\n")
    )
    (repo / SKILL / "references" / "limits.md").write_text("# When not to use\n" + LIMITS[21:])
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "move the limits on demand")
    d = diff(repo, "static", capsys)
    moved = [s for s in d["diff"]["sections"] if s["change"] == "moved"]  # type: ignore[index]
    assert [(s["from_section"], s["file"]) for s in moved] == [
        ("Repo debugger > When not to use", "references/limits.md")
    ]
    assert d["bump"] == "patch"
    assert main(["skill", "diff", "main", "static", "--repo", str(repo)]) == 0
    assert "1 section(s) moved to on-demand files: references/limits.md" in capsys.readouterr().out
