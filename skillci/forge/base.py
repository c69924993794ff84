"""The Forge protocol and the pull-request shapes every forge returns."""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Literal, Protocol

from pydantic import BaseModel, Field

PR_SCHEMA_VERSION = 1
STICKY_MARKER = "<!-- skillci:gate-report -->"


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


class Forge(Protocol):
    """What skillci needs from a forge. LocalForge and GitHubForge implement it."""

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
