"""Section-level prose diff and the semver rule for prose and bundled files (pure)."""

from __future__ import annotations

from pathlib import Path

from skillci.patch.prose import sections, skill_diff
from skillci.patch.version import compare
from skillci.skill.package import SkillPackage


def _pkg(repo_debugger: Path) -> SkillPackage:
    return SkillPackage.from_dir(repo_debugger)


def test_sections_use_heading_paths_and_ignore_fenced_headings() -> None:
    text = "intro\n# A\na\n## B\nb\n```\n# not a heading\n```\n# C\nc\n## B\nb2\n"
    names = [n for n, _ in sections(text)]
    assert names == ["(preamble)", "A", "A > B", "C", "C > B"]
    assert dict(sections(text))["A > B"] == "## B\nb\n```\n# not a heading\n```\n"


def test_body_edit_names_its_section_and_is_a_patch(repo_debugger: Path) -> None:
    before = _pkg(repo_debugger)
    md = before.text("SKILL.md").replace(
        "Inputs you can trust:",
        "Re-run the failing test after every edit.\n\nInputs you can trust:",
    )
    after = before.with_files({"SKILL.md": md.encode()})
    d = skill_diff(before, after)
    assert [(s.section, s.change) for s in d.sections] == [("Repo debugger", "changed")]
    s = d.sections[0]
    assert s.tokens_after - s.tokens_before == after.tokens(
        "Re-run the failing test after every edit.\n\n"
    )
    assert d.frontmatter == [] and [f.path for f in d.files] == ["SKILL.md"]
    changes = compare(before, after, "why")
    assert (changes.bump, changes.to_version) == ("patch", "0.7.1")
    assert [(o.kind, o.subject) for o in changes.other] == [
        ("section_changed", 'SKILL.md "Repo debugger"')
    ]


def test_bundled_files_script_added_is_minor_removal_is_minor_before_1(
    repo_debugger: Path,
) -> None:
    before = _pkg(repo_debugger)
    after = before.with_files(
        {
            "scripts/check.py": b"print('ok')\n",
            "references/notes.md": b"# Notes\nread me\n",
            "skillci/workflows/ci-failure.md": None,
        }
    )
    d = skill_diff(before, after)
    kinds = {(f.path, f.kind, f.change) for f in d.files}
    assert kinds == {
        ("scripts/check.py", "script", "added"),
        ("references/notes.md", "reference", "added"),
        ("skillci/workflows/ci-failure.md", "on_demand", "removed"),
    }
    assert ("references/notes.md", "Notes", "added") in {
        (s.file, s.section, s.change) for s in d.sections
    }
    changes = compare(before, after, "why")
    levels = {o.subject: o.level for o in changes.other}
    assert levels == {
        "scripts/check.py": "minor",
        "references/notes.md": "patch",
        "skillci/workflows/ci-failure.md": "minor",
    }
    assert changes.bump == "minor"


def test_removal_after_1_0_is_major(repo_debugger: Path) -> None:
    before = _pkg(repo_debugger)
    manifest = before.text("skillci.yaml").replace("version: 0.7.0", "version: 1.2.0")
    before = before.with_files({"skillci.yaml": manifest.encode()})
    md = before.text("SKILL.md")
    cut = md[: md.index("Inputs you can trust:")]
    after = before.with_files({"SKILL.md": (cut + "# Gone\n").encode()})
    changes = compare(before, after, "")
    assert {(o.kind, o.level) for o in changes.other} == {
        ("section_changed", "patch"),
        ("section_added", "patch"),
    }
    after2 = before.with_files({"skillci/tools/run-tests.md": None})
    assert compare(before, after2, "").bump == "major"


GUIDE = (
    "# Guide\n\n## Setup\n\nInstall the tools with `pip install -e .` and check the version.\n"
    "Run the suite once to warm the cache; it takes about a minute.\n\n"
    "## Troubleshooting\n\nIf the import fails, re-create the virtualenv.\n"
    "If a test hangs, run it alone with `-x -vv` and read the last call.\n"
)
BODY = (
    "\n# Skill\n\nRead [the guide](references/a.md) first.\n\n## When not to use\n\n"
    "Never use this for production deploys; never push to main.\n"
    "Do not run it on a dirty tree: stash first, then run it.\n"
    "It is not for performance work; use the profiler skill for that.\n"
)


def _stable(repo_debugger: Path, version: str = "1.2.0") -> SkillPackage:
    pkg = _pkg(repo_debugger)
    manifest = pkg.text("skillci.yaml").replace("version: 0.7.0", f"version: {version}")
    fm = pkg.text("SKILL.md").split("\n---\n", 1)[0] + "\n---\n"
    return pkg.with_files(
        {
            "skillci.yaml": manifest.encode(),
            "SKILL.md": (fm + BODY).encode(),
            "references/a.md": GUIDE.encode(),
        }
    )


def test_a_renamed_file_is_one_rename_and_a_patch(repo_debugger: Path) -> None:
    before = _stable(repo_debugger)
    md = before.text("SKILL.md").replace("references/a.md", "references/b.md")
    after = before.with_files(
        {"references/a.md": None, "references/b.md": GUIDE.encode(), "SKILL.md": md.encode()}
    )
    d = skill_diff(before, after)
    renamed = [(f.path, f.change, f.from_path) for f in d.files if f.path != "SKILL.md"]
    assert renamed == [("references/b.md", "renamed", "references/a.md")]
    assert [(s.file, s.change) for s in d.sections] == [("SKILL.md", "changed")]  # the link
    changes = compare(before, after, "rename")
    assert (changes.bump, changes.to_version) == ("patch", "1.2.1")
    assert ("file_renamed", "references/b.md", "patch") in {
        (o.kind, o.subject, o.level) for o in changes.other
    }
    # renamed and edited a little: still a rename, its changed section named
    edited = GUIDE.replace("about a minute", "about two minutes")
    after2 = after.with_files({"references/b.md": edited.encode()})
    (f,) = [f for f in skill_diff(before, after2).files if f.path != "SKILL.md"]
    assert (f.change, f.sections) == ("renamed", ["Guide > Setup"])
    # a different file under a new name is a removal plus an addition (major past 1.0)
    other = after.with_files({"references/b.md": b"# Other\n\nSomething else entirely.\n"})
    assert compare(before, other, "").bump == "major"


def test_a_section_moved_to_an_on_demand_file_is_a_move_and_a_patch(
    repo_debugger: Path,
) -> None:
    before = _stable(repo_debugger)
    md = before.text("SKILL.md")
    head, _, moved = md.partition("## When not to use\n")
    pointer = "Before you start, read [when not to use](references/limits.md).\n"
    after = before.with_files(
        {
            "SKILL.md": (head.rstrip("\n") + "\n" + pointer).encode(),
            "references/limits.md": ("# When not to use\n" + moved).encode(),
        }
    )
    d = skill_diff(before, after)
    (mv,) = [s for s in d.sections if s.change == "moved"]
    assert (mv.from_file, mv.from_section) == ("SKILL.md", "Skill > When not to use")
    assert (mv.file, mv.section) == ("references/limits.md", "When not to use")
    assert "removed" not in {s.change for s in d.sections}
    changes = compare(before, after, "static compile")
    assert changes.bump == "patch"
    assert ("section_moved", 'SKILL.md "Skill > When not to use"') in {
        (o.kind, o.subject) for o in changes.other
    }
    # the same section deleted, not moved: a removal (major past 1.0)
    gone = before.with_files({"SKILL.md": head.encode()})
    assert compare(before, gone, "").bump == "major"
