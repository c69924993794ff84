"""Where the skills of a repository are: every folder holding a SKILL.md (pure).

Input is a list of repository paths (from ``git ls-tree`` or a directory walk); nothing is
read here. A skill folder is the directory of a ``SKILL.md``; a skill folder nested inside
another one is a file of the outer skill (an example it bundles), not a skill of its own.
Folders that are never a user's skill (VCS, caches, the local store, virtualenvs,
node_modules) are skipped, and so is everything inside an evaluation task (a folder with a
``task.toml``: Harbor tasks carry the skills they mount under ``environment/skills``).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import PurePosixPath

from skillci.skill.package import IGNORED_DIRS, SKILL_MD

TASK_TOML = "task.toml"
SKIPPED_DIRS = IGNORED_DIRS | {"node_modules", ".venv", "venv", ".tox", ".github"}


def _skipped(parts: tuple[str, ...]) -> bool:
    return any(p in SKIPPED_DIRS for p in parts)


def skill_dirs(paths: Iterable[str]) -> list[str]:
    """Skill folders (``.`` for the repository root), outermost only, sorted."""
    found: set[str] = set()
    all_paths = [PurePosixPath(raw) for raw in paths]
    tasks = {p.parent.as_posix() for p in all_paths if p.name == TASK_TOML}
    for p in all_paths:
        if p.name != SKILL_MD or _skipped(p.parent.parts):
            continue
        if any(str(a) in tasks for a in p.parents):
            continue
        found.add(p.parent.as_posix())
    outer = sorted(found, key=lambda d: (0 if d == "." else d.count("/") + 1, d))
    keep: list[str] = []
    for d in outer:
        if not any(k == "." or d.startswith(k + "/") for k in keep):
            keep.append(d)
    return sorted(keep)


def owning_skill(path: str, dirs: Iterable[str]) -> str | None:
    """The skill folder ``path`` belongs to (the deepest containing one), or None."""
    best: str | None = None
    for d in dirs:
        if (d == "." or path == d or path.startswith(d + "/")) and (
            best is None or best == "." or len(d) > len(best)
        ):
            best = d
    return best


def touched_skills(changed: Iterable[str], dirs: Iterable[str]) -> list[str]:
    """Skill folders that contain at least one of ``changed`` (sorted)."""
    ds = list(dirs)
    return sorted({s for p in changed if (s := owning_skill(p, ds)) is not None})
