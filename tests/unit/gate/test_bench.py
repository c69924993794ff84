"""The bench table's numbers come from the trials (skillci.gate.bench)."""

from __future__ import annotations

import math

import pytest

from skillci.gate.bench import BenchRow, measured_row, per_task_mean
from skillci.gate.metrics import TrialOutcome
from skillci.present.bench import markdown_table


def trials(passes: dict[str, list[bool]], tokens: int = 100) -> list[TrialOutcome]:
    return [
        TrialOutcome(
            task_id=t,
            side="head",
            repeat=i,
            reward=float(ok),
            passed=ok,
            input_tokens=tokens,
            usd=0.01,
        )
        for t, runs in passes.items()
        for i, ok in enumerate(runs)
    ]


def test_per_task_mean_weights_tasks_equally_with_a_clustered_interval() -> None:
    e = per_task_mean({"a": [1.0, 1.0, 1.0], "b": [0.0]})
    assert e is not None and e.value == 0.5
    assert e.ci is not None
    se = math.sqrt(((1 - 0.5) ** 2 + (0 - 0.5) ** 2) / 1 / 2)
    assert e.ci.high - e.value == pytest.approx(1.959963984540054 * se)
    assert per_task_mean({"a": [3.0]}) == per_task_mean({"a": [3.0]})
    one = per_task_mean({"a": [3.0]})
    assert one is not None and one.ci is None
    assert per_task_mean({}) is None


def test_measured_row_gcr_regression_and_cost() -> None:
    no_skill = trials({"a": [False], "b": [False], "c": [True], "d": [True]}, tokens=10)
    teacher = trials({"a": [True], "b": [True], "c": [True], "d": [True]})
    original = trials({"a": [True], "b": [False], "c": [True], "d": [True]})
    arm = trials({"a": [True], "b": [True], "c": [False], "d": [True]}, tokens=300)
    row = measured_row(
        arm="x",
        kind="ablation",
        title="t",
        outcomes=arm,
        no_skill=no_skill,
        teacher=teacher,
        original=original,
    )
    assert (row.tasks, row.trials) == (4, 4)
    assert row.success is not None and row.success.value == 0.75
    # GCR = (0.75 - 0.5) / (1.0 - 0.5)
    assert row.gcr is not None and row.gcr.value == pytest.approx(0.5)
    # c passes with the original skill and fails with the arm: 1 of 3
    assert row.regression is not None and row.regression.value == pytest.approx(1 / 3)
    assert row.tokens is not None and row.tokens.value == 300.0
    assert row.usd is not None and row.usd.value == pytest.approx(0.01)


def test_not_implemented_rows_carry_no_numbers_in_the_table() -> None:
    missing = BenchRow(arm="m", kind="baseline", title="t", status="not_implemented", reason="r")
    line = markdown_table([missing]).splitlines()[-1]
    assert line == "| baseline | m: t | not implemented: r | – | – | – | – | – | – |"


def test_a_generator_that_produced_no_skill_is_a_failed_row_without_numbers() -> None:
    refused = BenchRow(
        arm="teacher-only",
        kind="baseline",
        title="t",
        status="failed",
        reason="the patch guard said reject: injection (...)",
    )
    line = markdown_table([refused]).splitlines()[-1]
    assert line == (
        "| baseline | teacher-only: t | failed: the patch guard said reject: injection (...) "
        "| – | – | – | – | – | – |"
    )
