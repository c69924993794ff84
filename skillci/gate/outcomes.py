"""RunRecord -> TrialOutcome, and the comparability check between base and head runs (pure)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable

from pydantic import BaseModel, Field

from skillci.gate.metrics import Side, TrialOutcome
from skillci.trace.enums import ERROR_STATES as TRACE_ERROR_STATES
from skillci.trace.invocation import invocation
from skillci.trace.models import EvalState, MessageEvent, RunRecord, SkillLoadEvent, ToolCallEvent

#: States in which no verdict on the skill was measured: the model, sandbox, harness or
#: verifier failed (docs/design/290, 300). They are never an outcome: not in a pass rate,
#: not in a pair; the gate says how many there were and is inconclusive while any remain.
#: (:data:`skillci.trace.enums.ERROR_STATES`, also :attr:`EvalState.is_error`.)
ERROR_STATES = TRACE_ERROR_STATES

#: The hint every environment_unsupported warning ends with.
UNSUPPORTED_HINT = "run them with --sandbox docker"
#: The remedy a comparability break names when running one side again repairs it.
RERUN_BASE_HINT = "re-run the stale side: --rerun base (or --rerun all)"
#: What differs that no re-run repairs: the task itself.
_NOT_RERUNNABLE = frozenset({"task content", "model route"})


def loaded_files(record: RunRecord) -> frozenset[str]:
    """Skill files the trial loaded (SKILL.md always: it is the bootstrap)."""
    loaded = {e.path for e in record.events if isinstance(e, SkillLoadEvent)}
    if record.runtime.skill is not None:
        loaded.add("SKILL.md")
    return frozenset(loaded)


def fingerprint(record: RunRecord) -> str | None:
    """Hash of what the agent did: its assistant messages and tool calls (names and
    arguments; not call ids, times or tool output). None for a record without events."""
    acts: list[object] = []
    for e in record.events:
        if isinstance(e, MessageEvent) and e.role == "assistant":
            acts.append(["m", e.content])
        elif isinstance(e, ToolCallEvent):
            acts.append(["t", e.tool, e.arguments])
    if not record.events:
        return None
    blob = json.dumps(acts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:24]


def to_outcome(record: RunRecord, side: Side, repeat: int | None = None) -> TrialOutcome:
    """One trial as the metrics see it; a pass after writing verifier/test files
    (:attr:`RunRecord.forged_pass`) counts as a fail with reward 0.

    A scored reward (0..1: test.sh's, or a graded task's weighted assertions and rubrics)
    is kept as ``reward`` for the mean-reward metrics, and ``passed`` is the trial's own
    pass as graded — ``reward >= `` the task's declared pass mark (``[reward] threshold``,
    else 1.0; test.sh's ``threshold``) — never recomputed here: the paired test counts
    discordant pairs on ``passed`` only (docs/design/365)."""
    ev, cost = record.evaluation, record.cost
    reward = ev.reward if ev.reward is not None else (1.0 if ev.passed else 0.0)
    forged = record.forged_pass
    return TrialOutcome(
        task_id=record.task_id,
        side=side,
        repeat=record.repeat_index if repeat is None else repeat,
        reward=0.0 if forged else min(1.0, max(0.0, reward)),
        passed=ev.passed and not forged,
        input_tokens=cost.input_tokens,
        output_tokens=cost.output_tokens,
        model_calls=cost.model_calls,
        tool_calls=cost.tool_calls,
        latency_s=cost.wall_time_sec,
        usd=cost.usd or 0.0,
        loaded_skill_files=loaded_files(record),
        invoked=inv.loaded if (inv := invocation(record)) is not None else None,
        fingerprint=fingerprint(record),
    )


def comparable(records: Iterable[RunRecord]) -> list[RunRecord]:
    """The records a metric may count: not those the runner could not run at all
    (``environment_unsupported``: the task's environment, not the skill, decided them), nor
    those whose measurement failed (:data:`ERROR_STATES`)."""
    return [
        r
        for r in records
        if r.evaluation.state is not EvalState.environment_unsupported
        and r.evaluation.state not in ERROR_STATES
    ]


def errored(records: Iterable[RunRecord]) -> list[RunRecord]:
    """The records whose measurement failed (:data:`ERROR_STATES`)."""
    return [r for r in records if r.evaluation.state in ERROR_STATES]


def reward_hack_warnings(records: Iterable[RunRecord]) -> list[str]:
    """One line per task whose trials touched verifier/test files: passes after a write are
    counted as failed (said here), trials that only read them are flagged for review."""
    forged: dict[str, int] = {}
    read: dict[str, int] = {}
    first: dict[str, str] = {}
    for r in records:
        if not r.reward_hack_evidence:
            continue
        first.setdefault(r.task_id, r.reward_hack_evidence[0])
        if r.forged_pass:
            forged[r.task_id] = forged.get(r.task_id, 0) + 1
        elif not r.verifier_writes:
            read[r.task_id] = read.get(r.task_id, 0) + 1
    out = []
    for task_id in sorted(set(forged) | set(read)):
        parts = []
        if task_id in forged:
            parts.append(
                f"{forged[task_id]} pass(es) after writing verifier/test files counted as failed"
            )
        if task_id in read:
            parts.append(f"{read[task_id]} trial(s) read verifier/test files (review them)")
        out.append(f"{task_id}: reward-hack evidence: {'; '.join(parts)} (e.g. {first[task_id]})")
    return out


def error_warnings(records: Iterable[RunRecord]) -> list[str]:
    """One line per task with failed measurements (left out of the metrics), with the
    first cause."""
    by_task: dict[str, list[RunRecord]] = {}
    for r in errored(records):
        by_task.setdefault(r.task_id, []).append(r)
    out = []
    for task_id, recs in sorted(by_task.items()):
        ev = recs[0].evaluation
        lines = ev.verifier_output.strip().splitlines()
        why = lines[0][:200] if ev.state is EvalState.infra_error and lines else ev.state.value
        out.append(
            f"{task_id}: {len(recs)} trial(s) measured nothing, excluded from the metrics ({why})"
        )
    return out


def unsupported_warnings(records: Iterable[RunRecord]) -> list[str]:
    """One line per task whose trials were ``environment_unsupported`` (left out of the
    metrics), with the runner's reason and the hint."""
    by_task: dict[str, list[RunRecord]] = {}
    for r in records:
        if r.evaluation.state is EvalState.environment_unsupported:
            by_task.setdefault(r.task_id, []).append(r)
    out = []
    for task_id, recs in sorted(by_task.items()):
        why = recs[0].evaluation.verifier_output.split(" — ")[0]
        out.append(
            f"{task_id}: {len(recs)} trial(s) excluded from the metrics, {why}; {UNSUPPORTED_HINT}"
        )
    return out


class Comparability(BaseModel):
    """Whether base and head runs measured the same thing (only the skill may differ)."""

    comparable: bool = Field(description="False when anything but the skill differs.")
    issues: list[str] = Field(default_factory=list, description="One line per difference found.")


def _identity(r: RunRecord) -> dict[str, object]:
    rt = r.runtime
    return {
        "task content": rt.task_hash,
        "model route": r.model.route,
        "model revision": r.model.revision,
        "quantization": r.model.quantization,
        "harness": (rt.harness, rt.harness_version),
        "evaluator": rt.evaluator_version,
        "tool schema": rt.tool_schema_hash,
        # not in the trial cache key (design 233): a side reused from a machine with
        # another sandbox is flagged here instead of being re-run
        "sandbox": rt.sandbox,
    }


def comparability(base: Iterable[RunRecord], head: Iterable[RunRecord]) -> Comparability:
    """Compare, per task, everything that determines a trial except the skill (over the
    :func:`comparable` records: a trial that did not run has no sandbox to compare)."""
    by_task: dict[str, dict[str, object]] = {}
    for r in comparable(base):
        by_task.setdefault(r.task_id, _identity(r))
    issues: list[str] = []
    for r in comparable(head):
        b = by_task.get(r.task_id)
        if b is None:
            continue
        h = _identity(r)
        for k, v in h.items():
            if b[k] != v:
                remedy = "" if k in _NOT_RERUNNABLE else f"; {RERUN_BASE_HINT}"
                issues.append(
                    f"{r.task_id}: {k} differs (base {b[k]!s:.40}, head {v!s:.40}){remedy}"
                )
    issues = sorted(set(issues))
    return Comparability(comparable=not issues, issues=issues)
