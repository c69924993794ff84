"""The work of ``skillci skill`` on package folders: load and lint, render for a harness,
import a plain SKILL.md skill (seeding its trigger suite), export one back, migrate an old
layout, write the JSON Schemas, and write trees of files byte-exact with their executable
bits. The command renders what these return."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillci.errors import InvalidInputError, UsageError
from skillci.fsutil import atomic_write_bytes
from skillci.skill.lint import LintReport, lint
from skillci.skill.migration import Migration, migrate_files
from skillci.skill.package import (
    LEGACY_MANIFEST,
    MANIFEST,
    SkillPackage,
    read_executables,
    read_tree,
    require_package,
    set_executable,
)
from skillci.skill.package import SKILL_MD as SKILL_MD  # re-exported: `skill diff` shows it
from skillci.skill.porting import export_plain, find_skill_dir, import_plain
from skillci.skill.render import RenderedSkill, render


def _load_for_lint(path: Path) -> SkillPackage:
    if not path.is_dir():
        raise InvalidInputError(
            "not a directory", file=str(path), hint="pass a skill package directory"
        )
    if (path / LEGACY_MANIFEST).is_file() and not (path / MANIFEST).exists():
        require_package({LEGACY_MANIFEST: b""}, str(path))  # old layout: hint to migrate
    if not (path / MANIFEST).exists() and not (path / SKILL_MD).exists():
        return SkillPackage({}, root=str(path))  # reports SK002 without reading an unrelated tree
    return SkillPackage(read_tree(path), root=str(path), executable=read_executables(path))


def lint_paths(paths: list[Path], *, strict: bool) -> list[LintReport]:
    """The lint report of each package folder, in order."""
    return [
        lint(_load_for_lint(p), strict=strict, folder=p.resolve().name, modes_known=True)
        for p in paths
    ]


def write_tree(
    files: dict[str, bytes], out: Path, executable: frozenset[str] = frozenset()
) -> None:
    for rel, data in sorted(files.items()):
        atomic_write_bytes(out / rel, data)
        set_executable(out / rel, rel in executable)


def ensure_empty(out: Path, force: bool) -> None:
    """``out`` may be written: absent, an empty dir, or ``force``."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out} is a file, not a directory", hint="choose a directory path")
    if out.exists() and any(out.iterdir()) and not force:
        raise UsageError(
            f"{out} exists and is not empty", hint="choose another --out or pass --force"
        )


def render_skill(path: Path, harness: str) -> RenderedSkill:
    """What ``harness`` loads of the package at ``path``, with token counts."""
    return render(SkillPackage.from_dir(path), harness)


def _find_plain(src: Path) -> tuple[Path, str]:
    """Resolve DIR to one plain skill folder; returns (folder, format)."""
    if (src / SKILL_MD).is_file():
        fmt = (
            "skillsbench"
            if src.parent.name == "skills" and src.parent.parent.name == "environment"
            else "anthropic"
        )
        return src, fmt
    for root, fmt in ((src / "environment" / "skills", "skillsbench"), (src, "anthropic")):
        if root.is_dir():
            cands: dict[str, dict[str, bytes]] = {
                d.name: {} for d in root.iterdir() if (d / SKILL_MD).is_file()
            }
            if cands:
                return root / find_skill_dir(cands, str(root)), fmt
    raise InvalidInputError(
        "no SKILL.md here, in its subfolders, or in environment/skills/",
        file=str(src),
        hint="point at a skill folder or a SkillsBench task dir",
    )


@dataclass(frozen=True)
class ImportedSkill:
    """A plain skill turned into a package (not yet written)."""

    package: SkillPackage
    folder: Path
    format: str
    notes: list[str]


def import_skill(
    src: Path, *, model_family: str, model: str | None, harness: str, seed_triggers: bool
) -> ImportedSkill:
    """The package of the plain skill at ``src`` (files byte-exact, manifest generated),
    with a trigger suite seeded from its description when asked."""
    folder, fmt = _find_plain(src)
    notes: list[str] = []
    pkg = import_plain(
        read_tree(folder, notes),
        executable=read_executables(folder),
        source=str(folder),
        fmt=fmt,
        model_family=model_family,
        model=model,
        harness=harness,
    )
    if seed_triggers:
        from skillci.skill.package import TRIGGERS
        from skillci.skill.triggers import seed_suite, suite_yaml

        seeded = seed_suite(
            pkg.manifest.name,
            pkg.frontmatter.description,
            model_invocable=pkg.frontmatter.model_invocable,
        )
        pkg = pkg.with_files({TRIGGERS: suite_yaml(seeded).encode()})
    return ImportedSkill(pkg, folder, fmt, notes)


def export_skill(path: Path) -> tuple[dict[str, bytes], frozenset[str]]:
    """The plain (Anthropic format) files of the package at ``path`` and its executables."""
    pkg = SkillPackage.from_dir(path)
    return export_plain(pkg), pkg.executable


def migrate_skill(path: Path, *, dry_run: bool) -> Migration:
    """Move an old-layout package at ``path`` to skillci.yaml + skillci/ (design 140): new
    files are written first, then the old ones removed with their emptied dirs."""
    if not path.is_dir():
        raise InvalidInputError("not a directory", file=str(path), hint="pass a package dir")
    m = migrate_files(read_tree(path), str(path))
    if not dry_run and m.changed:
        executable = read_executables(path)
        changed = {rel: m.files[rel] for rel in (*m.moves.values(), *m.rewritten)}
        moved_exec = frozenset(m.moves.get(r, r) for r in executable)
        write_tree(changed, path, moved_exec)  # new files first: nothing is lost
        for old in m.moves:
            (path / old).unlink()
            parent = (path / old).parent
            while parent != path and not any(parent.iterdir()):
                parent.rmdir()
                parent = parent.parent
    return m


def write_schemas(out: Path, *, check: bool) -> list[str]:
    """Write the JSON Schemas of every saved shape under ``out``; with ``check``, write
    nothing and return the files that differ from the models."""
    from skillci.schemas import schema_files

    stale = []
    for name, data in schema_files().items():
        p = out / name
        if check:
            if not p.is_file() or p.read_bytes() != data:
                stale.append(str(p))
        else:
            atomic_write_bytes(p, data)
    return stale
