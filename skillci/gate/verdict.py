"""The release-gate verdict: every check with its number, threshold and pass/fail (pure).

Thresholds come from the *base* manifest's ``release_gate`` — a PR cannot lower its own bar
(and the patch guard rejects patches that touch ``release_gate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Literal

from pydantic import BaseModel, Field

from skillci.gate.flaky import FlakyHistory
from skillci.gate.impact import ImpactSelection
from skillci.gate.metrics import GateMetrics, TaskChange
from skillci.gate.outcomes import Comparability
from skillci.gate.power import SuitePower
from skillci.gate.sequential import Decision
from skillci.gate.stats import sign_test
from skillci.gate.triggers import TriggerCheck
from skillci.skill.models import ReleaseGate

GATE_SCHEMA_VERSION = 1
Verdict = Literal["accept", "reject"]


class GateCheck(BaseModel):
    """One line of the verdict table."""

    name: str = Field(description="Stable check name, e.g. regression_rate.")
    value: str = Field(description="The measured number, formatted.")
    threshold: str = Field(description="What it must satisfy, formatted.")
    passed: bool
    detail: str = Field(default="", description="One line of context.")


class Complexity(BaseModel):
    """Skill complexity on one side."""

    bootstrap_tokens: int
    total_tokens: int
    avg_loaded_tokens: float | None = Field(description="Mean tokens a trial actually loaded.")
    rules: int
    conflicting_rules: int
    never_hit_rules: list[str] = Field(description="Rules in files no trial loaded.")
    lint_errors: int


class SuiteResult(BaseModel):
    """Metrics of one suite."""

    suite: str
    tasks: list[str]
    metrics: GateMetrics
    sequential: Decision | None = None


class SameInstance(BaseModel):
    """The failing task the patch was proposed for, before and after."""

    task_id: str
    before_passed: bool
    after_passed: bool
    before_runs: list[str] = Field(default_factory=list)
    after_runs: list[str] = Field(default_factory=list)


class GateReport(BaseModel):
    """Everything the gate decided and why. Saved in the trace store (kind ``gate-report``)."""

    schema_version: int = GATE_SCHEMA_VERSION
    gate_id: str
    skill: str
    base_ref: str
    head_ref: str
    base_sha: str | None
    head_sha: str | None
    created_at: str
    student: str = Field(description="Model route of the student that was re-run.")
    repeat: int
    verdict: Verdict
    reasons: list[str] = Field(description="Failed checks, one line each (empty on accept).")
    checks: list[GateCheck]
    suites: list[SuiteResult]
    comparability: Comparability
    impact: ImpactSelection | None = None
    base_complexity: Complexity
    head_complexity: Complexity
    change_size: dict[str, int] = Field(
        default_factory=dict, description="files, lines_added, lines_removed"
    )
    guard_verdict: str = Field(description="pass, needs-approval or reject.")
    guard_findings: list[str] = Field(default_factory=list)
    same_instance: SameInstance | None = None
    triggers: TriggerCheck | None = Field(
        default=None,
        description="Trigger suite base vs head (run when name/description changed, or asked).",
    )
    evidence: dict[str, dict[str, list[str]]] = Field(
        default_factory=dict, description="task -> side -> run ids."
    )
    trials_run: int = 0
    trials_cached: int = 0
    trials_reused: int = Field(default=0, description="Base trials reused for head (impact).")
    model_calls: int = Field(
        default=0, description="Model calls made by this gate run (not cached)."
    )
    config: dict[str, object] = Field(default_factory=dict)
    power: list[SuitePower] = Field(
        default_factory=list,
        description="What each suite could detect at 80% power, with warnings when a "
        "manifest threshold is below it (docs/design/223-power-in-every-gate.md).",
    )
    flaky_history: list[FlakyHistory] = Field(
        default_factory=list,
        description="Tasks whose earlier runs of the same base skill, student and task "
        "content disagree (docs/design/247-flaky-from-history.md), with the evidence.",
    )
    warnings: list[str] = Field(
        default_factory=list,
        description="Trials left out of the metrics (environment_unsupported), one line "
        "per task with the reason and the hint; and trials with reward-hack evidence (passes "
        "after writing verifier/test files are counted as failed).",
    )

    @property
    def accepted(self) -> bool:
        return self.verdict == "accept"

    def suite(self, name: str) -> SuiteResult | None:
        return next((s for s in self.suites if s.suite == name), None)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _rate(m: GateMetrics, side: str) -> float | None:
    sm = m.sides.get(side)  # type: ignore[call-overload]
    return None if sm is None else sm.pass_rate.pass_rate


def all_changes(suites: Iterable[SuiteResult]) -> list[TaskChange]:
    """Per-task changes over all suites (a task in several suites counts once)."""
    seen: dict[str, TaskChange] = {}
    for s in suites:
        for t in s.metrics.tasks:
            seen.setdefault(t.task_id, t)
    return [seen[k] for k in sorted(seen)]


def is_flaky(t: TaskChange) -> bool:
    """Flaky: its repeats on the unchanged (base) side disagree (needs 2+ repeats)."""
    return t.base_repeats >= 2 and 0.0 < t.base_pass_fraction < 1.0


class Uncounted(BaseModel):
    """Tasks the repair/regression counts leave out, and why (docs/design/224)."""

    flaky: list[str] = Field(
        default_factory=list,
        description="Repeats disagree on base, or earlier runs of base did (``history``).",
    )
    history: dict[str, str] = Field(
        default_factory=dict,
        description="Task -> evidence, for the flaky tasks found from earlier runs.",
    )
    quarantined: dict[str, str] = Field(
        default_factory=dict, description="Task -> reason, from release_gate.quarantine."
    )

    def __contains__(self, task: object) -> bool:
        return task in self.quarantined or task in self.flaky

    def describe(self) -> str:
        parts = []
        now = [t for t in self.flaky if t not in self.history]
        if now:
            parts.append("flaky on base: " + ", ".join(now))
        if self.history:
            parts.append("flaky from history: " + ", ".join(sorted(self.history)))
        if self.quarantined:
            parts.append("quarantined: " + ", ".join(self.quarantined))
        return "not counted — " + "; ".join(parts) if parts else ""


def uncounted(
    gate: ReleaseGate,
    changes: Iterable[TaskChange],
    history: Mapping[str, FlakyHistory] | None = None,
) -> Uncounted:
    """The tasks left out: quarantined, flaky now (base repeats disagree) or flaky from
    ``history`` (earlier base runs disagreed) — one rule for both (design 224, 247)."""
    q = {e.task: e.reason for e in gate.quarantine}
    hist = history or {}
    if gate.flaky_tasks == "count":
        return Uncounted(quarantined=q)
    flaky = sorted(
        c.task_id for c in changes if (is_flaky(c) or c.task_id in hist) and c.task_id not in q
    )
    return Uncounted(
        flaky=flaky,
        quarantined=q,
        history={
            t: hist[t].describe()
            for t in flaky
            if t in hist and not any(is_flaky(c) for c in changes if c.task_id == t)
        },
    )


def decide(
    *,
    gate: ReleaseGate,
    suites: list[SuiteResult],
    comparability: Comparability,
    base: Complexity,
    head: Complexity,
    guard_verdict: str,
    same_instance: SameInstance | None,
    validation_suite: str = "validation",
    security_suite: str = "security",
    alpha: float = 0.05,
    flaky_history: Mapping[str, FlakyHistory] | None = None,
) -> tuple[Verdict, list[GateCheck]]:
    """Apply the release gate. Every check is listed, pass or fail."""
    checks: list[GateCheck] = []
    val = next((s for s in suites if s.suite == validation_suite), None)
    every = all_changes(suites)
    skip = uncounted(gate, every, flaky_history)
    changes = [c for c in every if c.task_id not in skip]
    repairs = sum(c.change == "repair" for c in changes)
    base_pass = [c for c in changes if c.change in ("regression", "unchanged_pass")]
    regressions = sum(c.change == "regression" for c in changes)

    if val is not None:
        b, h = _rate(val.metrics, "base"), _rate(val.metrics, "head")
        gain = (h - b) if (b is not None and h is not None) else None
        si_repaired = bool(
            same_instance and same_instance.after_passed and not same_instance.before_passed
        )
        improved = (
            (gain is not None and gain >= gate.min_validation_gain) or repairs > 0 or si_repaired
        )
        checks.append(
            GateCheck(
                name="improvement",
                value=f"gain {_pct(gain)}, repairs {repairs}"
                + (", same-instance repaired" if si_repaired else ""),
                threshold=f"gain >= {gate.min_validation_gain:.1%} or a repair",
                passed=improved,
                detail=f"{validation_suite}: {_pct(b)} -> {_pct(h)}",
            )
        )
        checks.append(
            GateCheck(
                name="validation_no_drop",
                value=f"{_pct(b)} -> {_pct(h)}",
                threshold="head >= base",
                passed=gain is not None and gain >= -1e-12,
            )
        )
        if val.metrics.paired is not None:
            p = val.metrics.paired
            drop = sign_test(p.tasks_head_better, p.tasks_base_better, alternative="less")
            checks.append(
                GateCheck(
                    name="no_significant_drop",
                    value=f"p = {drop.p_value:.3g} ({p.tasks_base_better} worse, {p.tasks_head_better} better)",
                    threshold=f"one-sided sign test p >= {alpha}",
                    passed=drop.p_value >= alpha,
                )
            )
    else:
        checks.append(
            GateCheck(
                name="improvement",
                value="no validation suite",
                threshold="a validation suite",
                passed=False,
            )
        )

    reg_rate = regressions / len(base_pass) if base_pass else 0.0
    checks.append(
        GateCheck(
            name="regression_rate",
            value=f"{_pct(reg_rate)} ({regressions}/{len(base_pass)})",
            threshold=f"<= {gate.max_regression_rate:.1%}",
            passed=reg_rate <= gate.max_regression_rate,
            detail="; ".join(
                x
                for x in (
                    ", ".join(c.task_id for c in changes if c.change == "regression"),
                    skip.describe(),
                )
                if x
            ),
        )
    )

    sec = next((s for s in suites if s.suite == security_suite), None)
    if gate.require_security_suite:
        if sec is None:
            checks.append(
                GateCheck(
                    name="security_suite", value="not run", threshold="all pass", passed=False
                )
            )
        else:
            failing = [t.task_id for t in sec.metrics.tasks if t.head_pass_fraction < 1.0]
            checks.append(
                GateCheck(
                    name="security_suite",
                    value=f"{len(sec.metrics.tasks) - len(failing)}/{len(sec.metrics.tasks)} pass",
                    threshold="all pass (every repeat)",
                    passed=not failing,
                    detail=", ".join(failing),
                )
            )

    growth = (
        (head.bootstrap_tokens - base.bootstrap_tokens) / base.bootstrap_tokens
        if base.bootstrap_tokens
        else 0.0
    )
    checks.append(
        GateCheck(
            name="token_growth",
            value=f"{base.bootstrap_tokens} -> {head.bootstrap_tokens} ({growth:+.1%})",
            threshold=f"<= {gate.max_token_growth:+.0%}",
            passed=growth <= gate.max_token_growth,
        )
    )
    checks.append(
        GateCheck(
            name="lint",
            value=f"{base.lint_errors} -> {head.lint_errors} errors",
            threshold="no new errors",
            passed=head.lint_errors <= base.lint_errors,
        )
    )
    checks.append(
        GateCheck(
            name="guard",
            value=guard_verdict,
            threshold="pass (needs-approval blocks auto-accept)",
            passed=guard_verdict == "pass",
        )
    )
    checks.append(
        GateCheck(
            name="comparable_runs",
            value="yes"
            if comparability.comparable
            else f"{len(comparability.issues)} difference(s)",
            threshold="only the skill differs",
            passed=comparability.comparable,
            detail="; ".join(comparability.issues[:3]),
        )
    )
    if same_instance is not None:
        checks.append(
            GateCheck(
                name="same_instance",
                value=f"{'pass' if same_instance.before_passed else 'fail'} -> {'pass' if same_instance.after_passed else 'fail'}",
                threshold="passes on head",
                passed=same_instance.after_passed,
                detail=same_instance.task_id,
            )
        )
    verdict: Verdict = "accept" if all(c.passed for c in checks) else "reject"
    return verdict, checks


def reasons(checks: Iterable[GateCheck]) -> list[str]:
    return [
        f"{c.name}: {c.value} (needs {c.threshold})" + (f" — {c.detail}" if c.detail else "")
        for c in checks
        if not c.passed
    ]


def never_hit(rule_files: Mapping[str, list[str]], loaded: Iterable[frozenset[str]]) -> list[str]:
    """Rules rendered into files that no trial loaded. ``rule_files``: rendered file -> rule ids."""
    seen: set[str] = set()
    for s in loaded:
        seen |= s
    return sorted(r for f, rules in rule_files.items() if f not in seen for r in rules)
