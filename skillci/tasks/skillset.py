"""The skills a task ships, and which one of them is under test.

A SkillsBench task ships a *set* of skills under ``environment/skills/`` (3-4 is common);
a harness installs the whole set for a trial (BenchFlow's ``--skills-dir``, Harbor's
``--skills``) and the agent picks among them. skillci evaluates and compiles one of them —
the skill under test — while the others are installed beside it unchanged.

A skill folder is a directory holding ``SKILL.md`` (some published tasks spell it
``skill.md``; the name is matched without case). Folders without one (a ``licenses/``
beside the skills) are not skills.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillci.errors import UsageError

SKILL_FILE = "skill.md"  # compared case-insensitively


def is_skill_dir(path: Path) -> bool:
    """``path`` is a directory holding SKILL.md (any case)."""
    return path.is_dir() and any(
        c.name.lower() == SKILL_FILE and c.is_file() for c in path.iterdir()
    )


def skill_dirs(root: Path) -> list[Path]:
    """The skills at ``root``: ``[root]`` when it is a skill itself, else its child skill
    folders, sorted by name."""
    if not root.is_dir():
        return []
    if is_skill_dir(root):
        return [root]
    return sorted((c for c in root.iterdir() if is_skill_dir(c)), key=lambda p: p.name)


@dataclass(frozen=True)
class SkillSet:
    """Every skill installed for a trial, and the one under test."""

    under_test: Path
    skills: tuple[Path, ...]

    @property
    def companions(self) -> tuple[Path, ...]:
        """The installed skills other than the one under test."""
        return tuple(s for s in self.skills if s != self.under_test)

    @property
    def names(self) -> list[str]:
        return [s.name for s in self.skills]


def select_skill(source: Path, name: str | None = None) -> SkillSet:
    """The set at ``source`` (a skill folder, or a root of skill folders such as a task's
    ``environment/skills``) with ``name`` under test; ``name`` may be omitted when the set
    has one skill. Raises :class:`UsageError` naming the skills found otherwise."""
    found = skill_dirs(source)
    if not found:
        raise UsageError(
            f"{source}: no skill folder (a dir holding SKILL.md) here or in its subfolders",
            hint="point at a skill folder or a task's environment/skills",
        )
    names = ", ".join(p.name for p in found)
    if name is None:
        if len(found) > 1:
            raise UsageError(
                f"{source} holds {len(found)} skills ({names}); name the one under test",
                hint="pass --skill NAME (the others are installed beside it unchanged)",
            )
        return SkillSet(found[0], tuple(found))
    chosen = [p for p in found if p.name == name]
    if not chosen:
        raise UsageError(
            f"--skill {name}: not among the skills of {source} ({names})",
            hint="pass one of the names listed",
        )
    return SkillSet(chosen[0], tuple(found))


__all__ = ["SKILL_FILE", "SkillSet", "is_skill_dir", "select_skill", "skill_dirs"]
