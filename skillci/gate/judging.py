"""The rubric judge in the gate: which judge graded the gated suites' rubric tasks, was it
calibrated against each suite's human labels, and the ``judge_fit`` check (pure).

Design: docs/design/364-an-unfit-judge-is-an-unmeasured-gate.md. A suite that declares
``judge: {examples, min_kappa}`` (read at the *base* commit: a pull request cannot lower its
own bar or relabel the examples) gets its judge calibrated before any trial; when the judge
is below the minimum, the suite's rubric tasks are not run and the check is
``not_measured``: an unfit judge is a failed measurement, not a worse skill, so the verdict
is inconclusive (never a reject built on the unfit judge's grades, never an accept).
"""

from __future__ import annotations

from pydantic import Field

from skillci.basemodels import FrozenModel
from skillci.gate.evidence import Finding
from skillci.graders.calibrate import Agreement

#: Routes whose name starts with this are simulators (documented as such), not evidence.
SIM_PREFIX = "sim/"


class SuiteJudge(FrozenModel):
    """One gated suite with rubric tasks: its minimum, the judge's calibration, what ran."""

    suite: str = Field(description="Suite name.")
    rubric_tasks: list[str] = Field(description="Tasks of the suite with [[rubric]] graders.")
    min_kappa: float | None = Field(
        default=None, description="The suite's judge.min_kappa at base (None: none declared)."
    )
    min_examples: int | None = Field(
        default=None, description="The suite's judge.min_examples at base."
    )
    examples_file: str | None = Field(
        default=None, description="The labelled examples, relative to evals/suites/."
    )
    agreement: Agreement | None = Field(
        default=None, description="The judge against the labels (None: not calibrated)."
    )
    fit: bool | None = Field(
        default=None, description="Reached the minimum (None: no minimum declared)."
    )
    reason: str = Field(default="", description="One line: the figures and the minimum.")
    left_out: list[str] = Field(
        default_factory=list,
        description="Rubric tasks not run because the judge is unfit for this suite.",
    )


class GateJudge(FrozenModel):
    """The judge of a gate's rubric graders and its fitness per suite."""

    route: str = Field(description="Model route that judged the rubric graders (--judge).")
    suites: list[SuiteJudge] = Field(
        default_factory=list, description="Gated suites with rubric tasks (none: no rubric)."
    )

    @property
    def simulated(self) -> bool:
        return self.route.startswith(SIM_PREFIX)

    @property
    def left_out(self) -> dict[str, list[str]]:
        """Suite -> rubric tasks not run (the judge is unfit there)."""
        return {s.suite: s.left_out for s in self.suites if s.left_out}


def _figures(s: SuiteJudge) -> str:
    a = s.agreement
    if a is None:
        return "not calibrated"
    if a.kappa is None:
        return f"kappa undefined (every label and verdict the same), n {a.n}"
    return f"kappa {a.kappa} (95% CI {a.kappa_low}..{a.kappa_high}), n {a.n}"


def judge_finding(judge: GateJudge | None) -> Finding:
    """The ``judge_fit`` check:

    - not_applicable: no gated suite has a rubric task, or none of those declares a
      minimum agreement (the detail says the grades are the judge's, uncalibrated);
    - not_measured: the judge is below a suite's ``judge.min_kappa`` (or has too few
      examples): that suite's rubric tasks were not run; the detail gives the figures and
      the remedy;
    - pass: every suite that declares a minimum has a judge that reaches it.
    """
    if judge is None or not judge.suites:
        return Finding(status="not_applicable", value="no rubric task in the gated suites")
    route = judge.route
    sim = " (a lexical simulator, not evidence)" if judge.simulated else ""
    unfit = [s for s in judge.suites if s.fit is False]
    declared = [s for s in judge.suites if s.fit is not None]
    undeclared = [s.suite for s in judge.suites if s.fit is None]
    loose = (
        f"; {', '.join(undeclared)} declare(s) no judge.min_kappa: their rubric grades are "
        f"{route}'s, uncalibrated{sim}"
        if undeclared and declared
        else ""
    )
    if unfit:
        first = unfit[0]
        value = f"{route}: " + "; ".join(
            f"{s.suite} {_figures(s)} < {s.min_kappa}" if s.agreement else f"{s.suite} {s.reason}"
            for s in unfit
        )
        left = "; ".join(f"{s.suite}: {', '.join(s.left_out)}" for s in unfit if s.left_out)
        return Finding(
            status="not_measured",
            value=value,
            detail=f"{first.reason}. Rubric tasks not run ({left}): an unfit judge measures "
            "itself, not the skill. Remedy: `skillci judge calibrate --suite "
            f"{first.suite} --judge ROUTE` to find a judge that reaches it, then gate with "
            f"--judge ROUTE (or add labelled examples){loose}",
        )
    if not declared:
        return Finding(
            status="not_applicable",
            value=f"{route} uncalibrated{sim}",
            detail=f"no gated suite with rubric tasks ({', '.join(s.suite for s in judge.suites)}) "
            "declares judge: {examples, min_kappa}: the rubric grades are the judge's as "
            "given; declare one to have the gate check it",
        )
    return Finding(
        status="pass",
        value=f"{route}: " + "; ".join(f"{s.suite} {_figures(s)}" for s in declared),
        detail="; ".join(s.reason for s in declared) + loose,
    )


__all__ = ["SIM_PREFIX", "GateJudge", "SuiteJudge", "judge_finding"]
