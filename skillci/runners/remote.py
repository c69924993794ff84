"""The gate's trials on a remote environment: each round a batch of futures (issue 36).

:class:`RemoteTrials` is a :class:`~skillci.flows.gate.TrialSource` over any
:class:`RemoteEnvironment` (a Harbor, Daytona or Modal adapter plugs in behind it): it submits
the trials a call asks for as futures under a concurrency cap and a trial budget, retries only
trials whose measurement failed (:data:`~skillci.trace.enums.ERROR_STATES`), and, while the gate
decides a round, keeps the next ``lookahead`` rounds in flight; when the sequential test
reaches its verdict, :meth:`RemoteTrials.rounds_done` cancels them
(docs/design/400-remote-rounds.md).

Every record the gate receives from it is keyed as the local scheduler keys the trial
(:meth:`~skillci.runners.base.TrialSpec.cache_key`), written as a complete trial dir and
indexed in the trace store, so a second identical gate reuses it and submits nothing; a
``max_dollars`` budget stops submission once the returned records' cost reaches it, an
attempt of unknown cost counting as the dearest known one (docs/design/406).

``progress`` hears of each asked-for trial as the local scheduler reports it: ``running``
when submitted, then its outcome (a cached one too), ``error`` or ``skipped``.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from skillci.providers import health
from skillci.runners.base import AgentSpec, JudgeSpec, TrialSpec, plan, sandbox_kind
from skillci.runners.outcome import TrialRun
from skillci.runners.registry import DEFAULT_MODE
from skillci.runners.scheduler import trial_outcome
from skillci.runners.trialdir import (
    lock_for,
    quarantine,
    read_complete_many,
    trial_dir,
    write_received,
)
from skillci.skill.render import RenderedSkill
from skillci.tasks.models import Task
from skillci.trace.models import EvalState, RunRecord
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore


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
    #: dollars per gate: no attempt is submitted once the cost of the attempts returned
    #: reaches it (an unknown cost counts as the dearest known one; None: no limit)
    max_dollars: float | None = None

    def __post_init__(self) -> None:
        if self.concurrency < 1 or self.retries < 0 or self.lookahead < 0:
            raise ValueError("concurrency >= 1, retries >= 0 and lookahead >= 0")
        if self.budget is not None and self.budget < 0:
            raise ValueError("budget >= 0")
        if self.max_dollars is not None and not self.max_dollars >= 0:
            raise ValueError("max_dollars >= 0")


@dataclass
class RemoteStats:
    """What a gate's remote trials cost: every count is of attempts."""

    submitted: int = 0
    completed: int = 0
    retried: int = 0
    cancelled: int = 0
    #: look-ahead attempts that completed but were never asked for (the verdict came first)
    unused: int = 0
    #: trials never submitted because the trial or dollar budget was spent
    over_budget: int = 0
    #: trials never submitted (or not retried) because a model route of the command is down
    route_down: int = 0
    #: dollars of the returned attempts whose cost is known
    usd: float = 0.0
    #: returned attempts of unknown cost (no ``cost.usd``, or no record at all)
    cost_unknown: int = 0
    #: the dearest returned attempt whose cost is known (what an unknown one counts)
    dearest_usd: float | None = None

    @property
    def spent_usd(self) -> float | None:
        """What the dollar budget counts: the known dollars plus each attempt of unknown cost
        at the dearest known attempt's price; None when only unknown costs came back."""
        if self.cost_unknown and self.dearest_usd is None:
            return None
        return self.usd + self.cost_unknown * (self.dearest_usd or 0.0)


_Key = tuple[str, str, str | None, str | None, int]


def _key(spec: TrialSpec) -> _Key:
    """A trial within one gate: who, which task, which skill package, which suite, which round."""
    return (spec.agent.model_dump_json(), spec.task.id, spec.skill_package_hash, spec.suite,
            spec.repeat_index)  # fmt: skip


@dataclass(eq=False)
class _Trial:
    spec: TrialSpec
    key: str  # the trial cache key (TrialSpec.cache_key, as the local scheduler keys it)
    wanted: bool  # asked for by the gate (False: look-ahead)
    attempts: int = 0
    future: Future[RunRecord] | None = None
    record: RunRecord | None = None
    done: bool = False
    cached: bool = False  # the record came from the trial cache
    kept: bool = False  # the record is in the trial cache and the trace store
    reported: bool = False  # its outcome went to ``progress``


@dataclass
class RemoteTrials:
    """A :class:`~skillci.flows.gate.TrialSource` running trials on ``env``. ``rounds``: the
    gate's head rounds (look-ahead never goes past them). Trial dirs go under ``state_dir``
    and records into ``store`` (default: the trace store at ``state_dir``, as the gate's)."""

    env: RemoteEnvironment
    state_dir: Path
    limits: RemoteLimits = field(default_factory=RemoteLimits)
    rounds: int = 1
    #: the judge of rubric graders (None: the default judge)
    judge: JudgeSpec | None = None
    #: the trial mode the trials are planned and keyed with, as a local gate plans them
    sandbox: str = DEFAULT_MODE
    store: TraceStore | None = None
    #: hears of each asked-for trial's state changes (as the local scheduler's ``progress``)
    progress: Callable[[TrialRun], None] | None = None
    ran: int = 0
    cached: int = 0
    model_calls: int = 0
    #: ``task #repeat: cause`` of trials that produced no usable record
    errors: list[str] = field(default_factory=list)
    stats: RemoteStats = field(default_factory=RemoteStats)
    _trials: dict[_Key, _Trial] = field(default_factory=dict)
    _queue: deque[_Trial] = field(default_factory=deque)
    _flying: dict[Future[RunRecord], _Trial] = field(default_factory=dict)
    _redactor: Redactor = field(default_factory=Redactor)
    #: one thread writes trial dirs and store rows while the gate goes on (flush: joined)
    _writer: ThreadPoolExecutor | None = None
    _writes: list[Future[None]] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.store is None:
            self.store = TraceStore(self.state_dir)

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
                    sandbox=self.sandbox,
                )
                if s.repeat_index >= first
            ]

        new: list[_Trial] = []
        wanted = [self._want(s, True, fresh, new) for s in specs(first_repeat, repeats)]
        self._reuse(new, fresh)
        # a head round (one repeat at a time): keep the next rounds in flight meanwhile —
        # unless the whole round came from the trial cache: nothing to wait for, nothing to
        # fill the wait with (a re-run gate submits nothing: docs/design/406)
        ahead = min(self.limits.lookahead, self.rounds - first_repeat - 1) if repeats == 1 else 0
        if ahead > 0 and not all(t.cached for t in wanted):
            new = []
            for s in specs(first_repeat + 1, ahead):
                self._want(s, False, fresh, new)
            self._reuse(new, fresh)
        self._wait(wanted)
        return [t.record for t in wanted if t.record is not None]

    def run_specs(
        self, specs: list[TrialSpec], *, fresh: bool = False
    ) -> list[tuple[TrialSpec, str, RunRecord | None, bool]]:
        """Trials planned by the caller (``eval run``: its seed, split and sandbox mode), no
        look-ahead: per spec, its cache key, its record (None: never measured, the cause is
        in :attr:`errors`) and whether the record came from the trial cache."""
        new: list[_Trial] = []
        wanted = [self._want(s, True, fresh, new) for s in specs]
        self._reuse(new, fresh)
        self._wait(wanted)
        self.flush()
        return [(t.spec, t.key, t.record, t.cached) for t in wanted]

    def _wait(self, wanted: list[_Trial]) -> None:
        """Submit and collect until every trial in ``wanted`` is done or a budget is spent."""
        self._fill()  # the look-ahead goes out even when the asked-for trials are done
        while not all(t.done for t in wanted):
            self._fill()
            if not self._flying:  # nothing can run: a budget is spent
                why = self._spent() or "trial budget spent"
                for t in wanted:
                    if not t.done:
                        self._give_up(t, why)
                break
            self._collect()
        self._keep([t for t in wanted if t.record is not None and not t.kept])  # look-ahead
        for t in wanted:
            self.cached += t.cached and t.record is not None
            self._report(t)  # cached, or look-ahead done before it was asked for

    def rounds_done(self) -> None:
        """The gate reached its verdict: cancel the look-ahead still queued or in flight, drop
        the look-ahead records never asked for, and finish the writes (:meth:`flush`)."""
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
                # it is paid for all the same: a running one at an unknown cost
                self._charge(fut.result() if fut.done() and fut.exception() is None else None)
            del self._flying[fut]
            t.done = True
        for t in self._trials.values():
            if not t.wanted and t.record is not None:
                # paid for and never asked for: dropped, not kept (docs/design/406)
                self.stats.unused += not t.cached
                t.record = None
        self.flush()

    def flush(self) -> None:
        """Wait until every record the gate received is in the trial cache and the trace
        store; the first write that failed raises here."""
        writes, self._writes = self._writes, []
        for w in writes:
            w.result()

    def close(self) -> None:
        """Cancel whatever is still in flight; finish the writes."""
        self.rounds_done()
        for fut in list(self._flying):
            if self.env.cancel(fut):
                self.stats.cancelled += 1
            del self._flying[fut]
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None

    # ------------------------------------------------------------------ internals

    def _want(self, spec: TrialSpec, wanted: bool, fresh: bool, new: list[_Trial]) -> _Trial:
        """The trial of ``spec``, made (and added to ``new``) when first asked for; with
        ``fresh``, a trial whose record came from the cache is asked for again (one this
        source ran is fresh already); so is look-ahead dropped by :meth:`rounds_done`."""
        key = _key(spec)
        t = self._trials.get(key)
        dropped = t is not None and not t.wanted and t.done and t.record is None
        if t is None or (fresh and t.cached) or (wanted and dropped):
            t = self._trials[key] = _Trial(spec, spec.cache_key(sandbox_kind(spec)), wanted)
            new.append(t)
        elif wanted and not t.wanted:  # look-ahead the gate now asks for: first in line
            t.wanted = True
            if t in self._queue:
                self._queue.remove(t)
                self._queue.appendleft(t)
        return t

    def _reuse(self, new: list[_Trial], fresh: bool) -> None:
        """Take ``new`` trials' records from the trial cache (not with ``fresh``) and queue
        the rest. Neither a failed measurement (design 300) nor an ``environment_unsupported``
        trial is reused: the environment may honour a task this machine could not."""
        found = {} if fresh else read_complete_many(self.state_dir, [t.key for t in new])
        for t in new:
            rec = found.get(t.key)
            state = rec.evaluation.state if rec is not None else EvalState.infra_error
            if not state.is_error and state is not EvalState.environment_unsupported:
                t.record, t.done, t.cached = rec, True, True
                continue
            self._queue.append(t)  # ``new`` lists the asked-for trials first
        hits = [t for t in new if t.cached]
        assert self.store is not None
        stored = self.store.run_ids_by_key([t.key for t in hits]) if hits else {}
        for t in hits:  # a trial dir whose record the store lacks (as the scheduler does)
            assert t.record is not None
            t.kept = True
            if t.record.run_id not in stored.get(t.key, ()):
                self.store.put(t.record)

    def _keep(self, trials: list[_Trial]) -> None:
        """Key and redact the records the gate receives, and have the writer thread leave
        each as the local scheduler does: a complete trial dir under its cache key and a run
        in the trace store. A failed measurement is kept too (``trace ls`` shows it), never
        reused."""
        for t in trials:
            assert t.record is not None
            rel = Path(self.state_dir.name) / "trials" / t.key[:2] / t.key
            meta = {**t.record.metadata, "trial_dir": str(rel), "remote_environment": self.env.name}
            rec = self._redactor.redact_model(
                t.record.model_copy(update={"trial_cache_key": t.key, "metadata": meta})
            )
            t.record, t.kept = rec, True
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="remote-keep")
            self._writes.append(self._writer.submit(self._write, rec, t.key))

    def _write(self, rec: RunRecord, key: str) -> None:
        assert self.store is not None
        with lock_for(self.state_dir, key):
            quarantine(trial_dir(self.state_dir, key), self.state_dir)  # an older copy
            write_received(trial_dir(self.state_dir, key), rec, key)
        self.store.put(rec, redacted=True)  # by _keep

    def _spent(self) -> str | None:
        """Why no further attempt may be submitted (None: it may)."""
        down = _route_down()
        if down is not None:
            return down
        budget, cap = self.limits.budget, self.limits.max_dollars
        if budget is not None and self.stats.submitted >= budget:
            return "trial budget spent"
        if cap is None:
            return None
        spent = self.stats.spent_usd
        if spent is None:  # only unknown costs so far: the spend cannot be bounded
            return f"dollar budget spent (${cap:g} cap; cost unknown)"
        if spent >= cap:
            return f"dollar budget spent (${spent:.4g} of ${cap:g})"
        return None

    def _fill(self) -> None:
        while self._queue and len(self._flying) < self.limits.concurrency:
            if self._spent() is not None:
                return
            t = self._queue.popleft()
            t.attempts += 1
            self.stats.submitted += 1
            t.future = self.env.submit(t.spec, t.attempts)
            self._flying[t.future] = t
            if t.wanted and self.progress is not None:
                self.progress(TrialRun(key=t.key, task_id=t.spec.task.id, state="running",
                                       repeat_index=t.spec.repeat_index, started_at=time.time()))  # fmt: skip

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
            self._charge(rec)
            failed = rec is None or rec.evaluation.state.is_error
            if failed and t.attempts <= self.limits.retries and _route_down() is not None:
                self.stats.route_down += 1
            elif failed and t.attempts <= self.limits.retries:
                self.stats.retried += 1
                self._queue.appendleft(t)
                continue
            t.record, t.done = rec, True
            if t.wanted and rec is not None:  # written while the gate waits for the rest
                self._keep([t])
            if rec is None:
                self.errors.append(f"{t.spec.task.id} #{t.spec.repeat_index}: {exc}")
            if t.wanted:
                self._report(t, str(exc))

    def _charge(self, rec: RunRecord | None) -> None:
        """Count a returned attempt's dollars; no record or no ``cost.usd`` is unknown."""
        usd = rec.cost.usd if rec is not None else None
        if usd is None:
            self.stats.cost_unknown += 1
            return
        self.stats.usd += usd
        self.stats.dearest_usd = max(self.stats.dearest_usd or 0.0, usd)

    def _give_up(self, t: _Trial, why: str) -> None:
        t.done = True
        if t in self._queue:
            self._queue.remove(t)
        if _route_down() is not None:
            self.stats.route_down += 1
        else:
            self.stats.over_budget += 1
        self.errors.append(f"{t.spec.task.id} #{t.spec.repeat_index}: {why}")
        self._report(t, why, state="skipped")

    def _report(self, t: _Trial, why: str | None = None, *, state: str = "error") -> None:
        """Tell ``progress`` a done trial's outcome, once: its record's, else ``state``."""
        if self.progress is None or t.reported or not t.done or not t.wanted:
            return
        t.reported = True
        if t.record is not None:
            self.progress(trial_outcome(t.spec, t.key, t.record, cached=t.cached))
            return
        self.progress(TrialRun(key=t.key, task_id=t.spec.task.id, repeat_index=t.spec.repeat_index,
                               state=state, error=why or "no record came back"))  # fmt: skip


def _route_down() -> str | None:
    """Why every further attempt would fail its measurement: a model route of this command
    failed fatally (no key, refused, unauthorised; :mod:`skillci.providers.health`), so a
    retry or a new attempt only costs a sandbox start (a minute on BenchFlow) to fail again."""
    down = health.down_routes()
    if not down:
        return None
    name, cause = next(iter(down.items()))
    return f"model route {name} is down ({cause})"


__all__ = ["RemoteEnvironment", "RemoteLimits", "RemoteStats", "RemoteTrials"]
