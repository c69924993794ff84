"""Calibration before trust: does the judge agree with human labels? (pure)

A suite may carry human-labelled examples (``judge.examples`` in its YAML: a file of
:class:`CalibrationSet`) and a minimum agreement (``judge.min_kappa``). ``skillci judge
calibrate`` asks the judge each example's criterion about its output and compares with the
label: accuracy, and Cohen's kappa (agreement beyond what the label rates give by chance)
with a normal-approximation interval, SE = sqrt(po (1 - po) / (n (1 - pe)^2)) (Cohen 1960).

:func:`judge_fit` is the one check a gate makes before it uses a judge's verdicts.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, Field

from skillci.basemodels import StrictModel

CALIBRATION_SCHEMA_VERSION = 1
#: Fewer labelled examples than this and no judge is fit, whatever it scores.
DEFAULT_MIN_EXAMPLES = 10
_Z95 = 1.959964


class CalibrationExample(StrictModel):
    """One human-labelled judgement."""

    id: str = Field(description="Example id (unique in the set).")
    task: str = Field(description="The task's instruction as the judge sees it.")
    criterion: str = Field(description="One rubric criterion.")
    output: str = Field(description="An output to judge.")
    label: bool = Field(description="The human's verdict: does the output satisfy it?")


class CalibrationSet(StrictModel):
    """A file of labelled examples."""

    schema_version: int = Field(default=CALIBRATION_SCHEMA_VERSION, description="Version.")
    examples: list[CalibrationExample] = Field(min_length=1, description="The examples.")


class JudgeRequirement(StrictModel):
    """A suite's ``judge:`` section."""

    examples: str = Field(description="Labelled examples, relative to the suite file's dir.")
    min_kappa: float = Field(ge=-1.0, le=1.0, description="Cohen's kappa the judge must reach.")
    min_examples: int = Field(default=DEFAULT_MIN_EXAMPLES, ge=1, description="Fewest examples.")


class Agreement(StrictModel):
    """How a judge's verdicts agree with the labels."""

    n: int = Field(description="Examples judged.")
    agreed: int = Field(description="Verdicts equal to the label.")
    accuracy: float = Field(description="agreed / n.")
    kappa: float | None = Field(description="Cohen's kappa; None when chance agreement is 1.")
    kappa_low: float | None = Field(description="Lower end of the 95% interval.")
    kappa_high: float | None = Field(description="Upper end of the 95% interval.")
    confusion: dict[str, int] = Field(description="tp, fp, fn, tn (judge vs label).")


def agreement(labels: Sequence[bool], verdicts: Sequence[bool]) -> Agreement:
    """Accuracy and Cohen's kappa (95% interval) of ``verdicts`` against ``labels``."""
    if len(labels) != len(verdicts) or not labels:
        raise ValueError("need as many verdicts as labels, at least one")
    n = len(labels)
    tp = sum(lab and v for lab, v in zip(labels, verdicts, strict=True))
    tn = sum(not lab and not v for lab, v in zip(labels, verdicts, strict=True))
    fp = sum(v and not lab for lab, v in zip(labels, verdicts, strict=True))
    fn = n - tp - tn - fp
    po = (tp + tn) / n
    p_yes = ((tp + fn) / n) * ((tp + fp) / n)
    p_no = ((tn + fp) / n) * ((tn + fn) / n)
    pe = p_yes + p_no
    kappa = low = high = None
    if pe < 1.0:
        kappa = (po - pe) / (1.0 - pe)
        se = math.sqrt(max(po * (1.0 - po), 0.0) / (n * (1.0 - pe) ** 2))
        low = max(-1.0, kappa - _Z95 * se)
        high = min(1.0, kappa + _Z95 * se)
        kappa, low, high = round(kappa, 4), round(low, 4), round(high, 4)
    return Agreement(
        n=n,
        agreed=tp + tn,
        accuracy=round(po, 4),
        kappa=kappa,
        kappa_low=low,
        kappa_high=high,
        confusion={"tp": tp, "fp": fp, "fn": fn, "tn": tn},
    )


class JudgeFit(StrictModel):
    """Whether a gate may use the judge, and why (one line for the report)."""

    fit: bool = Field(description="The judge reached the suite's minimum agreement.")
    reason: str = Field(description="One line: the figures and the minimum.")


def judge_fit(
    route: str,
    result: Agreement,
    min_kappa: float,
    *,
    min_examples: int = DEFAULT_MIN_EXAMPLES,
    unreadable: int = 0,
) -> JudgeFit:
    """May a gate use ``route``'s verdicts? Fit when at least ``min_examples`` examples
    were judged and kappa (the point estimate) reaches ``min_kappa``. ``unreadable``:
    answers not in the judge's format, already counted in ``result`` as wrong."""
    figures = (
        f"kappa {result.kappa} (95% CI {result.kappa_low}..{result.kappa_high}), "
        f"accuracy {result.accuracy:.2f} on {result.n} labelled examples"
    )
    if unreadable:
        figures += f", {unreadable} of {result.n} answers unreadable (counted as wrong)"
    if result.n < min_examples:
        return JudgeFit(
            fit=False,
            reason=f"judge {route} is not calibrated: {result.n} labelled examples, the suite "
            f"needs at least {min_examples}",
        )
    if result.kappa is None:
        return JudgeFit(
            fit=False,
            reason=f"judge {route}: kappa is undefined (every label and verdict the same); "
            "add examples of both kinds",
        )
    if result.kappa < min_kappa:
        return JudgeFit(
            fit=False,
            reason=f"judge {route} is unfit: {figures}; the suite needs kappa >= {min_kappa}",
        )
    return JudgeFit(fit=True, reason=f"judge {route} is fit: {figures} (minimum {min_kappa})")


class CalibrationReport(StrictModel):
    """What ``skillci judge calibrate`` prints (``--json``)."""

    schema_version: int = Field(default=CALIBRATION_SCHEMA_VERSION, description="Version.")
    judge: str = Field(description="The judge's model route.")
    examples_file: str = Field(description="The labelled examples judged.")
    suite: str | None = Field(default=None, description="The suite that declared them.")
    agreement: Agreement = Field(description="Accuracy and kappa.")
    min_kappa: float | None = Field(description="The suite's minimum (None: none declared).")
    fit: JudgeFit | None = Field(description="judge_fit against the minimum, when declared.")
    disagreements: list[str] = Field(description="Ids of examples the judge got wrong.")
    unreadable: list[str] = Field(
        default_factory=list,
        description="Ids of examples whose answer was not the judge's JSON (counted as wrong, "
        "also listed in disagreements).",
    )
    usage: dict[str, Any] = Field(description="The judge's calls (JudgeUsage).")


SAVED_MODELS: dict[str, type[BaseModel]] = {
    "calibration-set": CalibrationSet,
    "calibration-report": CalibrationReport,
}

__all__ = [
    "CALIBRATION_SCHEMA_VERSION",
    "DEFAULT_MIN_EXAMPLES",
    "SAVED_MODELS",
    "Agreement",
    "CalibrationExample",
    "CalibrationReport",
    "CalibrationSet",
    "JudgeFit",
    "JudgeRequirement",
    "agreement",
    "judge_fit",
]
