"""Which skill a command is about: ``--skill`` when given, else the repository's only one.

No command outside the demo has a default skill name: a repository with one skill folder
(any ``SKILL.md``) needs no ``--skill``; with several, the command names them and asks.
"""

from __future__ import annotations

from skillci.errors import InvalidInputError, UsageError
from skillci.flows.context import RepoContext
from skillci.skill.discover import skill_dirs
from skillci.skill.package import MANIFEST


def skills_at(ctx: RepoContext, ref: str = "HEAD") -> list[str]:
    """Skill folders committed at ``ref`` (repository-relative, sorted)."""
    if ctx.git.rev(ref) is None:
        return []
    paths = ctx.git.read("ls-tree", "-r", "--name-only", "-z", ref).split("\0")
    return skill_dirs(p for p in paths if p)


def managed_skills_at(ctx: RepoContext, ref: str = "HEAD") -> list[str]:
    """Skill folders at ``ref`` that carry skillci metadata."""
    return [d for d in skills_at(ctx, ref) if ctx.git.show_file(ref, f"{d}/{MANIFEST}")]


def resolve_skill(ctx: RepoContext, skill: str | None, *, ref: str = "HEAD") -> str:
    """``skill`` as given, or the only skill folder at ``ref``; UsageError otherwise."""
    if skill:
        return skill
    dirs = skills_at(ctx, ref)
    if len(dirs) == 1:
        return dirs[0]
    if not dirs:
        raise InvalidInputError(
            f"no skill in {ctx.root} (no SKILL.md committed at {ref})",
            hint="add a skill folder with a SKILL.md, then run `skillci init`",
        )
    raise UsageError(
        f"{len(dirs)} skills in this repository ({', '.join(dirs)}): which one?",
        hint=f"pass --skill {dirs[0]}",
    )
