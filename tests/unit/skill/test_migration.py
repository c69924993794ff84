"""Old-layout packages move to skillci.yaml + skillci/ without losing or changing a byte."""

from __future__ import annotations

import pytest

from skillci.errors import SkillFormatError
from skillci.skill.lint import lint
from skillci.skill.migration import legacy_target, migrate_files
from skillci.skill.package import LEGACY_MANIFEST, MANIFEST, SkillPackage, require_package
from tests.unit.skill.helpers import bundled


def legacy_files() -> dict[str, bytes]:
    """The bundled skill as the old layout kept it (the inverse of the migration)."""
    pkg = bundled()
    out: dict[str, bytes] = {}
    for rel, data in pkg.files.items():
        old = rel
        if rel == MANIFEST:
            old = LEGACY_MANIFEST
            data = data.replace(b"skillci/workflows/", b"workflows/")
            data = data.replace(b"skillci/tools/", b"tools/").replace(
                b"skillci/recovery/", b"recovery/"
            )
        elif rel.startswith("skillci/"):
            old = rel[len("skillci/") :]
            data = data.replace(b"`skillci/workflows/", b"`workflows/")
        out[old] = data
    return out


def test_migrating_the_old_bundled_layout_gives_the_committed_package() -> None:
    m = migrate_files(legacy_files(), "old")
    assert m.files == dict(bundled().files)
    assert m.moves["manifest.yaml"] == "skillci.yaml"
    assert m.moves["rules/finish.yaml"] == "skillci/rules/finish.yaml"
    assert m.moves["CHANGELOG.md"] == "skillci/CHANGELOG.md"
    assert sorted(m.rewritten) == ["skillci.yaml", "skillci/workflows/ci-failure.md"]
    assert lint(SkillPackage(m.files, root="m")).errors == 0


def test_the_skills_own_files_stay_where_they_are() -> None:
    files = legacy_files()
    files["tools/helper.py"] = b"print(1)\n"  # not an on-demand doc: the skill's own
    files["scripts/run.sh"] = b"#!/bin/sh\n"
    files["SKILL.md"] += b"\nSee [the CI flow](workflows/ci-failure.md) and `tools/helper.py`.\n"
    m = migrate_files(files, "old")
    assert m.files["tools/helper.py"] == b"print(1)\n" and "tools/helper.py" not in m.moves
    assert m.files["scripts/run.sh"] == files["scripts/run.sh"]
    text = m.files["SKILL.md"].decode()
    assert "[the CI flow](skillci/workflows/ci-failure.md)" in text
    assert "`tools/helper.py`" in text
    assert "SKILL.md" in m.rewritten


def test_current_layout_is_left_alone_and_other_input_refused() -> None:
    files = dict(bundled().files)
    m = migrate_files(files, "pkg")
    assert not m.changed and m.files == files
    with pytest.raises(SkillFormatError, match="not an old-layout"):
        migrate_files({"SKILL.md": b"---\nname: a\n---\n"}, "plain")
    clash = legacy_files() | {"skillci/notes.md": b"mine\n"}
    with pytest.raises(SkillFormatError, match="own skillci/ folder"):
        migrate_files(clash, "old")


def test_old_layout_is_refused_with_a_hint_to_migrate() -> None:
    with pytest.raises(SkillFormatError, match="old package layout") as exc:
        require_package(legacy_files(), "skills/x")
    assert "skillci skill migrate skills/x" in (exc.value.hint or "")


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("evals/smoke.yaml", "skillci/evals/smoke.yaml"),
        ("examples/a.jsonl", "skillci/examples/a.jsonl"),
        ("recovery/x.md", "skillci/recovery/x.md"),
        ("recovery/x.txt", None),
        ("references/r.md", None),
        ("SKILL.md", None),
    ],
)
def test_legacy_targets(old: str, new: str | None) -> None:
    assert legacy_target(old) == new
