"""Saved shapes of releases and channels: channel state, channel-log events, canary analyses.

The channel state and every event live in git (``refs/skillci/channel-log/<skill>``, see
:mod:`skillci.release.channels`); canary analyses are kept in the trace store (blob kind
``canary-analysis``). Changing a field's meaning means bumping ``RELEASE_SCHEMA_VERSION``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

from pydantic import BaseModel, Field

from skillci.basemodels import StrictModel
from skillci.skill.models import CanaryPolicy

RELEASE_SCHEMA_VERSION = 1

Channel = Literal["stable", "canary"]
CHANNELS: tuple[Channel, ...] = ("stable", "canary")
EventType = Literal["init", "released", "canary_start", "promote", "rollback"]
Outcome = Literal["pass", "fail", "inconclusive"]


def utcnow() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


class Pointer(StrictModel):
    """Where a channel points: a released version and its commit."""

    version: str = Field(description="Skill version, e.g. 0.7.1.")
    commit: str = Field(description="Commit of the release tag (the merge commit).")
    tag: str = Field(description="Release tag name, <skill>@<version>.")
    since: datetime = Field(description="When the channel moved here (UTC).")
    weight: int | None = Field(
        default=None,
        ge=0,
        le=100,
        description="Canary only: percent of requests (bucket < weight) that get the canary.",
    )


class ReleaseInfo(StrictModel):
    """One release of the skill, as the channel log knows it."""

    version: str = Field(description="Released version.")
    commit: str = Field(description="Merge commit the tag points at.")
    tag: str = Field(description="Annotated tag <skill>@<version>.")
    gate_id: str | None = Field(default=None, description="Gate report that accepted it.")
    pr: int | None = Field(default=None, description="Pull request it came from.")
    released_at: datetime = Field(description="When it was released (UTC).")
    rolled_back: str | None = Field(
        default=None, description="Why it was rolled back (null: never rolled back)."
    )


class ChannelState(StrictModel):
    """The state after the latest channel-log event (``state.json`` in the log commit)."""

    schema_version: int = Field(default=RELEASE_SCHEMA_VERSION, description="Shape version.")
    skill: str = Field(description="Skill name.")
    path: str = Field(description="Skill package dir inside the repo, e.g. skills/<name>.")
    base: str = Field(default="main", description="Branch releases are merged into.")
    seq: int = Field(default=0, ge=0, description="Number of events in the log.")
    stable: Pointer | None = Field(default=None, description="The stable channel.")
    canary: Pointer | None = Field(default=None, description="The canary channel, if any.")
    releases: dict[str, ReleaseInfo] = Field(
        default_factory=dict, description="Every release by version."
    )
    stable_history: list[str] = Field(
        default_factory=list,
        description="Versions stable pointed at before the current one, oldest first.",
    )

    def pointer(self, channel: Channel) -> Pointer | None:
        return self.stable if channel == "stable" else self.canary


class Move(StrictModel):
    """One channel moved (or cleared) by an event."""

    channel: Channel = Field(description="stable or canary.")
    from_version: str | None = Field(description="Version before (null: channel was empty).")
    to_version: str | None = Field(description="Version after (null: channel cleared).")
    from_commit: str | None = Field(description="Commit before.")
    to_commit: str | None = Field(description="Commit after.")
    weight: int | None = Field(default=None, description="Canary weight after the move.")


class ChannelEvent(StrictModel):
    """One entry of the append-only channel log (``event.json`` in the log commit)."""

    schema_version: int = Field(default=RELEASE_SCHEMA_VERSION, description="Shape version.")
    seq: int = Field(ge=1, description="1-based position in the log.")
    type: EventType = Field(description="What happened.")
    moves: list[Move] = Field(default_factory=list, description="Channels it moved.")
    version: str | None = Field(default=None, description="Version the event is about.")
    actor: str = Field(description="Who: a person, or skillci[bot] for automatic moves.")
    command: str = Field(description="What: the command that made the move.")
    reason: str = Field(description="Why, one line (ours, never model text).")
    gate_id: str | None = Field(default=None, description="Gate report behind it, if any.")
    analysis_id: str | None = Field(default=None, description="Canary analysis behind it.")
    forced: str | None = Field(
        default=None,
        description="Set when --force overrode a refusal: what was overridden (null: not forced).",
    )
    at: datetime = Field(description="When (UTC).")


# ---------------------------------------------------------------------------- canary


class Sample(StrictModel):
    """One production request, as the canary analysis needs it."""

    run_id: str = Field(description="Run record id.")
    task_id: str = Field(description="Task (request kind) id.")
    passed: bool = Field(description="Whether the request succeeded.")
    tokens: int | None = Field(
        ge=0, description="Input + output tokens; null: unknown (left out of mean_tokens)."
    )
    latency_s: float = Field(ge=0, description="Wall time, seconds.")


class SideStats(StrictModel):
    """Aggregates of one side (stable or canary) over the analysis window."""

    version: str = Field(description="Skill version of this side.")
    samples: int = Field(description="Production records in the window.")
    successes: int = Field(description="Records that succeeded.")
    success_rate: float | None = Field(description="successes / samples; null without samples.")
    ci_low: float | None = Field(description="Wilson 95% lower bound of the success rate.")
    ci_high: float | None = Field(description="Wilson 95% upper bound of the success rate.")
    mean_tokens: float | None = Field(
        description="Mean input+output tokens over the records whose tokens are known; null "
        "when none is (an unknown count is never read as 0)."
    )
    mean_latency_s: float | None = Field(description="Mean wall time per record, seconds.")
    tasks: dict[str, list[int]] = Field(
        default_factory=dict, description="task id -> [records, successes]."
    )


class CanaryCheck(StrictModel):
    """One line of the canary verdict."""

    name: str = Field(description="Stable check name, e.g. success_drop.")
    value: str = Field(description="Measured number, formatted.")
    threshold: str = Field(description="What it must satisfy, formatted.")
    passed: bool | None = Field(description="null: not judged (not enough data).")
    detail: str = Field(default="", description="One line of context.")


class CanaryAnalysis(StrictModel):
    """Canary vs stable over one window, and what (if anything) was done about it."""

    schema_version: int = Field(default=RELEASE_SCHEMA_VERSION, description="Shape version.")
    analysis_id: str = Field(description="canary-<hash> of skill, versions, window and runs.")
    skill: str = Field(description="Skill name.")
    window_start: datetime = Field(description="When the canary started (UTC).")
    window_end: datetime = Field(description="When the analysis read the records (UTC).")
    outcome: Outcome = Field(description="pass, fail or inconclusive (keep waiting).")
    reasons: list[str] = Field(description="Failed checks or missing data, one line each.")
    checks: list[CanaryCheck] = Field(description="Every check, judged or not.")
    stable: SideStats = Field(description="Stable side.")
    canary: SideStats = Field(description="Canary side.")
    policy: CanaryPolicy = Field(description="Thresholds used (from the manifest).")
    action: Literal["none", "promote", "rollback"] = Field(
        default="none", description="What --auto did."
    )
    event_seq: int | None = Field(
        default=None, description="Channel-log event of the action (null: nothing moved)."
    )
    note: str = Field(default="", description="Why no action was taken, when relevant.")
    excluded: dict[str, int] = Field(
        default_factory=dict,
        description="Records of either version not counted, by why: before_window, "
        "after_window (dated after the analysis time: clock skew?), duplicate_request "
        "(same request id recorded again, e.g. a re-run step).",
    )


class Resolution(StrictModel):
    """What a deployment should load for one request."""

    skill: str = Field(description="Skill name.")
    channel: Channel = Field(description="Channel chosen.")
    version: str = Field(description="Skill version.")
    commit: str = Field(description="Commit to load the skill from.")
    tag: str = Field(description="Release tag.")
    path: str = Field(description="Skill package dir inside that commit.")
    bucket: int | None = Field(
        default=None, description="sha256(request id) bucket 0-99, when a request id was given."
    )
    weight: int | None = Field(default=None, description="Canary weight in force, if any.")


SAVED_MODELS: dict[str, type[BaseModel]] = {
    "channel-state": ChannelState,
    "channel-event": ChannelEvent,
    "canary-analysis": CanaryAnalysis,
}
