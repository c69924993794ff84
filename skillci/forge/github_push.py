"""What a local commit range looks like to GitHub's git database API.

skillci pushes candidate commits through the API (blobs -> tree on the parent's tree ->
commit -> ref) instead of ``git push``; see docs/design/060-github-forge.md. This module
only *reads* the local repository (through :class:`skillci.vcs.git.Git`) and describes
each commit as the API calls need it; :class:`skillci.forge.github.GitHubForge` sends them.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone

from pydantic import BaseModel, Field

from skillci.errors import ForgeError
from skillci.vcs.git import Git

GITLINK = "160000"


@dataclass(frozen=True)
class Change:
    """One path changed by a commit relative to its parent (``sha`` None: deleted)."""

    path: str
    mode: str
    type: str  # blob or commit (submodule)
    sha: str | None


@dataclass(frozen=True)
class Ident:
    name: str
    email: str
    date: str  # ISO 8601 with the original UTC offset


@dataclass(frozen=True)
class LocalCommit:
    sha: str
    parent: str
    tree: str
    message: str
    author: Ident
    committer: Ident
    changes: tuple[Change, ...]


class PushResult(BaseModel):
    """What :meth:`GitHubForge.push_commit` did."""

    branch: str = Field(description="Branch name on GitHub (without refs/heads/).")
    local_sha: str = Field(description="The local commit that was pushed.")
    remote_sha: str = Field(description="The commit the GitHub branch now points to.")
    commits: int = Field(description="Commits created through the API.")
    blobs: int = Field(description="Blobs uploaded.")
    identical: bool = Field(
        description="True when GitHub rebuilt every commit byte for byte (same sha). False "
        "when it changed something (for instance signed the commit); use remote_sha."
    )


def _ident(line: str) -> Ident:
    name, rest = line.split(" <", 1)
    email, rest = rest.split("> ", 1)
    epoch, tz = rest.rsplit(" ", 1)
    sign = -1 if tz.startswith("-") else 1
    offset = timedelta(hours=int(tz[1:3]), minutes=int(tz[3:5])) * sign
    when = datetime.fromtimestamp(int(epoch), UTC).astimezone(timezone(offset))
    return Ident(name, email, when.isoformat())


def read_commit(git: Git, sha: str) -> LocalCommit:
    """A local commit with a single parent, and the paths it changes."""
    raw = git.read("cat-file", "commit", sha)
    # Git.read() strips the output; put back the trailing newlines the object has (git
    # writes messages ending in newlines, never in other whitespace), so that GitHub can
    # rebuild the commit byte for byte.
    size = int(git.read("cat-file", "-s", sha))
    text = raw + "\n" * max(0, size - len(raw.encode()))
    head, _, message = text.partition("\n\n")
    parents, tree, author, committer = [], "", "", ""
    for line in head.splitlines():
        key, _, value = line.partition(" ")
        if key == "parent":
            parents.append(value)
        elif key == "tree":
            tree = value
        elif key == "author":
            author = value
        elif key == "committer":
            committer = value
        elif key == "gpgsig":
            raise ForgeError(
                f"commit {sha[:12]} is signed; the API cannot carry a local signature",
                hint="push signed commits with `git push` instead",
            )
    if len(parents) != 1:
        raise ForgeError(
            f"commit {sha[:12]} has {len(parents)} parents; the API push takes linear history",
            hint="push merge and root commits with `git push`",
        )
    changes = []
    out = git.read("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", parents[0], sha)
    parts = out.split("\0")
    i = 0
    while i + 1 < len(parts) and parts[i]:
        meta, path = parts[i], parts[i + 1]
        _, new_mode, _, new_sha, status = meta.lstrip(":").split(" ")
        if status.startswith("D"):
            changes.append(Change(path, "100644", "blob", None))
        else:
            typ = "commit" if new_mode == GITLINK else "blob"
            changes.append(Change(path, new_mode, typ, new_sha))
        i += 2
    return LocalCommit(
        sha=sha,
        parent=parents[0],
        tree=tree,
        message=message,
        author=_ident(author),
        committer=_ident(committer),
        changes=tuple(changes),
    )


def commits_between(git: Git, base: str, head: str) -> list[str]:
    """Commits in ``base..head``, oldest first."""
    out = git.read("rev-list", "--reverse", "--topo-order", f"{base}..{head}")
    return [s for s in out.split() if s]


def first_parents(git: Git, head: str, limit: int) -> list[str]:
    """``head`` and its first-parent ancestors, newest first, at most ``limit``."""
    out = git.read("rev-list", "--first-parent", f"--max-count={limit}", head)
    return [s for s in out.split() if s]
