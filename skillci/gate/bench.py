"""The baselines-and-ablations rows of ``skillci bench`` (pure; docs/design/226-bench.md).

Each *arm* is a way of giving the student a skill (no skill, the original skill, ...). Its
trials on a suite are compared with three references run on the same tasks: the student
without a skill (GCR's baseline), the teacher (GCR's ceiling) and the student with the
original skill (what a regression is measured against). Rows the bench cannot run for
real are kept with ``status: not_implemented`` and the reason — never filled in.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from pydantic import Field

from skillci.basemodels import FrozenModel
from skillci.gate.metrics import TrialOutcome, compute_metrics
from skillci.gate.stats import Interval, clustered_se, z_value

Kind = Literal["baseline", "ablation"]
Status = Literal["real", "not_implemented", "failed"]


class Estimate(FrozenModel):
    """A mean with its task-clustered 95% interval (null interval under 2 tasks)."""

    value: float = Field(description="Mean over tasks of the per-task mean.")
    ci: Interval | None = Field(description="Task-clustered normal interval.")


class BenchRow(FrozenModel):
    """One arm of the bench."""

    arm: str = Field(description="Arm id, e.g. no-skill.")
    kind: Kind = Field(description="baseline or ablation.")
    title: str = Field(description="What the arm is, one line.")
    status: Status = Field(
        description="real: measured now; not_implemented or failed (its generator "
        "produced no skill): see reason."
    )
    reason: str = Field(default="", description="Why the row is not measured.")
    note: str = Field(
        default="",
        description="What the loop did (loop arms): proposals, verdicts; how a generated "
        "baseline's skill came about (support of each step, the optimiser's history).",
    )
    tasks: int = Field(default=0, description="Tasks run.")
    trials: int = Field(default=0, description="Trials run.")
    success: Estimate | None = Field(default=None, description="Pass rate.")
    gcr: Estimate | None = Field(default=None, description="Gap closure rate, when defined.")
    gcr_note: str = Field(default="", description="Why GCR is undefined, when it is.")
    regression: Estimate | None = Field(
        default=None,
        description="Share of tasks passing with the original skill that fail with this arm "
        "(Wilson interval).",
    )
    tokens: Estimate | None = Field(default=None, description="Input+output tokens per trial.")
    usd: Estimate | None = Field(default=None, description="Model cost per trial, USD.")


def per_task_mean(values: dict[str, list[float]]) -> Estimate | None:
    """Mean of per-task means, with the task-clustered interval."""
    if not values:
        return None
    means = [sum(v) / len(v) for _t, v in sorted(values.items())]
    mean = math.fsum(means) / len(means)
    se = clustered_se(means)
    ci = (
        Interval(
            low=mean - z_value(0.95) * se,
            high=mean + z_value(0.95) * se,
            confidence=0.95,
            method="task-clustered normal",
        )
        if se is not None
        else None
    )
    return Estimate(value=mean, ci=ci)


def _as(side: str, outcomes: Sequence[TrialOutcome]) -> list[TrialOutcome]:
    return [o.model_copy(update={"side": side}) for o in outcomes]


def measured_row(
    *,
    arm: str,
    kind: Kind,
    title: str,
    outcomes: Sequence[TrialOutcome],
    no_skill: Sequence[TrialOutcome],
    teacher: Sequence[TrialOutcome],
    original: Sequence[TrialOutcome],
    seed: int = 0,
) -> BenchRow:
    """The row of an arm from its trials and the three references' trials."""
    m = compute_metrics(
        _as("head", outcomes)
        + _as("base", original)
        + _as("baseline", no_skill)
        + _as("teacher", teacher),
        seed=seed,
    )
    pr = m.sides["head"].pass_rate
    band = pr.band
    g = m.gcr_head
    c = m.changes
    regression = (
        Estimate(value=c.regression_rate, ci=c.regression_ci)
        if c.regression_rate is not None
        else None
    )
    tokens: dict[str, list[float]] = {}
    usd: dict[str, list[float]] = {}
    for o in outcomes:
        if o.input_tokens is not None and o.output_tokens is not None:  # unknown is not 0
            tokens.setdefault(o.task_id, []).append(float(o.input_tokens + o.output_tokens))
        usd.setdefault(o.task_id, []).append(o.usd)
    return BenchRow(
        arm=arm,
        kind=kind,
        title=title,
        status="real",
        tasks=pr.tasks,
        trials=pr.trials,
        success=Estimate(value=pr.pass_rate, ci=band),
        gcr=Estimate(value=g.value, ci=g.ci) if g.value is not None else None,
        gcr_note="" if g.value is not None else (g.reason or g.label),
        regression=regression,
        tokens=per_task_mean(tokens),
        usd=per_task_mean(usd),
    )


__all__ = ["BenchRow", "Estimate", "measured_row", "per_task_mean"]
