"""What every agent gets and returns. Runners build the context; agents fill the result."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from skillci.agents.workspace import WORKSPACE_MOUNT, Files
from skillci.providers.queueing import queued
from skillci.skill.render import RenderedSkill
from skillci.trace.models import Cost, ErrorEvent, Event

if TYPE_CHECKING:
    from skillci.agents.headless import Launch


@dataclass(frozen=True)
class CommandResult:
    """A shell command's outcome, as the ``run`` tool reports it."""

    exit_code: int
    output: str
    timed_out: bool = False
    duration_sec: float = 0.0


class Shell(Protocol):
    """Runs a shell command in the trial's sandbox with cwd = the workspace."""

    kind: str

    def run(self, command: str, *, timeout: float) -> CommandResult: ...


@dataclass
class AgentContext:
    """Everything an agent may use. Nothing outside this reaches the agent."""

    task_id: str
    instruction: str
    workspace: Path
    shell: Shell
    skill: RenderedSkill | None
    seed: int
    deadline: float
    """``time.monotonic()`` value after which the agent must stop, not counting the time the
    trial queues for a call or sandbox slot after this context is made (:meth:`time_left`)."""
    solution_script: str | None = None
    """Path of solve.sh as the shell sees it (oracle only)."""
    network: bool = False
    """Commands reach the network (the task sets ``allow_internet`` and the runner opened
    it); the system prompt and the ``run`` tool say which."""
    workdir: str = WORKSPACE_MOUNT
    """Where the shell sees the workspace (its cwd): ``/app``, or the task's working
    directory under the Docker runner; the prompt and the file tools use the same path."""
    launch: Callable[[Launch], subprocess.Popen[bytes]] | None = None
    """Starts a real agent's process in the trial's sandbox (headless agents only)."""
    home: Path | None = None
    """A fresh, empty HOME for a real agent (host path; the sandbox shows it there too)."""
    logs: Path | None = None
    """The trial's agent logs dir (host path): a real agent's stream is kept there."""
    agent_cwd: str = WORKSPACE_MOUNT
    """The workspace as a real agent's process sees it (its cwd)."""
    files: Files | None = None
    """The file tools' access to the workspace when it is not :attr:`workspace` on this host
    (a remote container: :class:`~skillci.agents.shellfiles.ShellFiles` over :attr:`shell`)."""
    queued_before: float = field(default_factory=queued)
    """This thread's :func:`~skillci.providers.queueing.queued` total when the context was
    made: what the trial queued for slots since then extends :attr:`deadline`."""

    def time_left(self) -> float:
        """Seconds of the agent's own time left: the deadline, moved on by the time this
        trial's thread has since spent queueing for a model-call or sandbox slot (design
        263). Call it from the trial's thread (the agent's)."""
        return self.deadline + (queued() - self.queued_before) - time.monotonic()


@dataclass
class AgentResult:
    """What the agent did: ordered events, final output, why it stopped, what it cost."""

    events: list[Event] = field(default_factory=list)
    final_output: str | None = None
    stop_reason: str = "final_answer"
    cost: Cost = field(default_factory=Cost)
    system_prompt_hash: str | None = None
    tool_schema_version: str | None = None
    tool_schema_hash: str | None = None
    model_params: dict[str, Any] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    infra_error: str | None = None
    """Set when the agent could not do its part (did not start, crashed, could not reach
    its model): the trial is an infrastructure error, not the skill's failure; the runner
    ends it ``infra_error`` without running the verifier (docs/design/300)."""

    @property
    def skill_loads(self) -> int:
        return sum(1 for e in self.events if e.kind == "skill_load")


class EventLog:
    """Appends events with consecutive ``step`` numbers and time offsets."""

    def __init__(self, events: list[Event], start: float) -> None:
        self.events = events
        self.start = start

    def add(self, cls: Any, **fields: Any) -> Any:
        ev = cls(step=len(self.events), t=round(time.monotonic() - self.start, 4), **fields)
        self.events.append(ev)
        return ev

    def error(self, error_type: str, message: str, *, untrusted: bool = False) -> None:
        self.add(ErrorEvent, error_type=error_type, message=message[:2000], untrusted=untrusted)


class Agent(Protocol):
    """One way of acting on a task. ``run`` must not raise for agent-level failures: it
    records them and sets ``stop_reason`` instead."""

    name: str
    version: str
    role: str

    def run(self, ctx: AgentContext) -> AgentResult: ...


__all__ = ["Agent", "AgentContext", "AgentResult", "CommandResult", "EventLog", "Shell"]
