from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillci.errors import SkillFormatError
from skillci.skill.models import Lifecycle
from skillci.skill.package import SkillPackage, read_tree
from tests.conftest import BUNDLED_SKILLS
from tests.unit.skill.helpers import bundled


@pytest.mark.parametrize("skill", BUNDLED_SKILLS, ids=lambda p: p.name)
def test_load_save_is_byte_exact(skill: Path, tmp_path: Path) -> None:
    out = tmp_path / "copy"
    shutil.copytree(skill, out)
    before = read_tree(out)
    pkg = SkillPackage.from_dir(out)
    _ = pkg.manifest, pkg.rules, pkg.frontmatter  # parse everything
    assert pkg.to_dir(out) == []  # nothing rewritten
    assert read_tree(out) == before
    fresh = tmp_path / "fresh"
    pkg.to_dir(fresh)
    assert read_tree(fresh) == before


def test_parsed_views() -> None:
    pkg = bundled()
    assert pkg.manifest.name == "repo-debugger"
    assert pkg.frontmatter.name == pkg.manifest.name
    ids = [lr.rule.id for lr in pkg.rules]
    assert "test.run-smallest-first" in ids
    assert len(ids) == len(set(ids)) >= 5
    assert all(lr.rule.status is Lifecycle.active for lr in pkg.rules)
    lr = pkg.rule("edit.minimal-change")
    assert lr is not None and lr.file == "skillci/rules/recovery.yaml" and lr.index == 1
    assert (
        pkg.files[lr.file]
        .decode()
        .splitlines()[lr.line - 1]
        .strip()
        .startswith("- id: edit.minimal-change")
    )


def test_with_files_is_pure() -> None:
    pkg = bundled()
    new = pkg.with_files(
        {"skillci/workflows/extra.md": b"# extra\n", "skillci/tools/search-code.md": None}
    )
    assert (
        "skillci/workflows/extra.md" in new.files
        and "skillci/tools/search-code.md" not in new.files
    )
    assert (
        "skillci/tools/search-code.md" in pkg.files
        and "skillci/workflows/extra.md" not in pkg.files
    )
    assert new.content_hash != pkg.content_hash


@pytest.mark.parametrize("bad", ["../x", "/etc/passwd", "a/../../b", ""])
def test_unsafe_paths_refused(bad: str) -> None:
    with pytest.raises(SkillFormatError, match="unsafe"):
        bundled().with_files({bad: b"x"})


def test_plain_skill_is_not_a_package(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("---\nname: x\ndescription: y\n---\n")
    with pytest.raises(SkillFormatError, match="skillci skill import"):
        SkillPackage.from_dir(tmp_path)


def test_schema_error_names_line(tmp_path: Path) -> None:
    pkg = bundled()
    bad = pkg.with_files(
        {"skillci.yaml": pkg.files["skillci.yaml"].replace(b"version: 0.7.0", b"version: seven")}
    )
    with pytest.raises(SkillFormatError) as ei:
        _ = bad.manifest
    assert ei.value.line == 5 and "semantic version" in ei.value.message
