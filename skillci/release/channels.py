"""Channels as git refs, and their append-only log (docs/design/081-channels-as-refs.md).

Refs (push/fetch them with ``refs/skillci/*``, see docs/release.md):

- ``refs/skillci/channels/<skill>/stable`` and ``.../canary`` point at the commit of the
  release tag the channel serves. No ref means an empty channel.
- ``refs/skillci/channel-log/<skill>`` is a chain of commits, one per event (init,
  released, canary_start, promote, rollback). Each commit's tree holds ``event.json``
  (who/what/why, from -> to, gate or analysis id, time) and ``state.json`` (every channel,
  the canary weight, the releases after the event).

An event and the channel refs it moves are written in one ``git update-ref --stdin``
transaction whose old values are the log tip and the refs *as the log says they are*: two
skillci processes racing on a channel cannot both move it (the loser re-reads the new state
and re-decides, usually to do nothing), and a channel ref moved by hand makes every move
fail loudly instead of being silently overwritten.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from skillci.errors import ConflictError, InternalError
from skillci.release.models import (
    CHANNELS,
    Channel,
    ChannelEvent,
    ChannelState,
)
from skillci.vcs.git import Git

CHANNEL_PREFIX = "refs/skillci/channels/"
LOG_PREFIX = "refs/skillci/channel-log/"
CAS_RETRIES = 8


def channel_ref(skill: str, channel: Channel) -> str:
    return f"{CHANNEL_PREFIX}{skill}/{channel}"


def log_ref(skill: str) -> str:
    return f"{LOG_PREFIX}{skill}"


@dataclass(frozen=True)
class Draft:
    """What a builder wants appended: the event (seq and time are filled in) and new state."""

    event: ChannelEvent
    state: ChannelState


Builder = Callable[[ChannelState], Draft | None]
"""Decides from the current state; returns None when there is nothing to do."""


class ChannelStore:
    """Reads and appends the channel log of skills in one repository."""

    def __init__(self, git: Git) -> None:
        self.git = git

    # ------------------------------------------------------------------ reads

    def _state_at(self, tip: str) -> ChannelState:
        raw = self.git.show_file(tip, "state.json")
        if raw is None:
            raise InternalError(
                f"channel-log commit {tip} has no state.json",
                hint="the refs/skillci/channel-log namespace is damaged",
            )
        return ChannelState.model_validate_json(raw)

    def state(self, skill: str) -> ChannelState | None:
        """The current state, or None when the skill has no channel log yet."""
        tip = self.git.ref_target(log_ref(skill))
        return None if tip is None else self._state_at(tip)

    def skills(self) -> list[str]:
        return sorted(ref[len(LOG_PREFIX) :] for ref in self.git.refs(LOG_PREFIX.rstrip("/")))

    def log(self, skill: str) -> list[ChannelEvent]:
        """Every event of ``skill``, oldest first."""
        tip = self.git.ref_target(log_ref(skill))
        if tip is None:
            return []
        shas = self.git.read("rev-list", "--reverse", tip).split()
        out = []
        for s in shas:
            raw = self.git.show_file(s, "event.json")
            if raw is None:
                raise InternalError(f"channel-log commit {s} has no event.json")
            out.append(ChannelEvent.model_validate_json(raw))
        return out

    # ------------------------------------------------------------------ writes

    def _commit(self, draft: Draft, parent: str | None) -> str:
        tree = self.git.tree_with(
            None,
            {
                "event.json": (draft.event.model_dump_json(indent=2) + "\n").encode(),
                "state.json": (draft.state.model_dump_json(indent=2) + "\n").encode(),
            },
        )
        ev = draft.event
        msg = f"channel {draft.state.skill}: {ev.type}"
        if ev.version:
            msg += f" {ev.version}"
        msg += f" — {ev.reason}\n"
        return self.git.commit_tree(tree, [parent] if parent else [], msg, bot=True)

    def _tampered(self, skill: str, tip: str | None) -> ConflictError:
        state = self._state_at(tip) if tip else None
        said = ", ".join(
            f"{c}={p.commit[:12] if p else 'absent'}"
            for c in CHANNELS
            for p in [state.pointer(c) if state else None]
        )
        return ConflictError(
            f"a channel ref of {skill} was moved outside skillci (the channel log says {said})",
            hint="move the refs back with `git update-ref`, or delete them if the log is absent",
        )

    def append(self, skill: str, default: ChannelState, build: Builder) -> Draft | None:
        """Append the event ``build`` decides on, moving the channel refs with it atomically.

        ``default`` is the state of a skill without a log. Returns what was appended, or
        None when ``build`` had nothing to do (after re-reading on every lost race).
        """
        ref = log_ref(skill)
        last_tip: str | None = "unread"
        for _ in range(CAS_RETRIES):
            tip = self.git.ref_target(ref)
            if tip == last_tip:  # our transaction failed, yet the log did not move
                raise self._tampered(skill, tip)
            last_tip = tip
            state = default if tip is None else self._state_at(tip)
            draft = build(state.model_copy(deep=True))
            if draft is None:
                return None
            event = draft.event.model_copy(update={"seq": state.seq + 1})
            new_state = draft.state.model_copy(update={"seq": state.seq + 1})
            draft = Draft(event, new_state)
            commit = self._commit(draft, tip)
            updates: list[tuple[str, str | None, str | None]] = [(ref, commit, tip)]
            for c in CHANNELS:
                old, new = state.pointer(c), new_state.pointer(c)
                updates.append(
                    (
                        channel_ref(skill, c),
                        new.commit if new else None,
                        old.commit if old else None,
                    )
                )
            try:
                self.git.update_refs(updates, reason=f"skillci channel {skill}: {event.type}")
            except ConflictError:
                time.sleep(0.05)
                continue
            return draft
        raise ConflictError(
            f"the channel log of {skill} changed concurrently {CAS_RETRIES} times; gave up"
        )
