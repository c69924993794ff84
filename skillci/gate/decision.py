"""The gate's decision over what the trials showed (pure: plain data in, plain data out).

The flow (:mod:`skillci.flows.gate`) loads both sides and runs the trials; everything it
decides from them lives here: which head tasks must re-run (test-impact selection), the
outcomes a suite's metrics are computed from, each side's complexity, the size of the
change, the change guard, and the verdict with its checks (:func:`conclude`).
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from skillci.gate.change_guard import guard_change
from skillci.gate.evidence import paired_test
from skillci.gate.flaky import FlakyHistory
from skillci.gate.impact import ImpactSelection
from skillci.gate.judging import GateJudge
from skillci.gate.metrics import Side, TrialOutcome, compute_metrics
from skillci.gate.outcomes import (
    Comparability,
    comparability,
    comparable,
    errored,
    loaded_files,
    to_outcome,
)
from skillci.gate.power import SuitePower, suite_power
from skillci.gate.sequential import SequentialConfig
from skillci.gate.verdict import (
    Complexity,
    GateCheck,
    SameInstance,
    SuiteResult,
    Verdict,
    all_changes,
    decide,
    never_hit,
    reasons,
    uncounted,
)
from skillci.skill.lint import lint
from skillci.skill.models import ReleaseGate
from skillci.skill.package import SkillPackage
from skillci.skill.render import RenderedSkill
from skillci.tasks.models import Task
from skillci.trace.models import RunRecord

_GUARD_ORDER = {"pass": 0, "needs-approval": 1, "reject": 2}


def rerun_on_head(
    impact: bool, sel: ImpactSelection, btasks: Mapping[str, Task], htasks: Mapping[str, Task]
) -> list[Task]:
    """Head tasks that must run (test-impact selection): the rest reuse their base trials.

    A task whose loaded skill files did not change and whose content is identical on both
    sides reuses its base trials (unless ``impact`` is off). The decision for a task
    depends only on that task.
    """
    same_task = {
        tid
        for tid in htasks
        if tid in btasks and htasks[tid].content_hash == btasks[tid].content_hash
    }
    return [htasks[t] for t in sorted(htasks) if not impact or t in sel.rerun or t not in same_task]


def merge_impact(acc: ImpactSelection | None, sel: ImpactSelection) -> ImpactSelection:
    """The impact selections of several suites as one."""
    if acc is None:
        return sel
    return acc.model_copy(
        update={
            "rerun": sorted({*acc.rerun, *sel.rerun}),
            "reuse": sorted({*acc.reuse, *sel.reuse}),
            "selected": acc.selected + sel.selected,
            "total": acc.total + sel.total,
            "tasks": [*acc.tasks, *sel.tasks],
        }
    )


def suite_outcomes(
    base: Sequence[RunRecord],
    head: Sequence[RunRecord],
    references: Mapping[Side, Sequence[RunRecord]],
    reused: Sequence[RunRecord],
) -> list[TrialOutcome]:
    """The outcomes a suite's metrics are computed from: base and head trials, the
    reference sides, and base trials reused as head trials (impact selection).
    ``environment_unsupported`` trials are left out (the report warns about them)."""
    out = [to_outcome(r, "base") for r in comparable(base)]
    out += [to_outcome(r, "head") for r in comparable(head)]
    for side, recs in references.items():
        out += [to_outcome(r, side) for r in comparable(recs)]
    out += [to_outcome(r, "head") for r in comparable(reused)]
    return out


def suite_result(
    suite: str,
    outcomes: Sequence[TrialOutcome],
    *,
    tasks: Sequence[str] | None = None,
    rounds: int | None = None,
    n_boot: int | None = None,
    quarantined: Sequence[str] = (),
) -> SuiteResult:
    """A suite's metrics and paired evidence from its outcomes, the way the gate flow
    computes them (rounds = repeats, replayed through the sequential test; ``rounds``
    defaults to the most repeats seen). For callers that hold outcomes, not a runner:
    tests, benchmarks."""
    names = sorted(tasks if tasks is not None else {o.task_id for o in outcomes})
    planned = rounds or 1 + max((o.repeat for o in outcomes), default=0)
    kw = {} if n_boot is None else {"n_boot": n_boot}
    return SuiteResult(
        suite=suite,
        tasks=names,
        metrics=compute_metrics(outcomes, **kw),
        evidence=paired_test(
            outcomes, SequentialConfig(max_rounds=planned), tasks=names, exclude=quarantined
        ),
    )


def complexity(
    pkg: SkillPackage, rendered: RenderedSkill, records: Sequence[RunRecord]
) -> Complexity:
    """Tokens, rules, conflicts, never-hit rules and lint errors of one side."""
    report = lint(pkg)
    rule_files: dict[str, list[str]] = {}
    for lr in pkg.rules:
        if lr.rule.status.rendered:
            f = (
                "SKILL.md"
                if lr.rule.scope.workflow is None
                else f"{pkg.manifest.entrypoints.workflows.rstrip('/')}/{lr.rule.scope.workflow}.md"
            )
            rule_files.setdefault(f, []).append(lr.rule.id)
    tokens = {f.path: f.tokens for f in rendered.files}
    loaded = [loaded_files(r) for r in records]
    avg = (sum(sum(tokens.get(p, 0) for p in s) for s in loaded) / len(loaded)) if loaded else None
    return Complexity(
        bootstrap_tokens=rendered.bootstrap_tokens,
        total_tokens=rendered.total_tokens,
        avg_loaded_tokens=avg,
        rules=sum(1 for lr in pkg.rules if lr.rule.status.rendered),
        conflicting_rules=sum(1 for f in report.findings if f.code == "SK031"),
        never_hit_rules=never_hit(rule_files, loaded) if loaded else [],
        lint_errors=report.errors,
    )


def change_size(a: SkillPackage, b: SkillPackage) -> dict[str, int]:
    """Files changed and lines added/removed from ``a`` to ``b``."""
    files = sorted(set(a.files) | set(b.files))
    changed = added = removed = 0
    for f in files:
        x, y = a.files.get(f), b.files.get(f)
        if x == y:
            continue
        changed += 1
        xl = (x or b"").decode(errors="replace").splitlines()
        yl = (y or b"").decode(errors="replace").splitlines()
        for line in difflib.unified_diff(xl, yl, lineterm="", n=0):
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
    return {"files": changed, "lines_added": added, "lines_removed": removed}


def worst(a: str, b: str) -> str:
    """The stricter of two guard verdicts (pass < needs-approval < reject; unknown = reject)."""
    return a if _GUARD_ORDER.get(a, 2) >= _GUARD_ORDER.get(b, 2) else b


def majority(records: Sequence[RunRecord]) -> bool:
    """More than half of ``records`` passed."""
    return sum(r.evaluation.passed for r in records) * 2 > len(records)


@dataclass(frozen=True)
class Conclusion:
    """The verdict and everything the report shows beside it."""

    verdict: Verdict
    checks: list[GateCheck]
    reasons: list[str]
    comparability: Comparability
    base_complexity: Complexity
    head_complexity: Complexity
    change_size: dict[str, int]
    guard_verdict: str
    guard_findings: list[str]
    power: list[SuitePower]


def conclude(
    *,
    base_pkg: SkillPackage,
    base_rendered: RenderedSkill,
    head_pkg: SkillPackage,
    head_rendered: RenderedSkill,
    suites: list[SuiteResult],
    base_records: Sequence[RunRecord],
    head_records: Sequence[RunRecord],
    guard_verdict: str,
    guard_findings: Sequence[str],
    same_instance: SameInstance | None,
    flaky_history: Mapping[str, FlakyHistory] | None = None,
    judge: GateJudge | None = None,
) -> Conclusion:
    """The gate's verdict: the base manifest's ``release_gate`` over the suites' metrics,
    the comparability of both sides' trials, complexity, and the worst of the patch guard
    (``guard_verdict``) and the change guard."""
    comp = comparability(base_records, head_records)
    change_verdict, change_findings = guard_change(base_pkg, head_pkg)
    guard = worst(guard_verdict, change_verdict)
    findings = list(guard_findings) + [f"{f.code}: {f.message}" for f in change_findings]
    bc = complexity(base_pkg, base_rendered, base_records)
    hc = complexity(head_pkg, head_rendered, head_records or base_records)
    verdict, checks = decide(
        gate=base_pkg.manifest.release_gate,
        suites=suites,
        comparability=comp,
        base=bc,
        head=hc,
        guard_verdict=guard,
        same_instance=same_instance,
        flaky_history=flaky_history,
        errors=error_lines(base_records, head_records),
        max_added_tokens=base_pkg.manifest.patch_limits.max_added_tokens,
        judge=judge,
    )
    return Conclusion(
        verdict=verdict,
        checks=checks,
        reasons=reasons(checks),
        comparability=comp,
        base_complexity=bc,
        head_complexity=hc,
        change_size=change_size(base_pkg, head_pkg),
        guard_verdict=guard,
        guard_findings=findings,
        power=suites_power(suites, base_pkg.manifest.release_gate, flaky_history),
    )


def error_lines(
    base_records: Sequence[RunRecord], head_records: Sequence[RunRecord]
) -> dict[str, list[str]]:
    """Side -> one line per errored trial (task, state, the first line of its cause)."""
    out: dict[str, list[str]] = {}
    for side, recs in (("base", base_records), ("head", head_records)):
        for r in errored(recs):
            cause = (r.evaluation.verifier_output or r.stop_reason or "").strip().splitlines()
            out.setdefault(side, []).append(
                f"{r.task_id} ({r.evaluation.state.value}): {cause[0][:160] if cause else 'no cause recorded'}"
            )
    return out


def suites_power(
    suites: Sequence[SuiteResult],
    gate: ReleaseGate,
    flaky_history: Mapping[str, FlakyHistory] | None = None,
) -> list[SuitePower]:
    """What each suite could detect under the manifest's thresholds (docs/design/223)."""
    skip = uncounted(gate, all_changes(suites), flaky_history)
    return [
        suite_power(
            s.suite,
            s.metrics,
            min_gain=gate.min_validation_gain,
            max_regression_rate=gate.max_regression_rate,
            uncounted=skip,
            repeats=s.evidence.effective_repeats if s.evidence is not None else None,
        )
        for s in suites
        if s.metrics.tasks
    ]


__all__ = [
    "Conclusion",
    "change_size",
    "complexity",
    "conclude",
    "majority",
    "merge_impact",
    "rerun_on_head",
    "suite_outcomes",
    "suite_result",
    "suites_power",
    "worst",
]
