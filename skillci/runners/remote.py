"""The gate's trials on a remote environment: each round a batch of futures (issue 36).

:class:`RemoteTrials` is a :class:`~skillci.flows.gate.TrialSource` over any
:class:`RemoteEnvironment` (a Harbor, Daytona or Modal adapter plugs in behind it): it submits
the trials a call asks for as futures under a concurrency cap and a trial budget, retries only
trials whose measurement failed (:data:`~skillci.trace.enums.ERROR_STATES`), and, while the gate
decides a round, keeps the next ``lookahead`` rounds in flight; when the sequential test
reaches its verdict, :meth:`RemoteTrials.rounds_done` cancels them
(docs/design/400-remote-rounds.md).
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from skillci.runners.base import AgentSpec, JudgeSpec, TrialSpec, plan
from skillci.skill.render import RenderedSkill
from skillci.tasks.models import Task
from skillci.trace.models import RunRecord


class RemoteEnvironment(Protocol):
    """Where a trial runs: ``submit`` starts one attempt and returns its future at once;
    ``cancel`` stops an attempt in flight (True: it will produce no record)."""

    name: str

    def submit(self, spec: TrialSpec, attempt: int) -> Future[RunRecord]: ...

    def cancel(self, future: Future[RunRecord]) -> bool: ...


@dataclass(frozen=True)
class RemoteLimits:
    """Capacity and cost controls that hold remotely."""

    #: attempts in flight at once on the environment
    concurrency: int = 16
    #: attempts submitted per gate, retries and look-ahead included (None: no limit)
    budget: int | None = None
    #: further attempts of a trial whose measurement failed (never of a judged one)
    retries: int = 1
    #: head rounds submitted ahead of the one the gate decides on
    lookahead: int = 1

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.retries < 0 or self.lookahead < 0:
            raise ValueError("concurrency >= 1, retries >= 0 and lookahead >= 0")
        if self.budget is not None and self.budget < 0:
            raise ValueError("budget >= 0")


@dataclass
class RemoteStats:
    """What a gate's remote trials cost: every count is of attempts."""

    submitted: int = 0
    completed: int = 0
    retried: int = 0
    cancelled: int = 0
    #: look-ahead attempts that completed but were never asked for (the verdict came first)
    unused: int = 0
    #: trials never submitted because the budget was spent
    over_budget: int = 0


_Key = tuple[str, str, str | None, str | None, int]


def _key(spec: TrialSpec) -> _Key:
    """A trial within one gate: who, which task, which skill package, which suite, which round."""
    return (spec.agent.model_dump_json(), spec.task.id, spec.skill_package_hash, spec.suite,
            spec.repeat_index)  # fmt: skip


@dataclass
class _Trial:
    spec: TrialSpec
    wanted: bool  # asked for by the gate (False: look-ahead)
    attempts: int = 0
    future: Future[RunRecord] | None = None
    record: RunRecord | None = None
    done: bool = False


@dataclass
class RemoteTrials:
    """A :class:`~skillci.flows.gate.TrialSource` running trials on ``env``. ``rounds``: the
    gate's head rounds (look-ahead never goes past them)."""

    env: RemoteEnvironment
    state_dir: Path
    limits: RemoteLimits = field(default_factory=RemoteLimits)
    rounds: int = 1
    #: the judge of rubric graders (None: the default judge)
    judge: JudgeSpec | None = None
    ran: int = 0
    cached: int = 0
    model_calls: int = 0
    #: ``task #repeat: cause`` of trials that produced no usable record
    errors: list[str] = field(default_factory=list)
    stats: RemoteStats = field(default_factory=RemoteStats)
    _trials: dict[_Key, _Trial] = field(default_factory=dict)
    _queue: deque[_Trial] = field(default_factory=deque)
    _flying: dict[Future[RunRecord], _Trial] = field(default_factory=dict)

    def run(
        self,
        agent: AgentSpec,
        tasks: list[Task],
        rendered: RenderedSkill | None,
        pkg_hash: str | None,
        *,
        repeats: int,
        first_repeat: int = 0,
        suite: str | None = None,
        fresh: bool = False,
    ) -> list[RunRecord]:
        # ``fresh`` asks to bypass a cache: a remote source has none, every trial runs
        def specs(first: int, n: int) -> list[TrialSpec]:
            return [
                s
                for s in plan(
                    tasks,
                    agent,
                    repeats=first + n,
                    state_dir=self.state_dir,
                    skill=rendered,
                    skill_package_hash=pkg_hash,
                    suite=suite,
                    split=suite,
                    judge=self.judge,
                )
                if s.repeat_index >= first
            ]

        wanted = [self._want(s, wanted=True) for s in specs(first_repeat, repeats)]
        # a head round (one repeat at a time): keep the next rounds in flight meanwhile
        ahead = min(self.limits.lookahead, self.rounds - first_repeat - 1) if repeats == 1 else 0
        if ahead > 0:
            for s in specs(first_repeat + 1, ahead):
                self._want(s, wanted=False)
        self._fill()  # the look-ahead goes out even when the asked-for trials are done
        while not all(t.done for t in wanted):
            self._fill()
            if not self._flying:  # nothing can run: the budget is spent
                for t in wanted:
                    if not t.done:
                        self._give_up(t, "trial budget spent")
                break
            self._collect()
        return [t.record for t in wanted if t.record is not None]

    def rounds_done(self) -> None:
        """The gate reached its verdict: cancel the look-ahead still queued or in flight."""
        for t in self._queue:
            t.done = t.done or not t.wanted
        self._queue = deque(t for t in self._queue if t.wanted)
        for fut, t in list(self._flying.items()):
            if t.wanted:
                continue
            if self.env.cancel(fut):
                self.stats.cancelled += 1
            else:  # finished meanwhile (or past cancelling): its record goes unused
                self.stats.unused += 1
            del self._flying[fut]
            t.done = True
        for t in self._trials.values():
            if not t.wanted and t.record is not None:
                self.stats.unused += 1
                t.record = None

    def close(self) -> None:
        """Cancel whatever is still in flight."""
        self.rounds_done()
        for fut in list(self._flying):
            if self.env.cancel(fut):
                self.stats.cancelled += 1
            del self._flying[fut]

    # ------------------------------------------------------------------ internals

    def _want(self, spec: TrialSpec, *, wanted: bool) -> _Trial:
        key = _key(spec)
        t = self._trials.get(key)
        if t is None:
            t = self._trials[key] = _Trial(spec, wanted)
            self._queue.append(t)
        elif wanted and not t.wanted:  # look-ahead the gate now asks for: first in line
            t.wanted = True
            if t in self._queue:
                self._queue.remove(t)
                self._queue.appendleft(t)
        return t

    def _fill(self) -> None:
        budget = self.limits.budget
        while self._queue and len(self._flying) < self.limits.concurrency:
            if budget is not None and self.stats.submitted >= budget:
                return
            t = self._queue.popleft()
            t.attempts += 1
            self.stats.submitted += 1
            t.future = self.env.submit(t.spec, t.attempts)
            self._flying[t.future] = t

    def _collect(self) -> None:
        done, _ = wait(list(self._flying), return_when=FIRST_COMPLETED)
        for fut in done:
            t = self._flying.pop(fut)
            if fut.cancelled():
                continue
            self.stats.completed += 1
            self.ran += 1
            exc = fut.exception()
            rec = None if exc is not None else fut.result()
            if rec is not None:
                self.model_calls += rec.cost.model_calls
            failed = rec is None or rec.evaluation.state.is_error
            if failed and t.attempts <= self.limits.retries:
                self.stats.retried += 1
                self._queue.appendleft(t)
                continue
            t.record, t.done = rec, True
            if rec is None:
                self.errors.append(f"{t.spec.task.id} #{t.spec.repeat_index}: {exc}")

    def _give_up(self, t: _Trial, why: str) -> None:
        t.done = True
        if t in self._queue:
            self._queue.remove(t)
        self.stats.over_budget += 1
        self.errors.append(f"{t.spec.task.id} #{t.spec.repeat_index}: {why}")


__all__ = ["RemoteEnvironment", "RemoteLimits", "RemoteStats", "RemoteTrials"]
