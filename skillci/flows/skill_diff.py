"""``skillci skill diff BASE HEAD``: which sections and files of a skill a change touches.

Load both committed versions of the skill folder from git objects (the work tree is not
read); decide with :func:`skillci.patch.prose.skill_diff` and the version rule; nothing is
written.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from skillci.errors import InvalidInputError
from skillci.flows.context import RepoContext
from skillci.flows.skills import resolve_skill, skills_at
from skillci.patch.prose import SkillDiff, skill_diff
from skillci.patch.version import Bump, compare
from skillci.skill.package import MANIFEST, SKILL_MD, SkillPackage


class SkillDiffResult(BaseModel):
    """``skillci skill diff --json``."""

    skill_dir: str = Field(description="Repository-relative skill folder.")
    base: str = Field(description="Base commit.")
    head: str = Field(description="Head commit.")
    diff: SkillDiff
    bump: Bump | None = Field(
        default=None, description="The release bump (None without skillci metadata)."
    )


def skill_folder(ctx: RepoContext, skill: str | None, ref: str) -> str:
    """Repository-relative folder of ``skill`` (a folder or a name), or the only skill."""
    name = resolve_skill(ctx, skill, ref=ref)
    dirs = skills_at(ctx, ref)
    if name.rstrip("/") in dirs:
        return name.rstrip("/")
    by_name = [d for d in dirs if d.rsplit("/", 1)[-1] == name]
    if len(by_name) == 1:
        return by_name[0]
    return ctx.skill_dir(name)


def _package(ctx: RepoContext, commit: str, folder: str) -> SkillPackage:
    return SkillPackage(ctx.git.files_at(commit, folder), root=f"{commit[:12]}:{folder}")


def diff_refs(ctx: RepoContext, base: str, head: str, skill: str | None) -> SkillDiffResult:
    shas = []
    for ref in (base, head):
        sha = ctx.git.rev(ref)
        if sha is None:
            raise InvalidInputError(f"unknown revision {ref!r}", hint="pass a branch, tag or sha")
        shas.append(sha)
    folder = skill_folder(ctx, skill, shas[1])
    before, after = _package(ctx, shas[0], folder), _package(ctx, shas[1], folder)
    if SKILL_MD not in after.files and SKILL_MD not in before.files:
        raise InvalidInputError(f"{folder} has no {SKILL_MD} at {base} or {head}")
    bump: Bump | None = None
    if MANIFEST in before.files and MANIFEST in after.files:
        bump = compare(before, after).bump
    return SkillDiffResult(
        skill_dir=folder, base=shas[0], head=shas[1], diff=skill_diff(before, after), bump=bump
    )
