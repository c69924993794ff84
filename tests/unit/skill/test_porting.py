from __future__ import annotations

from pathlib import Path

import pytest

from skillci.errors import SkillFormatError
from skillci.skill.lint import lint
from skillci.skill.package import SkillPackage, read_executables, read_tree
from skillci.skill.porting import export_plain, import_plain
from tests.conftest import PLAIN_FIXTURES

FIXTURES = [
    PLAIN_FIXTURES / "anthropic-pdf",
    PLAIN_FIXTURES / "anthropic-webapp-testing",
    PLAIN_FIXTURES / "skillsbench-task" / "environment" / "skills" / "docx",
]


@pytest.mark.parametrize("src", FIXTURES, ids=lambda p: p.name)
def test_import_export_round_trip_is_lossless(src: Path) -> None:
    files = read_tree(src)
    pkg = import_plain(files, executable=read_executables(src), source=str(src))
    assert lint(pkg).errors == 0, [f.format() for f in lint(pkg).findings]
    assert pkg.manifest.origin is not None and pkg.manifest.origin.files == sorted(files)
    assert export_plain(pkg) == files


def test_version_from_metadata() -> None:
    src = FIXTURES[2]
    pkg = import_plain(read_tree(src), source=str(src), fmt="skillsbench")
    assert pkg.manifest.version == "2.1.0" and pkg.manifest.origin.format == "skillsbench"  # type: ignore[union-attr]


def test_import_refuses_reserved_paths() -> None:
    files = dict(read_tree(FIXTURES[0]))
    files["skillci/rules/x.yaml"] = b"a: 1\n"
    with pytest.raises(SkillFormatError, match="reserved"):
        import_plain(files, source="src")


def test_import_needs_frontmatter() -> None:
    with pytest.raises(SkillFormatError, match="no YAML frontmatter"):
        import_plain({"SKILL.md": b"# just markdown\n"}, source="src")


def test_export_of_native_package_is_a_valid_plain_skill(repo_debugger: Path) -> None:
    out = export_plain(SkillPackage.from_dir(repo_debugger))
    assert "skillci.yaml" not in out and not any(p.startswith("skillci/rules/") for p in out)
    assert "skillci/workflows/unit-test-failure.md" in out
    reimported = import_plain(out, source="exported")
    assert reimported.frontmatter.name == "repo-debugger"
