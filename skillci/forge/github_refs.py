"""Where branches, tags and skillci's refs live on GitHub (docs/design/111-forge-selection.md).

- the PR's commits are fetched before anything reads them (``refs/pull/N/head``, and the
  base branch into ``refs/heads/<base>``);
- candidate and release commits are pushed through the API
  (:meth:`~skillci.forge.github_repo.GitHubRepo.push_commit`) before a PR is opened or
  merged on them;
- release tags are created on GitHub (tag object + ref) and fetched back, with a release;
- channel refs (``refs/skillci/channels/*``, ``refs/skillci/channel-log/*``) and tags made
  locally are pushed with ``git push`` (never forced), and fetched before they are read.

:class:`GitHubRefs` holds these halves of the :class:`~skillci.forge.base.Forge` protocol;
:class:`~skillci.forge.github.GitHubForge` adds the pull requests. Writes honour
``git.dry_run`` (nothing is pushed).
"""

from __future__ import annotations

from collections.abc import Sequence

from skillci.forge.base import PullRequest
from skillci.forge.github_env import fetch, push
from skillci.forge.github_repo import GitHubRepo
from skillci.vcs.git import BOT_IDENTITY, Git

STATE_REFSPECS = (
    "refs/skillci/channels/*:refs/skillci/channels/*",
    "refs/skillci/channel-log/*:refs/skillci/channel-log/*",
)
PULL_PREFIX = "refs/skillci/github/pull/"


class GitHubRefs(GitHubRepo):
    """Branches, tags and channel refs kept on GitHub."""

    def fetch_pr(self, git: Git, pr: PullRequest) -> None:
        fetch(
            git,
            [
                f"+refs/pull/{pr.number}/head:{PULL_PREFIX}{pr.number}/head",
                f"+refs/heads/{pr.base}:refs/heads/{pr.base}",
            ],
        )

    def fetch_branch(self, git: Git, branch: str) -> None:
        fetch(git, [f"+refs/heads/{branch}:refs/heads/{branch}"])

    def publish_branch(
        self,
        git: Git,
        branch: str,
        new: str,
        old: str | None,
        *,
        force: bool = False,
        reason: str = "skillci",
    ) -> None:
        """Push ``new`` (and the commits GitHub lacks) through the API, fast-forward only
        unless ``force`` (candidate branches belong to skillci)."""
        if git.dry_run:
            return
        self.push_commit(git, new, branch, base=old, force=force)

    def push_candidate(self, git: Git, branch: str, head: str, base: str) -> None:
        """Forced: a candidate branch belongs to skillci, and an updated candidate may be
        rebuilt on a newer base."""
        if not git.dry_run:
            self.push_commit(git, head, branch, base=base, force=True)

    def publish_tag(self, git: Git, tag: str, commit: str, message: str) -> str:
        """The tag on GitHub, fetched back, and a release whose notes are the message."""
        who = (BOT_IDENTITY["GIT_COMMITTER_NAME"], BOT_IDENTITY["GIT_COMMITTER_EMAIL"])
        sha = self.create_tag(tag, commit, message, tagger=who)
        fetch(git, [f"refs/tags/{tag}:refs/tags/{tag}"])
        title, _, _ = message.partition("\n")
        self.create_release(tag, name=title.strip() or tag, notes=message)
        return str(sha)

    def pull_state(self, git: Git) -> None:
        fetch(git, ["+" + s for s in STATE_REFSPECS])

    def push_state(
        self, git: Git, *, branches: Sequence[str] = (), skill: str | None = None
    ) -> None:
        if git.dry_run:
            return
        specs = list(STATE_REFSPECS)
        if skill:
            specs.append(f"refs/tags/{skill}@*:refs/tags/{skill}@*")
        specs += [f"refs/heads/{b}:refs/heads/{b}" for b in branches]
        push(git, specs)


__all__ = ["PULL_PREFIX", "STATE_REFSPECS", "GitHubRefs"]
