from __future__ import annotations

import pytest

from skillci.errors import BudgetExceeded
from skillci.providers.budget import Budget, BudgetMeter


def test_calls_budget_stops_with_a_reason() -> None:
    m = BudgetMeter(Budget(max_calls=2))
    m.check()
    m.charge(input_tokens=10, output_tokens=2)
    m.charge(input_tokens=10, output_tokens=2)
    with pytest.raises(BudgetExceeded, match="2 model calls reached max_calls=2"):
        m.check()


def test_cached_calls_are_free() -> None:
    m = BudgetMeter(Budget(max_calls=1, max_tokens=5))
    for _ in range(3):
        m.charge(input_tokens=100, cached=True)
    assert m.exceeded() is None
    assert m.spent.cached_calls == 3


@pytest.mark.parametrize(
    ("budget", "charge", "needle"),
    [
        (Budget(max_tokens=100), {"input_tokens": 60, "output_tokens": 40}, "max_tokens=100"),
        (Budget(max_input_tokens=50), {"input_tokens": 50}, "max_input_tokens=50"),
        (Budget(max_output_tokens=5), {"output_tokens": 9}, "max_output_tokens=5"),
        (Budget(max_usd=0.01), {"usd": 0.02}, "max_usd=$0.0100"),
    ],
)
def test_each_limit(budget: Budget, charge: dict[str, float], needle: str) -> None:
    m = BudgetMeter(budget)
    m.charge(**charge)  # type: ignore[arg-type]
    reason = m.exceeded()
    assert reason is not None and needle in reason


def test_child_charges_parent_and_parent_limit_stops_child() -> None:
    command = BudgetMeter(Budget(max_usd=1.0), name="command")
    run_a = command.child(Budget(max_calls=100))
    run_b = command.child()
    run_a.charge(usd=0.6)
    assert run_b.exceeded() is None
    run_b.charge(usd=0.5)
    assert command.spent.usd == pytest.approx(1.1)
    reason = run_a.exceeded()
    assert reason is not None and reason.startswith("command budget")
