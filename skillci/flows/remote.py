"""Where branches, tags and skillci's refs live: this repository (LocalForge) or GitHub.

With LocalForge everything is local and these functions are the plain git writes the
flows always made. With GitHubForge (docs/design/111-forge-selection.md):

- the PR's commits are fetched before anything reads them (``refs/pull/N/head``, and the
  base branch into ``refs/heads/<base>``);
- candidate and release commits are pushed through the API
  (:meth:`~skillci.forge.github_repo.GitHubRepo.push_commit`) before a PR is opened or
  merged on them;
- release tags are created on GitHub (tag object + ref) and fetched back, with a release;
- channel refs (``refs/skillci/channels/*``, ``refs/skillci/channel-log/*``) and tags made
  locally are pushed with ``git push`` (never forced), and fetched before they are read.
"""

from __future__ import annotations

from skillci.flows.context import RepoContext
from skillci.forge.base import PullRequest

STATE_REFSPECS = (
    "refs/skillci/channels/*:refs/skillci/channels/*",
    "refs/skillci/channel-log/*:refs/skillci/channel-log/*",
)
PULL_PREFIX = "refs/skillci/github/pull/"


def _github(ctx: RepoContext):  # type: ignore[no-untyped-def]
    from skillci.forge.github import GitHubForge

    forge = ctx.forge
    assert isinstance(forge, GitHubForge)
    return forge


def fetch_pr(ctx: RepoContext, pr: PullRequest) -> None:
    """Make the PR's head and base commits available locally (GitHub only)."""
    if not ctx.on_github:
        return
    from skillci.forge.github_env import fetch

    fetch(
        ctx.git,
        [
            f"+refs/pull/{pr.number}/head:{PULL_PREFIX}{pr.number}/head",
            f"+refs/heads/{pr.base}:refs/heads/{pr.base}",
        ],
    )


def fetch_branch(ctx: RepoContext, branch: str) -> None:
    if ctx.on_github:
        from skillci.forge.github_env import fetch

        fetch(ctx.git, [f"+refs/heads/{branch}:refs/heads/{branch}"])


def publish_branch(
    ctx: RepoContext,
    branch: str,
    new: str,
    old: str | None,
    *,
    force: bool = False,
    reason: str = "skillci",
) -> None:
    """Point ``branch`` at ``new``: locally with compare-and-swap from ``old``; on GitHub by
    pushing ``new`` (and the commits GitHub lacks) through the API, fast-forward only
    unless ``force`` (candidate branches belong to skillci)."""
    if not ctx.on_github:
        ctx.git.update_ref(f"refs/heads/{branch}", new, old, reason=reason)
        return
    if ctx.dry_run:
        return
    _github(ctx).push_commit(ctx.git, new, branch, base=old, force=force)


def push_candidate(ctx: RepoContext, branch: str, head: str, base: str) -> None:
    """GitHub: push the local candidate branch (built on ``base``) before its PR opens.

    Forced: a candidate branch belongs to skillci, and an updated candidate may be rebuilt
    on a newer base. Locally the branch is already where it must be."""
    if ctx.on_github and not ctx.dry_run:
        _github(ctx).push_commit(ctx.git, head, branch, base=base, force=True)


def publish_tag(ctx: RepoContext, tag: str, commit: str, message: str) -> str:
    """Annotated tag ``tag`` on ``commit``; on GitHub also a release whose notes are the
    message. Returns the tag object's sha."""
    if not ctx.on_github:
        return ctx.git.tag_annotated(tag, commit, message)
    from skillci.forge.github_env import fetch
    from skillci.vcs.git import BOT_IDENTITY

    forge = _github(ctx)
    who = (BOT_IDENTITY["GIT_COMMITTER_NAME"], BOT_IDENTITY["GIT_COMMITTER_EMAIL"])
    sha = forge.create_tag(tag, commit, message, tagger=who)
    fetch(ctx.git, [f"refs/tags/{tag}:refs/tags/{tag}"])
    title, _, _ = message.partition("\n")
    forge.create_release(tag, name=title.strip() or tag, notes=message)
    return str(sha)


def pull_state(ctx: RepoContext) -> None:
    """Fetch skillci's channel refs from GitHub (no-op locally)."""
    if ctx.on_github:
        from skillci.forge.github_env import fetch

        fetch(ctx.git, ["+" + s for s in STATE_REFSPECS])


def push_state(
    ctx: RepoContext, *, branches: tuple[str, ...] = (), skill: str | None = None
) -> None:
    """Push channel refs, the skill's tags and ``branches`` to GitHub (no-op locally)."""
    if not ctx.on_github or ctx.dry_run:
        return
    from skillci.forge.github_env import push

    specs = list(STATE_REFSPECS)
    if skill:
        specs.append(f"refs/tags/{skill}@*:refs/tags/{skill}@*")
    specs += [f"refs/heads/{b}:refs/heads/{b}" for b in branches]
    push(ctx.git, specs)
