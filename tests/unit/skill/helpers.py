from __future__ import annotations

from pathlib import Path

from skillci.skill.package import SkillPackage

ROOT = Path(__file__).resolve().parents[3]


def bundled(name: str = "repo-debugger") -> SkillPackage:
    return SkillPackage.from_dir(ROOT / "skills" / name)


def edit(pkg: SkillPackage, rel: str, old: str, new: str) -> SkillPackage:
    text = pkg.files[rel].decode()
    assert old in text, f"{old!r} not in {rel}"
    return pkg.with_files({rel: text.replace(old, new, 1).encode()})


def line_of(pkg: SkillPackage, rel: str, needle: str) -> int:
    for i, line in enumerate(pkg.files[rel].decode().splitlines(), 1):
        if needle in line:
            return i
    raise AssertionError(f"{needle!r} not in {rel}")
