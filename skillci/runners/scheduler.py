"""Run many trials: the trial cache, parallelism, per-command budgets, the trace store.

For each :class:`~skillci.runners.base.TrialSpec` the scheduler computes its cache key and
looks at its trial dir: a *complete* dir (see :mod:`skillci.runners.trialdir`) is reused
and never re-run; anything else is quarantined and the trial runs. Trials run in this
process (``parallel=1``) or in the command's warm trial pool
(:func:`skillci.runners.pool.trial_pool`: daemon threads made once per command and reused by
every ``run``). ``parallel`` N bounds each route's model calls in flight (with the route's
own ``max_concurrency``); sandboxed commands are bounded by the machine's cores. Trials
whose agent calls a model are admitted up to :data:`MODEL_BOUND_ADMIT` x N at once, so
that while some run their tools or verifier others keep the N call slots busy (design 263);
other trials at most N at a time. Waiting for a slot does not count against a trial's agent
timeout. Each trial holds a file lock while it runs, so a second scheduler (or a survivor
of a killed one) never runs it twice.

Completed records go into the trace store (idempotent: a record already there is not added
again). A per-command :class:`~skillci.providers.budget.Budget` is charged with each finished
trial's cost; once it is spent no new trial starts and the rest are ``skipped`` with the
reason — a clean stop, not a crash.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from pathlib import Path
from typing import Literal

from skillci.providers.budget import Budget, BudgetMeter
from skillci.providers.queueing import call_limit
from skillci.runners.base import (
    AgentSpec,
    Runner,
    TrialSpec,
    resolved_sandbox,
    sandbox_kind,
    sandbox_note,
)
from skillci.runners.outcome import EvalResult, TrialRun, summarize
from skillci.runners.pool import trial_pool
from skillci.runners.registry import runner_for_mode
from skillci.runners.trialdir import (
    lock_for,
    quarantine,
    read_complete,
    read_complete_many,
    trial_dir,
)
from skillci.trace.models import EvalState, RunRecord
from skillci.trace.store import TraceStore

Progress = Callable[[TrialRun], None]
#: ``--rerun``: which complete trials run again instead of being reused. ``errors``: only
#: failed measurements (always the case: they are never reused); ``all``: every trial.
RerunMode = Literal["errors", "all"]

#: Model-bound trials in flight per call slot (``--parallel``): with 2, one trial can run
#: its tools, verifier and record while another holds the call slot (design 263).
MODEL_BOUND_ADMIT = 2


def trial_outcome(spec: TrialSpec, key: str, record: RunRecord, *, cached: bool) -> TrialRun:
    """The report of a trial whose record is ``record`` (run now, or reused: ``cached``)."""
    ev, cost = record.evaluation, record.cost
    note = sandbox_note(spec, record) if cached else None
    return TrialRun(
        error=error_cause(record),
        key=key,
        task_id=spec.task.id,
        repeat_index=spec.repeat_index,
        cached=cached,
        state=ev.state.value,
        passed=ev.passed,
        reward=ev.reward,
        run_id=record.run_id,
        stop_reason=record.stop_reason,
        wall_time_sec=cost.wall_time_sec,
        trial_dir=str(trial_dir(spec.state_dir, key)),
        usd=cost.usd,
        input_tokens=cost.input_tokens,
        output_tokens=cost.output_tokens,
        model_calls=cost.model_calls,
        warnings=[*record.warnings, note] if note else record.warnings,
    )


def error_cause(record: RunRecord) -> str | None:
    """One line saying why ``record``'s measurement failed (None: it did not)."""
    ev = record.evaluation
    if not ev.state.is_error:
        return None
    if ev.state is EvalState.verifier_error:
        why = ev.details.get("reward_error") or "no readable reward"
        return f"verifier error: {why}"[:500]
    lines = ev.verifier_output.strip().splitlines()
    return lines[0][:500] if lines else ev.state.value


def runner_for(spec: TrialSpec) -> Runner:
    """A fresh runner of ``spec``'s trial mode (:func:`skillci.runners.registry.runner_for_mode`:
    the local runner for its sandboxes, else the trial runner of that name)."""
    return runner_for_mode(spec.sandbox)


#: (runner, sandbox asked for and given, image, task id, task content) -> whether the runner
#: honours the task: the machine does not change within a command, and an unchanged
#: re-gate asks once per trial.
_SUPPORTED: dict[tuple[str, str, str, str | None, str, str], bool] = {}


def supported(spec: TrialSpec) -> bool:
    """Whether this machine's runner can honour ``spec``'s task (memoised per process)."""
    runner = runner_for(spec)
    memo = (
        type(runner).__name__,
        spec.sandbox,
        resolved_sandbox(spec),
        spec.image,
        spec.task.id,
        spec.task.content_hash,
    )
    hit = _SUPPORTED.get(memo)
    if hit is None:
        hit = _SUPPORTED[memo] = runner.check(spec).supported
    return hit


def still_holds(spec: TrialSpec, record: RunRecord) -> bool:
    """A complete trial is reused only while it still holds: an ``environment_unsupported``
    trial only while the runner still cannot honour the task, and any other trial only
    while it can (docs/design/185). A failed measurement (:attr:`EvalState.is_error`: the
    model route, sandbox or verifier failed) never holds: it is not an outcome, the next
    run retries it (docs/design/300)."""
    if record.evaluation.state.is_error:
        return False
    unsupported = record.evaluation.state is EvalState.environment_unsupported
    return unsupported != supported(spec)


def reusable(spec: TrialSpec, key: str) -> RunRecord | None:
    """The record of a complete trial dir for ``key`` that still holds (:func:`still_holds`)."""
    done = read_complete(trial_dir(spec.state_dir, key), key)
    if done is None or not still_holds(spec, done[1]):
        return None
    return done[1]


def execute(spec: TrialSpec, key: str, *, fresh: bool = False) -> TrialRun:
    """Run one trial unless a complete copy exists (checked again under the lock; never
    with ``fresh``: ``--rerun all``)."""
    runner = runner_for(spec)
    path = trial_dir(spec.state_dir, key)
    start = time.monotonic()
    with lock_for(spec.state_dir, key):
        done = None if fresh else reusable(spec, key)
        if done is not None:
            return trial_outcome(spec, key, done, cached=True)
        quarantine(path, spec.state_dir)
        try:
            record = runner.run_trial(spec, path, key)
        except Exception as exc:
            return TrialRun(
                key=key,
                task_id=spec.task.id,
                repeat_index=spec.repeat_index,
                state="error",
                error=f"{type(exc).__name__}: {exc}",
                trial_dir=str(path),
                wall_time_sec=round(time.monotonic() - start, 3),
            )
    return trial_outcome(spec, key, record, cached=False)


def execute_bounded(spec: TrialSpec, key: str, calls: int, fresh: bool = False) -> TrialRun:
    """:func:`execute` with at most ``calls`` model calls in flight per route
    (:data:`skillci.providers.queueing.call_limit`) while it runs."""
    token = call_limit.set(calls)
    try:
        return execute(spec, key, fresh=fresh)
    finally:
        call_limit.reset(token)


def model_bound(spec: TrialSpec) -> bool:
    """Whether ``spec``'s agent mostly waits on model calls (the built-in agent)."""
    return spec.agent.kind == "builtin"


def needs_litellm(agents: Iterable[AgentSpec]) -> bool:
    """Whether any of ``agents`` calls a model through litellm (an OpenAI-compatible server
    is called directly: :mod:`skillci.providers.openai_compat`)."""
    from skillci.providers.openai_compat import goes_direct

    return any(a.route is not None and not goes_direct(a.route) for a in agents)


def warm(*, litellm: bool) -> None:
    """Import once, in this thread, what every trial thread would otherwise import at once:
    the redaction detectors and (when a trial calls a model through it) litellm."""
    from skillci.trace.secretscan import warm as warm_redaction

    warm_redaction()
    if litellm:
        from skillci.providers.client import warm_litellm

        warm_litellm()


class Scheduler:
    """Plans, caches and runs trials; reports each state change to ``progress``."""

    def __init__(
        self,
        *,
        parallel: int = 1,
        budget: Budget | None = None,
        store: TraceStore | None = None,
        progress: Progress | None = None,
        rerun: RerunMode = "errors",
    ) -> None:
        self.parallel = max(1, parallel)
        #: ``errors`` (the default: only failed measurements run again) or ``all`` (no
        #: complete trial is reused; each runs again and replaces its cached copy)
        self.rerun: RerunMode = rerun
        self.meter = BudgetMeter(budget, name="command")
        self.store = store
        self.progress = progress or (lambda _o: None)
        #: run id -> record of every reused trial (the record the trial dir holds, as the
        #: trace store has it): callers need not read it from the store again
        self.records: dict[str, RunRecord] = {}

    def run(self, specs: list[TrialSpec]) -> EvalResult:
        outcomes: dict[str, TrialRun] = {}
        pending: list[tuple[TrialSpec, str]] = []
        keyed: list[tuple[TrialSpec, str]] = []
        for spec in specs:
            key = spec.cache_key(sandbox_kind(spec))
            if key not in outcomes:
                outcomes[key] = self._queued(spec, key)  # keeps plan order
                keyed.append((spec, key))
        found = self._complete(keyed)
        stored = self.store.run_ids_by_key(list(found)) if self.store is not None else {}
        for spec, key in keyed:
            done = found.get(key) if self.rerun != "all" else None
            if done is not None and still_holds(spec, done):
                outcomes[key] = trial_outcome(spec, key, done, cached=True)
                self.records[done.run_id] = done
                if self.store is not None and done.run_id not in stored.get(key, ()):
                    self.store.put(done)
                self.progress(outcomes[key])
            else:
                pending.append((spec, key))
                self.progress(self._queued(spec, key))
        stop = self._run_pending(pending, outcomes)
        return summarize(list(outcomes.values()), budget_stop=stop)

    @staticmethod
    def _complete(keyed: list[tuple[TrialSpec, str]]) -> dict[str, RunRecord]:
        """Records of the complete trial dirs among ``keyed``, per state dir at once."""
        by_dir: dict[Path, list[str]] = {}
        for spec, key in keyed:
            by_dir.setdefault(spec.state_dir, []).append(key)
        found: dict[str, RunRecord] = {}
        for state_dir, keys in by_dir.items():
            found.update(read_complete_many(state_dir, keys))
        return found

    @staticmethod
    def _queued(spec: TrialSpec, key: str) -> TrialRun:
        return TrialRun(
            key=key, task_id=spec.task.id, repeat_index=spec.repeat_index, state="queued"
        )

    def _finish(self, spec: TrialSpec, out: TrialRun, outcomes: dict[str, TrialRun]) -> None:
        outcomes[out.key] = out
        if out.state != "error":
            self.meter.charge(
                input_tokens=out.input_tokens or 0,  # the budget meters what is known
                output_tokens=out.output_tokens or 0,
                usd=out.usd or 0.0,
                calls=out.model_calls,
            )
            if self.store is not None and out.trial_dir is not None:
                done = read_complete(Path(out.trial_dir), out.key)
                if done is not None:
                    self._store(done[1])
        self.progress(out)

    def _skip_rest(
        self, rest: list[tuple[TrialSpec, str]], reason: str, outcomes: dict[str, TrialRun]
    ) -> None:
        for spec, key in rest:
            outcomes[key] = TrialRun(
                key=key,
                task_id=spec.task.id,
                repeat_index=spec.repeat_index,
                state="skipped",
                error=reason,
            )
            self.progress(outcomes[key])

    def _running(self, spec: TrialSpec, key: str) -> None:
        self.progress(
            TrialRun(
                key=key,
                task_id=spec.task.id,
                repeat_index=spec.repeat_index,
                state="running",
                started_at=time.time(),
            )
        )

    def _run_pending(
        self, pending: list[tuple[TrialSpec, str]], outcomes: dict[str, TrialRun]
    ) -> str | None:
        if not pending:
            return None
        if self.parallel == 1 or len(pending) == 1:
            for i, (spec, key) in enumerate(pending):
                if (reason := self.meter.exceeded()) is not None:
                    self._skip_rest(pending[i:], reason, outcomes)
                    return reason
                self._running(spec, key)
                fresh = self.rerun == "all"
                self._finish(spec, execute_bounded(spec, key, self.parallel, fresh), outcomes)
            return None
        uses_models = any(model_bound(s) for s, _ in pending)
        warm(litellm=needs_litellm(s.agent for s, _ in pending))
        queue = list(pending)
        stop: str | None = None
        running: dict[Future[object], TrialSpec] = {}
        admit = self.parallel * (MODEL_BOUND_ADMIT if uses_models else 1)
        pool = trial_pool(admit)
        while queue or running:
            while queue and len(running) < self._admit(queue[0][0], running, admit):
                if (reason := self.meter.exceeded()) is not None:
                    self._skip_rest(queue, reason, outcomes)
                    queue, stop = [], reason
                    break
                spec, key = queue.pop(0)
                self._running(spec, key)
                running[
                    pool.submit(execute_bounded, spec, key, self.parallel, self.rerun == "all")
                ] = spec
            if not running:
                break
            done, _ = wait(running, return_when=FIRST_COMPLETED)
            for fut in done:
                spec = running.pop(fut)
                try:
                    out = fut.result()
                    assert isinstance(out, TrialRun)
                except Exception as exc:  # the trial's thread failed: it stays incomplete
                    key = spec.cache_key(sandbox_kind(spec))
                    out = TrialRun(
                        key=key,
                        task_id=spec.task.id,
                        repeat_index=spec.repeat_index,
                        state="error",
                        error=f"worker failed: {type(exc).__name__}: {exc}",
                    )
                self._finish(spec, out, outcomes)
        return stop

    def _admit(self, spec: TrialSpec, running: dict[Future[object], TrialSpec], most: int) -> int:
        """How many trials may be in flight when ``spec`` is next: ``most`` while it and
        every running trial are model-bound, else ``parallel``."""
        if model_bound(spec) and all(model_bound(s) for s in running.values()):
            return most
        return self.parallel

    def _store(self, record: RunRecord) -> None:
        if self.store is None:
            return
        known = self.store.query(trial_cache_key=record.trial_cache_key)
        if all(r.run_id != record.run_id for r in known):  # a re-run under the same key
            self.store.put(record)


__all__ = [
    "MODEL_BOUND_ADMIT",
    "RerunMode",
    "Scheduler",
    "error_cause",
    "execute",
    "execute_bounded",
    "model_bound",
    "needs_litellm",
    "reusable",
    "runner_for",
    "sandbox_kind",
    "still_holds",
    "supported",
    "trial_outcome",
    "warm",
]
