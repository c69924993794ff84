"""``skillci pr open``: a branch a person wrote becomes a pull request on LocalForge.

Load: the head and base branches, the paths the head changes since their merge base, the
skill folders at the head. Decide: which skill the PR changes (exactly one; ``--skill``
picks one when the branch touches several), the title (``--title``, else the head's
subject). Act: ``LocalForge.open_pr`` with no patch id (the PR is a person's, not a
compiled patch). Opening the same head branch twice returns the open PR.

On GitHub the pull request already exists (the person opened it there) and the review
workflow gates it; this command refuses the GitHub forge with that hint.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from skillci.errors import InvalidInputError, UsageError
from skillci.flows.context import RepoContext
from skillci.flows.skills import skills_at
from skillci.forge.base import Forge as Forge  # re-exported: the shapes `pr` renders
from skillci.forge.base import PRState as PRState
from skillci.forge.base import PullRequest
from skillci.forge.local import LocalForge as LocalForge
from skillci.skill.discover import touched_skills
from skillci.skill.package import MANIFEST

HUMAN_LABEL = "human"


class PrOpenResult(BaseModel):
    """What ``skillci pr open`` did (or, under --dry-run, would do)."""

    action: str = Field(description="opened, exists (an open PR has this head) or would-open.")
    number: int | None = Field(default=None, description="PR number (None under --dry-run).")
    title: str = Field(description="PR title.")
    base: str = Field(description="Base branch.")
    head_branch: str = Field(description="Head branch.")
    head_sha: str = Field(description="Head commit.")
    skill: str = Field(description="Skill folder the PR changes (repository-relative).")
    changed: list[str] = Field(description="Paths the PR changes inside the skill folder.")
    commits: int = Field(description="Commits on the head since the merge base.")
    dry_run: bool = Field(default=False, description="Nothing was written.")


def _body(skill: str, changed: list[str], commits: list[str]) -> str:
    lines = [f"Skill: `{skill}`", "", f"{len(commits)} commit(s):"]
    lines += [f"- {c}" for c in commits[:20]]
    lines += ["", f"{len(changed)} file(s) changed in the skill:"]
    lines += [f"- `{p}`" for p in changed[:50]]
    lines += ["", "Opened with `skillci pr open`; gate it with `skillci review --pr N`."]
    return "\n".join(lines) + "\n"


def open_branch_pr(
    ctx: RepoContext,
    head: str,
    *,
    base: str = "main",
    title: str | None = None,
    skill: str | None = None,
) -> PrOpenResult:
    forge = ctx.forge
    if not isinstance(forge, LocalForge):
        raise UsageError(
            "`skillci pr open` opens pull requests on LocalForge only",
            hint="on GitHub open the PR there; the review workflow gates it "
            "(or pass --forge local)",
        )
    head_sha = ctx.git.rev(f"refs/heads/{head}")
    base_sha = ctx.git.rev(f"refs/heads/{base}")
    if head_sha is None:
        raise InvalidInputError(f"no branch {head!r}", hint="commit your change on a branch first")
    if base_sha is None:
        raise InvalidInputError(f"no base branch {base!r}", hint="pass --base BRANCH")
    mb = ctx.git.merge_base(base_sha, head_sha)
    if mb is None:
        raise InvalidInputError(f"{head} and {base} share no history")
    if mb == head_sha:
        raise InvalidInputError(
            f"{head} has no commits that {base} does not have", hint="commit your change first"
        )
    changed = ctx.git.changed_paths(mb, head_sha)
    dirs = skills_at(ctx, head_sha)
    touched = touched_skills(changed, dirs)
    if skill is not None:
        want = ctx.skill_dir(skill)
        if want not in touched:
            raise InvalidInputError(
                f"{head} changes nothing in {want}",
                hint=f"it changes {', '.join(touched) or 'no skill folder'}",
            )
        touched = [want]
    if not touched:
        raise InvalidInputError(
            f"{head} changes no skill folder (changed: {', '.join(changed[:5])})",
            hint="a PR for skillci changes one skill's files",
        )
    if len(touched) > 1:
        raise UsageError(
            f"{head} changes {len(touched)} skills ({', '.join(touched)})",
            hint=f"open one PR per skill, or pass --skill {touched[0]}",
        )
    sdir = touched[0]
    if ctx.git.show_file(head_sha, f"{sdir}/{MANIFEST}") is None:
        raise InvalidInputError(
            f"{sdir} has no skillci metadata ({MANIFEST}) at {head}",
            hint="run `skillci init` on the base branch and merge it into yours",
        )
    in_skill = [p[len(sdir) + 1 :] for p in changed if p.startswith(sdir + "/")]
    subjects = ctx.git.read("log", "--format=%s", f"{mb}..{head_sha}").splitlines()
    pr_title = title or (subjects[0] if subjects else head)
    res = PrOpenResult(
        action="would-open" if ctx.dry_run else "opened",
        title=pr_title,
        base=base,
        head_branch=head,
        head_sha=head_sha,
        skill=sdir,
        changed=in_skill,
        commits=len(subjects),
        dry_run=ctx.dry_run,
    )
    existing = [
        p for p in forge.list_prs(state=PRState.open) if p.head_branch == head and p.base == base
    ]
    if existing:
        return res.model_copy(
            update={"action": "exists", "number": existing[-1].number, "title": existing[-1].title}
        )
    if ctx.dry_run:
        return res
    pr: PullRequest = forge.open_pr(
        title=pr_title,
        body=_body(sdir, in_skill, subjects),
        base=base,
        head_branch=head,
        labels=[HUMAN_LABEL],
        patch_id=None,
        skill=sdir,
    )
    return res.model_copy(update={"number": pr.number})
