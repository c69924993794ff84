"""RunRecord -> TrialOutcome, and the comparability check between base and head runs (pure)."""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import BaseModel, Field

from skillci.gate.metrics import Side, TrialOutcome
from skillci.trace.models import RunRecord, SkillLoadEvent


def loaded_files(record: RunRecord) -> frozenset[str]:
    """Skill files the trial loaded (SKILL.md always: it is the bootstrap)."""
    loaded = {e.path for e in record.events if isinstance(e, SkillLoadEvent)}
    if record.runtime.skill is not None:
        loaded.add("SKILL.md")
    return frozenset(loaded)


def to_outcome(record: RunRecord, side: Side, repeat: int | None = None) -> TrialOutcome:
    ev, cost = record.evaluation, record.cost
    reward = ev.reward if ev.reward is not None else (1.0 if ev.passed else 0.0)
    return TrialOutcome(
        task_id=record.task_id,
        side=side,
        repeat=record.repeat_index if repeat is None else repeat,
        reward=min(1.0, max(0.0, reward)),
        passed=ev.passed,
        input_tokens=cost.input_tokens,
        output_tokens=cost.output_tokens,
        model_calls=cost.model_calls,
        tool_calls=cost.tool_calls,
        latency_s=cost.wall_time_sec,
        usd=cost.usd or 0.0,
        loaded_skill_files=loaded_files(record),
    )


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
    }


def comparability(base: Iterable[RunRecord], head: Iterable[RunRecord]) -> Comparability:
    """Compare, per task, everything that determines a trial except the skill."""
    by_task: dict[str, dict[str, object]] = {}
    for r in base:
        by_task.setdefault(r.task_id, _identity(r))
    issues: list[str] = []
    for r in head:
        b = by_task.get(r.task_id)
        if b is None:
            continue
        h = _identity(r)
        for k, v in h.items():
            if b[k] != v:
                issues.append(f"{r.task_id}: {k} differs (base {b[k]!s:.40}, head {v!s:.40})")
    issues = sorted(set(issues))
    return Comparability(comparable=not issues, issues=issues)
