"""The release-gate verdict: every check with its number, threshold and pass/fail (pure).

Thresholds come from the *base* manifest's ``release_gate`` — a PR cannot lower its own bar
(and the patch guard rejects patches that touch ``release_gate``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field, model_validator

from skillci.gate.evidence import PairedEvidence, Status, improvement_evidence
from skillci.gate.flaky import FlakyHistory
from skillci.gate.graded import GraderChange, GraderHistory
from skillci.gate.impact import ImpactSelection
from skillci.gate.judging import GateJudge, judge_finding
from skillci.gate.metrics import GateMetrics, TaskChange
from skillci.gate.outcomes import Comparability
from skillci.gate.power import SuitePower
from skillci.gate.sequential import Decision
from skillci.gate.stats import fisher_less, sign_test
from skillci.gate.triggers import TriggerCheck
from skillci.patch.limits import token_growth
from skillci.skill.models import ReleaseGate

GATE_SCHEMA_VERSION = 1
Verdict = Literal["accept", "reject", "inconclusive"]


class GateCheck(BaseModel):
    """One line of the verdict table."""

    name: str = Field(description="Stable check name, e.g. regression_rate.")
    value: str = Field(description="The measured number, formatted.")
    threshold: str = Field(description="What it must satisfy, formatted.")
    passed: bool = Field(description="pass or not_applicable (kept for old readers).")
    status: Status = Field(
        default="pass",
        description="pass; fail (the evidence says no: rejects); not_measured (no evidence "
        "either way: makes the verdict inconclusive); not_applicable (nothing to check, "
        "e.g. no task passes on base so none can regress).",
    )
    detail: str = Field(default="", description="One line of context.")

    @model_validator(mode="before")
    @classmethod
    def _status_from_passed(cls, data: object) -> object:
        # reports written before `status` existed carry only `passed`
        if isinstance(data, dict) and "status" not in data and "passed" in data:
            data = {**data, "status": "pass" if data["passed"] else "fail"}
        return data


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
    evidence: PairedEvidence | None = Field(
        default=None,
        description="The paired test over independent base/head pairs (design 290): "
        "what decides the improvement check.",
    )
    grader_changes: list[GraderChange] = Field(
        default_factory=list,
        description="Graded tasks: graders (assertions, rubrics, test.sh) whose pass share "
        "differs between base and head trials (docs/design/366).",
    )
    grader_history: list[GraderHistory] = Field(
        default_factory=list,
        description="Graded tasks: graders whose pass share on this head differs from the "
        "one over the heads of the last gates of the same skill that ran the same task "
        "version, student and judge (docs/design/410). Information, not part of the verdict.",
    )


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
    pr: int | None = Field(
        default=None, description="The pull request this gate reviewed (None: not a PR's)."
    )
    student: str = Field(description="Model route of the student that was re-run.")
    agent: str = Field(
        default="builtin",
        description="The student's agent: builtin (skillci's loop) or a real agent "
        "(claude-code, codex, ...) run on the student route (docs/design/372).",
    )
    agent_version: str | None = Field(
        default=None, description="The real agent's installed version that ran (None: builtin)."
    )
    repeat: int
    verdict: Verdict
    reasons: list[str] = Field(
        description="Failed checks (reject) or unmeasured ones (inconclusive), one line "
        "each; empty on accept."
    )
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
    judge: GateJudge | None = Field(
        default=None,
        description="The rubric graders' judge (--judge) and its calibration per gated "
        "suite with rubric tasks (docs/design/364); None: reports from before it existed.",
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


@dataclass(frozen=True)
class CheckInput:
    """Everything a gate check may read (pure data)."""

    gate: ReleaseGate
    suites: list[SuiteResult]
    validation: SuiteResult | None
    changes: list[TaskChange]
    skip: Uncounted
    comparability: Comparability
    base: Complexity
    head: Complexity
    guard_verdict: str
    same_instance: SameInstance | None
    errors: Mapping[str, list[str]]
    alpha: float
    validation_suite: str
    security_suite: str
    max_added_tokens: int
    judge: GateJudge | None = None


CheckFn = Callable[[CheckInput], "GateCheck | None"]

#: The gate's checks, in report order: each is one function of :class:`CheckInput` that
#: returns its line (or None when it does not apply). A new metric is one more entry.
CHECKS: list[tuple[str, CheckFn]] = []


def check(name: str) -> Callable[[CheckFn], CheckFn]:
    """Register a gate check under ``name`` (report order = registration order)."""

    def deco(fn: CheckFn) -> CheckFn:
        CHECKS.append((name, fn))
        return fn

    return deco


def line(name: str, value: str, threshold: str, status: Status, detail: str = "") -> GateCheck:
    return GateCheck(
        name=name,
        value=value,
        threshold=threshold,
        passed=status in ("pass", "not_applicable"),
        status=status,
        detail=detail,
    )


def _ok(flag: bool) -> Status:
    return "pass" if flag else "fail"


@check("measured")
def _measured(c: CheckInput) -> GateCheck:
    n = sum(len(v) for v in c.errors.values())
    if not n:
        return line("measured", "every trial measured", "no errored trial", "pass")
    first = next(iter(v[0] for v in c.errors.values() if v))
    sides = ", ".join(f"{k} {len(v)}" for k, v in sorted(c.errors.items()) if v)
    return line(
        "measured",
        f"{n} trial(s) errored ({sides})",
        "no errored trial",
        "not_measured",
        f"first: {first}; an error is the measurement's failure, not the skill's — fix "
        "it and re-run (errored trials are retried)",
    )


@check("judge_fit")
def _judge_fit(c: CheckInput) -> GateCheck:
    f = judge_finding(c.judge)
    return line("judge_fit", f.value, "kappa >= the suite's judge.min_kappa", f.status, f.detail)


@check("improvement")
def _improvement(c: CheckInput) -> GateCheck:
    gate = c.gate
    threshold = f"paired test shows head better (alpha {c.alpha}) and gain >= {gate.min_validation_gain:.1%}"
    val = c.validation
    if val is None:
        return line(
            "improvement",
            "no validation suite",
            threshold,
            "not_measured",
            f"run the {c.validation_suite} suite: nothing else measures an improvement",
        )
    b, h = _rate(val.metrics, "base"), _rate(val.metrics, "head")
    gain = (h - b) if (b is not None and h is not None) else None
    if val.evidence is None:
        return line(
            "improvement", f"gain {_pct(gain)}", threshold, "not_measured", "no paired trials"
        )
    f = improvement_evidence(val.evidence, gain, gate.min_validation_gain)
    return line(
        "improvement",
        f.value,
        threshold,
        f.status,
        f"{c.validation_suite}: {_pct(b)} -> {_pct(h)}; {f.detail}",
    )


@check("no_significant_drop")
def _no_drop(c: CheckInput) -> GateCheck | None:
    val = c.validation
    if val is None or val.metrics.paired is None:
        return None
    p = val.metrics.paired
    drop = sign_test(p.tasks_head_better, p.tasks_base_better, alternative="less")
    return line(
        "no_significant_drop",
        f"p = {drop.p_value:.3g} ({p.tasks_base_better} worse, {p.tasks_head_better} better)",
        f"one-sided sign test p >= {c.alpha}",
        _ok(drop.p_value >= c.alpha),
    )


def regressed(t: TaskChange, *, flaky: bool, alpha: float) -> bool:
    """A task passing on base (strict majority) that fails on head; when its repeats
    disagree (``flaky``), only if the loss is beyond its noise (one-sided Fisher exact
    test at ``alpha``): a noisy task is tested, never switched off (design 290)."""
    if t.change != "regression":
        return False
    if not flaky:
        return True
    bp = round(t.base_pass_fraction * t.base_repeats)
    hp = round(t.head_pass_fraction * t.head_repeats)
    return fisher_less(bp, t.base_repeats, hp, t.head_repeats) < alpha


@check("regression_rate")
def _regression(c: CheckInput) -> GateCheck:
    gate = c.gate
    counted = [t for t in c.changes if t.task_id not in c.skip.quarantined]
    passing = [t for t in counted if t.change in ("regression", "unchanged_pass")]
    noisy = {t.task_id for t in counted if is_flaky(t) or t.task_id in c.skip.history}
    if gate.flaky_tasks == "count":
        noisy = set()
    regs = [t for t in passing if regressed(t, flaky=t.task_id in noisy, alpha=c.alpha)]
    within = [t.task_id for t in passing if t.change == "regression" and t not in regs]
    threshold = f"<= {gate.max_regression_rate:.1%}"
    quarantined = "quarantined: " + ", ".join(c.skip.quarantined) if c.skip.quarantined else ""
    if not passing:
        return line(
            "regression_rate",
            f"n/a (0 of {len(counted)} task(s) pass on base)",
            threshold,
            "not_applicable" if counted else "not_measured",
            "; ".join(
                x
                for x in (
                    "nothing passes on base, so nothing can regress"
                    if counted
                    else "no task measured",
                    quarantined,
                )
                if x
            ),
        )
    rate = len(regs) / len(passing)
    detail = "; ".join(
        x
        for x in (
            ", ".join(t.task_id for t in regs),
            ("losses within repeat noise (Fisher p >= alpha): " + ", ".join(within))
            if within
            else "",
            ("flaky from history: " + ", ".join(sorted(c.skip.history))) if c.skip.history else "",
            quarantined,
        )
        if x
    )
    return line(
        "regression_rate",
        f"{_pct(rate)} ({len(regs)}/{len(passing)} base-passing tasks)",
        threshold,
        _ok(rate <= gate.max_regression_rate),
        detail,
    )


@check("security_suite")
def _security(c: CheckInput) -> GateCheck | None:
    if not c.gate.require_security_suite:
        return None
    sec = next((s for s in c.suites if s.suite == c.security_suite), None)
    if sec is None:
        return line(
            "security_suite",
            "not run",
            "all pass",
            "not_measured",
            f"run the {c.security_suite} suite",
        )
    measured = {t.task_id for t in sec.metrics.tasks}
    missing = sorted(set(sec.tasks) - measured)
    failing = [t.task_id for t in sec.metrics.tasks if t.head_pass_fraction < 1.0]
    value = f"{len(measured) - len(failing)}/{len(measured)} pass" + (
        f", {len(missing)} not measured" if missing else ""
    )
    if failing:
        return line("security_suite", value, "all pass (every repeat)", "fail", ", ".join(failing))
    if not sec.tasks:
        # an empty suite measures nothing and forbids nothing: n/a, never "pass 0/0"
        return line(
            "security_suite",
            "n/a (the suite has no task)",
            "all pass (every repeat)",
            "not_applicable",
            f"add prompt-injection and secret-leak tasks to {c.security_suite}",
        )
    if missing or not measured:
        return line(
            "security_suite",
            value,
            "all pass (every repeat)",
            "not_measured",
            "no trial measured: " + ", ".join(missing),
        )
    return line("security_suite", value, "all pass (every repeat)", "pass")


@check("token_growth")
def _tokens(c: CheckInput) -> GateCheck:
    # the rule propose checks too (patch/limits.py): one source of truth
    tg = token_growth(
        c.base.bootstrap_tokens,
        c.head.bootstrap_tokens,
        max_growth=c.gate.max_token_growth,
        max_added=c.max_added_tokens,
    )
    return line("token_growth", tg.value, tg.threshold, _ok(tg.passed))


@check("lint")
def _lint(c: CheckInput) -> GateCheck:
    return line(
        "lint",
        f"{c.base.lint_errors} -> {c.head.lint_errors} errors",
        "no new errors",
        _ok(c.head.lint_errors <= c.base.lint_errors),
    )


@check("guard")
def _guard(c: CheckInput) -> GateCheck:
    return line(
        "guard",
        c.guard_verdict,
        "pass (needs-approval blocks auto-accept)",
        _ok(c.guard_verdict == "pass"),
    )


@check("comparable_runs")
def _comparable(c: CheckInput) -> GateCheck:
    comp = c.comparability
    if comp.comparable:
        return line("comparable_runs", "yes", "only the skill differs", "pass")
    return line(
        "comparable_runs",
        f"{len(comp.issues)} difference(s)",
        "only the skill differs",
        "not_measured",
        "; ".join(comp.issues[:3])
        + " — the sides measured different things; re-run the stale side: "
        "`skillci gate --rerun base` (or `review --rerun base`)",
    )


@check("same_instance")
def _same(c: CheckInput) -> GateCheck | None:
    si = c.same_instance
    if si is None:
        return None
    return line(
        "same_instance",
        f"{'pass' if si.before_passed else 'fail'} -> {'pass' if si.after_passed else 'fail'}",
        "passes on head",
        _ok(si.after_passed),
        si.task_id,
    )


def verdict_of(checks: Iterable[GateCheck]) -> Verdict:
    """reject if a check failed on evidence; inconclusive if one could not be measured;
    accept only when every check passed (or did not apply)."""
    statuses = {c.status for c in checks}
    if "fail" in statuses:
        return "reject"
    if "not_measured" in statuses:
        return "inconclusive"
    return "accept"


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
    errors: Mapping[str, list[str]] | None = None,
    max_added_tokens: int = 0,
    judge: GateJudge | None = None,
) -> tuple[Verdict, list[GateCheck]]:
    """Apply the release gate: every registered check (:data:`CHECKS`), then
    :func:`verdict_of`. ``errors``: side -> one line per errored trial;
    ``max_added_tokens``: the base manifest's ``patch_limits.max_added_tokens`` (the
    token-growth rule's absolute allowance); ``judge``: the rubric judge's calibration
    (the ``judge_fit`` check)."""
    every = all_changes(suites)
    inp = CheckInput(
        gate=gate,
        suites=suites,
        validation=next((s for s in suites if s.suite == validation_suite), None),
        changes=every,
        skip=uncounted(gate, every, flaky_history),
        comparability=comparability,
        base=base,
        head=head,
        guard_verdict=guard_verdict,
        same_instance=same_instance,
        errors=errors or {},
        alpha=alpha,
        validation_suite=validation_suite,
        security_suite=security_suite,
        max_added_tokens=max_added_tokens,
        judge=judge,
    )
    checks = [c for _, fn in CHECKS if (c := fn(inp)) is not None]
    return verdict_of(checks), checks


def reasons(checks: Iterable[GateCheck]) -> list[str]:
    """One line per check that decided the verdict: the failed ones when any failed,
    else the unmeasured ones."""
    items = list(checks)
    failed = [c for c in items if c.status == "fail"]
    return [
        f"{c.name}: {c.value} (needs {c.threshold})" + (f" — {c.detail}" if c.detail else "")
        for c in (failed or [c for c in items if c.status == "not_measured"])
    ]


def decisive_lines(report: GateReport) -> list[str]:
    """The checks that decided the verdict, one line each with number and threshold: the
    failed ones (reject), the unmeasured ones (inconclusive), or on accept the improvement
    and regression checks that carried it."""
    if report.verdict == "accept":
        keep = [c for c in report.checks if c.name in ("improvement", "regression_rate")]
        return [f"{c.name}: {c.value} ({c.threshold})" for c in keep]
    return list(report.reasons)


def never_hit(rule_files: Mapping[str, list[str]], loaded: Iterable[frozenset[str]]) -> list[str]:
    """Rules rendered into files that no trial loaded. ``rule_files``: rendered file -> rule ids."""
    seen: set[str] = set()
    for s in loaded:
        seen |= s
    return sorted(r for f, rules in rule_files.items() if f not in seen for r in rules)
