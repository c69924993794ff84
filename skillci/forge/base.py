"""The Forge protocol and the pull-request shapes every forge returns.

Callers type against :class:`Forge`, never a concrete forge: pull requests, and where
branches, tags and skillci's refs live (this repository for LocalForge, GitHub for
GitHubForge; docs/design/111-forge-selection.md). Opening-or-updating the PR of a patch id
is written once, here (:meth:`Forge.upsert_pr`).
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, Field

from skillci.errors import ConflictError

if TYPE_CHECKING:
    from skillci.vcs.git import Git

PR_SCHEMA_VERSION = 1
STICKY_MARKER = "<!-- skillci:gate-report -->"
#: A maintainer approved what the patch guard asked a person about (dashboard "approve").
APPROVED_LABEL = "skillci:approved"
#: The guard (or its classifier, design 407) wants a human: never merged before approval.
NEEDS_APPROVAL_LABEL = "needs-approval"
#: A maintainer asked to propose a rejected (closed) patch again (dashboard "retry").
RETRY_LABEL = "skillci:retry"
#: Asks the PR workflow to gate the PR again (dashboard "re-run" on GitHub: the label event,
#: made with the bot token, starts skill-pr; its trusted report job posts the verdict).
RERUN_LABEL = "skillci:rerun"
#: The dashboard issue (GitHub) and its first line (the marker present/dashboard.py renders).
DASHBOARD_LABEL = "skillci:dashboard"
DASHBOARD_MARKER = "<!-- skillci:dashboard -->"


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class PRState(enum.StrEnum):
    open = "open"
    closed = "closed"
    merged = "merged"


class Comment(BaseModel):
    """A PR comment; a sticky comment is found by its marker and edited in place."""

    id: int
    body: str
    marker: str | None = Field(default=None, description="Marker found in the body, if any.")
    revisions: int = Field(default=1, description="How many times the body was written.")
    created_at: str
    updated_at: str


class Status(BaseModel):
    """A commit status (context such as skillci/gate)."""

    context: str
    state: Literal["pending", "success", "failure", "error"]
    description: str = ""
    sha: str
    updated_at: str


class PullRequest(BaseModel):
    """A pull request as skillci sees it, whatever the forge."""

    schema_version: int = PR_SCHEMA_VERSION
    number: int
    title: str
    body: str
    base: str = Field(description="Base branch name.")
    head_branch: str = Field(description="Head branch name (may be deleted after close).")
    head_sha: str = Field(description="Commit the PR currently proposes.")
    base_sha: str | None = Field(default=None, description="Base tip when the PR was opened.")
    state: PRState = PRState.open
    labels: list[str] = Field(default_factory=list)
    comments: list[Comment] = Field(default_factory=list)
    statuses: dict[str, Status] = Field(default_factory=dict)
    patch_id: str | None = Field(default=None, description="Skill patch content hash, if any.")
    skill: str | None = Field(default=None, description="Skill name the PR changes.")
    merge_sha: str | None = None
    created_at: str
    updated_at: str
    url: str | None = None


class DashboardIssue(BaseModel):
    """Where the repository's dashboard lives and what it says now."""

    body: str = Field(description="The Markdown body.")
    location: str = Field(
        description="GitHub: the issue URL; LocalForge: the ref (refs/skillci/dashboard)."
    )
    number: int | None = Field(default=None, description="Issue number (GitHub only).")


@runtime_checkable
class Forge(Protocol):
    """What skillci needs from a forge. LocalForge and GitHubForge implement it (and
    subclass it explicitly, so they inherit :meth:`upsert_pr`)."""

    def open_pr(
        self,
        *,
        title: str,
        body: str,
        base: str,
        head_branch: str,
        labels: list[str],
        patch_id: str | None = None,
        skill: str | None = None,
    ) -> PullRequest: ...

    def get_pr(self, number: int) -> PullRequest: ...

    def list_prs(
        self, *, state: PRState | None = None, label: str | None = None
    ) -> list[PullRequest]: ...

    def find_by_patch(self, patch_id: str) -> list[PullRequest]: ...

    def update_body(self, number: int, body: str) -> PullRequest: ...

    def add_labels(self, number: int, labels: list[str]) -> PullRequest: ...

    def remove_label(self, number: int, label: str) -> PullRequest: ...

    def upsert_comment(self, number: int, body: str, marker: str = STICKY_MARKER) -> Comment: ...

    def set_status(
        self, number: int, *, context: str, state: str, description: str, sha: str | None = None
    ) -> Status: ...

    def close(
        self, number: int, comment: str | None = None, *, delete_branch: bool = True
    ) -> PullRequest: ...

    def merge(
        self, number: int, *, title: str, message: str, expected_head_sha: str
    ) -> PullRequest: ...

    def refresh_head(self, number: int) -> PullRequest: ...

    def wait_for_patch_pr(self, patch_id: str, timeout: float = 10.0) -> PullRequest: ...

    def read_dashboard(self) -> DashboardIssue | None:
        """The repository's dashboard (one per repository), if there is one."""
        ...

    def write_dashboard(self, title: str, body: str) -> DashboardIssue:
        """Create the dashboard, or replace its body (GitHub: an issue labelled
        ``skillci:dashboard``; LocalForge: a commit chain at ``refs/skillci/dashboard``)."""
        ...

    def upsert_pr(
        self,
        *,
        patch_id: str,
        title: str,
        body: str,
        base: str,
        head_branch: str,
        labels: list[str],
        skill: str | None = None,
    ) -> tuple[PullRequest, bool]:
        """The open PR of ``patch_id`` with ``body`` and its head refreshed, or a new one.

        Returns the PR and whether it was opened. A PR opened for the same patch id by
        another process in the meantime (``ConflictError``) is updated instead."""
        open_prs = [p for p in self.find_by_patch(patch_id) if p.state == PRState.open]
        if open_prs:
            number = open_prs[-1].number
            self.update_body(number, body)
            return self.refresh_head(number), False
        try:
            pr = self.open_pr(
                title=title,
                body=body,
                base=base,
                head_branch=head_branch,
                labels=labels,
                patch_id=patch_id,
                skill=skill,
            )
        except ConflictError:  # another process claimed this patch a moment ago
            pr = self.wait_for_patch_pr(patch_id)
            return self.update_body(pr.number, body), False
        return pr, True

    # -- where branches, tags and skillci's refs live. Writes honour ``git.dry_run``.

    def fetch_pr(self, git: Git, pr: PullRequest) -> None:
        """Make the PR's head and base commits available locally."""
        ...

    def fetch_branch(self, git: Git, branch: str) -> None: ...

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
        """Point ``branch`` at ``new`` (compare-and-swap from ``old``; fast-forward only on a
        remote forge unless ``force``)."""
        ...

    def push_candidate(self, git: Git, branch: str, head: str, base: str) -> None:
        """Make the local candidate ``branch`` (at ``head``, built on ``base``) visible to
        the forge before its PR opens."""
        ...

    def publish_tag(self, git: Git, tag: str, commit: str, message: str) -> str:
        """Annotated ``tag`` on ``commit`` (and a release on a remote forge); the tag
        object's sha."""
        ...

    def pull_state(self, git: Git) -> None:
        """Fetch skillci's channel refs from the forge."""
        ...

    def push_state(
        self, git: Git, *, branches: Sequence[str] = (), skill: str | None = None
    ) -> None:
        """Push channel refs, the skill's tags and ``branches`` to the forge."""
        ...
