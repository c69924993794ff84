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
