"""Gate metrics from plain trial outcomes (pure).

Input: :class:`TrialOutcome`, one per trial: which task, which side (``base`` = student
with the current skill, ``head`` = student with the candidate skill, ``baseline`` =
student without any skill, ``teacher`` = the strong model), which repeat, and what it
scored and cost. Mapping a RunRecord to a TrialOutcome is the caller's job.

Output: :class:`GateMetrics`: per side pass rate (mean over tasks, mean reward, pass@k,
pass^k) with a Wilson interval and cost; the Gap Closure Rate of head (and base) with a
bootstrap CI; per-task before/after (repair / regression / unchanged-pass /
unchanged-fail) with repair and regression rates; the task-level paired comparison.

Aggregation over k repeats (docs/design/040-paired-statistics.md): every task weighs the
same, whatever its number of repeats. A task's score on a side is its pass fraction
``c/n``; it *passes* on that side when it passes in a strict majority of its repeats
(``2c > n``; a tie counts as failing, on both sides alike).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import Field

from skillci.basemodels import FrozenModel
from skillci.errors import InvalidInputError
from skillci.gate.stats import (
    DEFAULT_BOOTSTRAP,
    GapClosure,
    Interval,
    PairedComparison,
    clustered_se,
    gap_closure,
    paired_comparison,
    wilson_interval,
    z_value,
)

METRICS_SCHEMA_VERSION = 1

Side = Literal["base", "head", "teacher", "baseline"]
SIDES: tuple[Side, ...] = ("base", "head", "teacher", "baseline")
TaskChangeKind = Literal["repair", "regression", "unchanged_pass", "unchanged_fail"]


class TrialOutcome(FrozenModel):
    """One trial of one task on one side: the minimal input of the gate's metrics."""

    task_id: str = Field(min_length=1, description="Task id, e.g. the task dir name.")
    side: Side = Field(
        description="base: student + current skill; head: student + candidate skill; "
        "baseline: student without skill; teacher: the strong model."
    )
    repeat: int = Field(ge=0, description="Repeat index of this trial within (task, side).")
    reward: float = Field(
        ge=0.0, le=1.0, description="Reward in [0, 1]: the verifier's, or the task graders'."
    )
    passed: bool = Field(
        description="Whether the trial passed as graded: its reward reached the task's "
        "declared pass mark (graders' [reward] threshold, else 1.0). The paired test pairs "
        "on this, never on the reward (docs/design/365)."
    )
    input_tokens: int | None = Field(
        default=0, ge=0, description="Model input tokens; null: unknown (an imported trial)."
    )
    output_tokens: int | None = Field(
        default=0, ge=0, description="Model output tokens; null: unknown."
    )
    model_calls: int = Field(default=0, ge=0, description="Model calls made.")
    tool_calls: int = Field(default=0, ge=0, description="Tool calls made.")
    latency_s: float = Field(default=0.0, ge=0.0, description="Wall time of the trial, seconds.")
    usd: float = Field(default=0.0, ge=0.0, description="Model cost of the trial, USD.")
    loaded_skill_files: frozenset[str] = Field(
        default=frozenset(),
        description="Rendered skill files the agent loaded (SKILL.md counts as always loaded).",
    )
    invoked: bool | None = Field(
        default=None,
        description="The trajectory shows the skill under test loaded; None: no skill given.",
    )
    fingerprint: str | None = Field(
        default=None,
        description="Hash of the trial's actions (assistant messages and tool calls): two "
        "trials of a task and side with the same fingerprint are one observation "
        "(docs/design/290). None: no trajectory, taken as independent.",
    )


# ---------------------------------------------------------------------------- outputs


class PassRate(FrozenModel):
    """Pass rate of one side over tasks, each task weighted equally."""

    tasks: int = Field(description="Tasks with at least one trial on this side.")
    trials: int = Field(description="Trials on this side.")
    pass_rate: float = Field(description="Mean over tasks of the task's pass fraction.")
    ci: Interval = Field(description="Wilson interval at the effective number of trials.")
    cluster_se: float | None = Field(
        default=None,
        description="Task-clustered standard error of pass_rate (SD of per-task pass "
        "fractions / sqrt(tasks); Miller 2024). Null under 2 tasks.",
    )
    cluster_ci: Interval | None = Field(
        default=None,
        description="pass_rate +- z * cluster_se, widened to contain `ci` (a suite whose "
        "tasks happened to agree still has binomial noise); the interval reports show.",
    )
    mean_reward: float = Field(description="Mean over tasks of the task's mean reward.")
    k: int = Field(description="k of pass@k and pass^k.")
    pass_at_k: float = Field(description="Mean over tasks of P(at least one of k passes).")
    pass_hat_k: float = Field(description="Mean over tasks of P(all k pass) (pass^k).")

    @property
    def band(self) -> Interval:
        """The interval reports show: task-clustered when there are 2+ tasks, else Wilson."""
        return self.cluster_ci or self.ci


class CostSummary(FrozenModel):
    """What one side's trials cost."""

    trials: int = Field(description="Trials on this side.")
    successes: int = Field(description="Trials that passed.")
    input_tokens: int | None = Field(
        description="Summed model input tokens; null when a trial's count is unknown (a sum "
        "without it would pass for the total)."
    )
    output_tokens: int | None = Field(
        description="Summed model output tokens; null when a trial's count is unknown."
    )
    model_calls: int = Field(description="Summed model calls.")
    tool_calls: int = Field(description="Summed tool calls.")
    latency_s: float = Field(description="Summed trial wall time, seconds.")
    usd: float = Field(description="Summed model cost, USD.")
    usd_per_trial: float = Field(description="usd / trials.")
    usd_per_success: float | None = Field(description="usd / successes; None with no success.")
    tokens_per_success: float | None = Field(
        description="(input+output) / successes; null with no success or unknown tokens."
    )
    latency_per_trial_s: float = Field(description="latency_s / trials.")


class SideMetrics(FrozenModel):
    side: Side = Field(description="Which side these numbers are for.")
    pass_rate: PassRate = Field(description="Pass rate, pass@k, pass^k, mean reward.")
    cost: CostSummary = Field(description="Tokens, calls, latency and USD.")
    invocation_rate: float | None = Field(
        default=None,
        description="Trials that loaded the skill under test / trials with one (None: none).",
    )
    never_invoked: list[str] = Field(
        default_factory=list,
        description="Tasks with a skill whose trials on this side never loaded it.",
    )


class TaskChange(FrozenModel):
    """One task before (base) and after (head)."""

    task_id: str = Field(description="Task id.")
    base_pass_fraction: float = Field(description="Passes / repeats on base.")
    head_pass_fraction: float = Field(description="Passes / repeats on head.")
    base_repeats: int = Field(description="Trials of this task on base.")
    head_repeats: int = Field(description="Trials of this task on head.")
    base_mean_reward: float = Field(description="Mean reward on base.")
    head_mean_reward: float = Field(description="Mean reward on head.")
    change: TaskChangeKind = Field(description="By strict-majority pass on each side.")


class ChangeSummary(FrozenModel):
    """Repairs and regressions over the tasks both base and head ran."""

    tasks: int = Field(description="Tasks with base and head trials.")
    repairs: int = Field(description="Failed on base, passes on head.")
    regressions: int = Field(description="Passed on base, fails on head.")
    unchanged_pass: int = Field(description="Passes on both sides.")
    unchanged_fail: int = Field(description="Fails on both sides.")
    repair_rate: float | None = Field(description="repairs / tasks failing on base.")
    repair_ci: Interval | None = Field(description="Wilson interval of repair_rate.")
    regression_rate: float | None = Field(description="regressions / tasks passing on base.")
    regression_ci: Interval | None = Field(description="Wilson interval of regression_rate.")


class CostDelta(FrozenModel):
    """Relative change head vs base, (head - base) / base; None when base is 0/absent."""

    usd: float | None = Field(description="Relative change of total USD.")
    tokens: float | None = Field(description="Relative change of input + output tokens.")
    model_calls: float | None = Field(description="Relative change of model calls.")
    tool_calls: float | None = Field(description="Relative change of tool calls.")
    latency_s: float | None = Field(description="Relative change of summed latency.")
    usd_per_success: float | None = Field(description="Relative change of USD per success.")


class GateMetrics(FrozenModel):
    """Everything the gate measures about one base/head comparison."""

    schema_version: int = Field(default=METRICS_SCHEMA_VERSION, description="Shape version.")
    confidence: float = Field(description="Coverage of every interval.")
    n_boot: int = Field(description="Bootstrap resamples.")
    seed: int = Field(description="Bootstrap seed.")
    sides: dict[Side, SideMetrics] = Field(description="Per side present in the input.")
    tasks: list[TaskChange] = Field(description="Per task with base and head trials, by id.")
    changes: ChangeSummary = Field(description="Repairs, regressions and their rates.")
    paired: PairedComparison | None = Field(description="Base vs head; None without both.")
    gcr_head: GapClosure = Field(description="GCR of the candidate skill.")
    gcr_base: GapClosure = Field(description="GCR of the current skill.")
    cost_delta: CostDelta | None = Field(description="Head vs base cost; None without both.")


# ---------------------------------------------------------------------------- estimators


def _invocations(outcomes: list[TrialOutcome]) -> dict[str, Any]:
    """invocation_rate and never_invoked of one side's outcomes."""
    judged = [o for o in outcomes if o.invoked is not None]
    if not judged:
        return {}
    by_task: dict[str, bool] = {}
    for o in judged:
        by_task[o.task_id] = by_task.get(o.task_id, False) or bool(o.invoked)
    return {
        "invocation_rate": sum(bool(o.invoked) for o in judged) / len(judged),
        "never_invoked": sorted(t for t, seen in by_task.items() if not seen),
    }


def pass_at_k(n: int, c: int, k: int) -> float:
    """Unbiased pass@k from ``c`` passes in ``n`` trials: 1 - C(n-c, k) / C(n, k)."""
    _check_nck(n, c, k)
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Unbiased pass^k (all k trials pass) from ``c`` of ``n``: C(c, k) / C(n, k)."""
    _check_nck(n, c, k)
    return math.comb(c, k) / math.comb(n, k)


def _check_nck(n: int, c: int, k: int) -> None:
    if not (0 <= c <= n and 1 <= k <= n):
        raise ValueError(f"need 0 <= c <= n and 1 <= k <= n, got n={n}, c={c}, k={k}")


def task_passes(passes: int, trials: int) -> bool:
    """A task passes on a side when a strict majority of its repeats passed."""
    return 2 * passes > trials


@dataclass(slots=True)
class TaskTally:
    """Running totals of one (side, task)."""

    trials: int = 0
    passes: int = 0
    reward: float = 0.0

    @property
    def pass_fraction(self) -> float:
        return self.passes / self.trials

    @property
    def mean_reward(self) -> float:
        return self.reward / self.trials


@dataclass(slots=True)
class _CostTally:
    trials: int = 0
    successes: int = 0
    input_tokens: int | None = 0  # None once one trial's count is unknown
    output_tokens: int | None = 0
    model_calls: int = 0
    tool_calls: int = 0
    latency_s: float = 0.0
    usd: float = 0.0


def tally(outcomes: Iterable[TrialOutcome]) -> dict[Side, dict[str, TaskTally]]:
    """Group outcomes by side and task in one pass. Duplicate (task, side, repeat) is an
    input error: the same trial counted twice would bias every number."""
    tables: dict[Side, dict[str, TaskTally]] = {}
    seen: set[tuple[str, str, int]] = set()
    for o in outcomes:
        key = (o.side, o.task_id, o.repeat)
        if key in seen:
            raise InvalidInputError(
                f"duplicate trial: task {o.task_id!r}, side {o.side}, repeat {o.repeat}",
                hint="each (task, side, repeat) must appear once; dedupe the run records",
            )
        seen.add(key)
        table = tables.setdefault(o.side, {})
        t = table.get(o.task_id)
        if t is None:
            t = table[o.task_id] = TaskTally()
        t.trials += 1
        t.passes += o.passed
        t.reward += o.reward
    return tables


def _add(total: int | None, n: int | None) -> int | None:
    """A sum that stays unknown once a term is."""
    return None if total is None or n is None else total + n


def _cost_tally(outcomes: Iterable[TrialOutcome]) -> dict[Side, _CostTally]:
    out: dict[Side, _CostTally] = {}
    for o in outcomes:
        c = out.get(o.side)
        if c is None:
            c = out[o.side] = _CostTally()
        c.trials += 1
        c.successes += o.passed
        c.input_tokens = _add(c.input_tokens, o.input_tokens)
        c.output_tokens = _add(c.output_tokens, o.output_tokens)
        c.model_calls += o.model_calls
        c.tool_calls += o.tool_calls
        c.latency_s += o.latency_s
        c.usd += o.usd
    return out


def pass_rate(
    table: Mapping[str, TaskTally], *, k: int | None = None, confidence: float = 0.95
) -> PassRate:
    """Pass rate of one side. ``k`` defaults to the fewest repeats of any task.

    The Wilson interval uses the effective number of trials ``T^2 / sum(1/n_i)`` (T tasks,
    n_i repeats of task i), which is ``T*k`` when every task has k repeats.
    """
    if not table:
        raise InvalidInputError("pass_rate: no trials on this side", hint="run the side first")
    tallies = [table[t] for t in sorted(table)]
    n_tasks = len(tallies)
    min_n = min(t.trials for t in tallies)
    kk = min_n if k is None else k
    if not 1 <= kk <= min_n:
        worst = min(sorted(table), key=lambda t: table[t].trials)
        raise InvalidInputError(
            f"pass@k with k={kk} needs at least k repeats per task; task {worst!r} has {min_n}",
            hint=f"lower --repeat/k to at most {min_n} or run more repeats",
        )
    rate = math.fsum(t.pass_fraction for t in tallies) / n_tasks
    n_eff = n_tasks * n_tasks / math.fsum(1.0 / t.trials for t in tallies)
    wilson = wilson_interval(min(rate * n_eff, n_eff), n_eff, confidence=confidence)
    se = clustered_se([t.pass_fraction for t in tallies])
    cluster_ci = None
    if se is not None:
        half = z_value(confidence) * se
        cluster_ci = Interval(
            low=max(0.0, min(rate - half, wilson.low)),
            high=min(1.0, max(rate + half, wilson.high)),
            confidence=confidence,
            method="task-clustered normal, widened to wilson",
        )
    cache: dict[tuple[int, int], tuple[float, float]] = {}
    at_k: list[float] = []
    hat_k: list[float] = []
    for t in tallies:
        key = (t.trials, t.passes)
        pair = cache.get(key)
        if pair is None:
            pair = cache[key] = (
                pass_at_k(t.trials, t.passes, kk),
                pass_hat_k(t.trials, t.passes, kk),
            )
        at_k.append(pair[0])
        hat_k.append(pair[1])
    return PassRate(
        tasks=n_tasks,
        trials=sum(t.trials for t in tallies),
        pass_rate=rate,
        ci=wilson,
        cluster_se=se,
        cluster_ci=cluster_ci,
        mean_reward=math.fsum(t.mean_reward for t in tallies) / n_tasks,
        k=kk,
        pass_at_k=math.fsum(at_k) / n_tasks,
        pass_hat_k=math.fsum(hat_k) / n_tasks,
    )


def _cost_summary(c: _CostTally) -> CostSummary:
    tokens = _add(c.input_tokens, c.output_tokens)
    return CostSummary(
        trials=c.trials,
        successes=c.successes,
        input_tokens=c.input_tokens,
        output_tokens=c.output_tokens,
        model_calls=c.model_calls,
        tool_calls=c.tool_calls,
        latency_s=c.latency_s,
        usd=c.usd,
        usd_per_trial=c.usd / c.trials,
        usd_per_success=c.usd / c.successes if c.successes else None,
        tokens_per_success=tokens / c.successes if c.successes and tokens is not None else None,
        latency_per_trial_s=c.latency_s / c.trials,
    )


def _relative(before: float | None, after: float | None) -> float | None:
    if before is None or after is None or before == 0:
        return None
    return (after - before) / before


def cost_delta(base: CostSummary, head: CostSummary) -> CostDelta:
    return CostDelta(
        usd=_relative(base.usd, head.usd),
        tokens=_relative(  # None when either side's tokens are unknown
            _add(base.input_tokens, base.output_tokens), _add(head.input_tokens, head.output_tokens)
        ),
        model_calls=_relative(base.model_calls, head.model_calls),
        tool_calls=_relative(base.tool_calls, head.tool_calls),
        latency_s=_relative(base.latency_s, head.latency_s),
        usd_per_success=_relative(base.usd_per_success, head.usd_per_success),
    )


def classify_tasks(
    base: Mapping[str, TaskTally], head: Mapping[str, TaskTally]
) -> list[TaskChange]:
    """Per-task before/after for the tasks both sides ran, sorted by task id."""
    out: list[TaskChange] = []
    for task_id in sorted(base.keys() & head.keys()):
        b, h = base[task_id], head[task_id]
        bp, hp = task_passes(b.passes, b.trials), task_passes(h.passes, h.trials)
        kind: TaskChangeKind
        if bp and hp:
            kind = "unchanged_pass"
        elif bp:
            kind = "regression"
        elif hp:
            kind = "repair"
        else:
            kind = "unchanged_fail"
        out.append(
            TaskChange(
                task_id=task_id,
                base_pass_fraction=b.pass_fraction,
                head_pass_fraction=h.pass_fraction,
                base_repeats=b.trials,
                head_repeats=h.trials,
                base_mean_reward=b.mean_reward,
                head_mean_reward=h.mean_reward,
                change=kind,
            )
        )
    return out


def summarize_changes(changes: Iterable[TaskChange], *, confidence: float = 0.95) -> ChangeSummary:
    counts = {"repair": 0, "regression": 0, "unchanged_pass": 0, "unchanged_fail": 0}
    for c in changes:
        counts[c.change] += 1
    failing = counts["repair"] + counts["unchanged_fail"]
    passing = counts["regression"] + counts["unchanged_pass"]
    return ChangeSummary(
        tasks=failing + passing,
        repairs=counts["repair"],
        regressions=counts["regression"],
        unchanged_pass=counts["unchanged_pass"],
        unchanged_fail=counts["unchanged_fail"],
        repair_rate=counts["repair"] / failing if failing else None,
        repair_ci=wilson_interval(counts["repair"], failing, confidence=confidence)
        if failing
        else None,
        regression_rate=counts["regression"] / passing if passing else None,
        regression_ci=wilson_interval(counts["regression"], passing, confidence=confidence)
        if passing
        else None,
    )


def _scores(table: Mapping[str, TaskTally] | None) -> dict[str, float]:
    return {t: v.pass_fraction for t, v in (table or {}).items()}


def compute_metrics(
    outcomes: Iterable[TrialOutcome],
    *,
    k: int | None = None,
    n_boot: int = DEFAULT_BOOTSTRAP,
    confidence: float = 0.95,
    seed: int = 0,
) -> GateMetrics:
    """All gate metrics from trial outcomes. Deterministic for a given input and seed
    (independent of the order of ``outcomes``)."""
    items = outcomes if isinstance(outcomes, list | tuple) else list(outcomes)
    tables = tally(items)
    costs = _cost_tally(items)
    sides = {
        side: SideMetrics(
            side=side,
            pass_rate=pass_rate(tables[side], k=k, confidence=confidence),
            cost=_cost_summary(costs[side]),
            **_invocations([o for o in items if o.side == side]),
        )
        for side in SIDES
        if side in tables
    }
    base, head = tables.get("base"), tables.get("head")
    task_changes = classify_tasks(base, head) if base and head else []
    paired = (
        paired_comparison(
            _scores(base), _scores(head), n_boot=n_boot, confidence=confidence, seed=seed
        )
        if base and head
        else None
    )
    baseline_scores = _scores(tables.get("baseline"))
    teacher_scores = _scores(tables.get("teacher"))

    def gcr(scores: dict[str, float], offset: int) -> GapClosure:
        return gap_closure(
            scores,
            baseline_scores,
            teacher_scores,
            n_boot=n_boot,
            confidence=confidence,
            seed=seed + offset,
        )

    return GateMetrics(
        confidence=confidence,
        n_boot=n_boot,
        seed=seed,
        sides=sides,
        tasks=task_changes,
        changes=summarize_changes(task_changes, confidence=confidence),
        paired=paired,
        gcr_head=gcr(_scores(head), 1),
        gcr_base=gcr(_scores(base), 2),
        cost_delta=cost_delta(sides["base"].cost, sides["head"].cost)
        if "base" in sides and "head" in sides
        else None,
    )
