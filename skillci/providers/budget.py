"""Budgets on model use: tokens, dollars and calls, per run and per command.

A :class:`BudgetMeter` counts what was spent and says, before the next call, whether the
budget allows it. Meters nest: a per-run meter can have a per-command parent, and charging
the child charges the parent. Running out is not a crash: :meth:`BudgetMeter.check` raises
:class:`skillci.errors.BudgetExceeded` whose message is the recorded stop reason, and the
agent loop turns it into ``stop_reason="budget: ..."`` in the run record.
"""

from __future__ import annotations

import threading

from pydantic import BaseModel, ConfigDict, Field

from skillci.errors import BudgetExceeded


class Budget(BaseModel):
    """Limits; ``None`` means unlimited."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_tokens: int | None = Field(default=None, ge=0, description="Prompt + completion tokens.")
    max_input_tokens: int | None = Field(default=None, ge=0, description="Prompt tokens.")
    max_output_tokens: int | None = Field(default=None, ge=0, description="Completion tokens.")
    max_usd: float | None = Field(default=None, ge=0, description="Dollars.")
    max_calls: int | None = Field(default=None, ge=0, description="Model calls (cache hits free).")


class Spend(BaseModel):
    """What was spent so far."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = Field(default=0, ge=0, description="Prompt tokens.")
    output_tokens: int = Field(default=0, ge=0, description="Completion tokens.")
    usd: float = Field(default=0.0, ge=0, description="Dollars (0 when prices are unknown).")
    calls: int = Field(default=0, ge=0, description="Model calls that reached a provider.")
    cached_calls: int = Field(default=0, ge=0, description="Calls answered by the cache.")

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


class BudgetMeter:
    """Thread-safe spend counter against a :class:`Budget`, optionally nested."""

    def __init__(
        self, budget: Budget | None = None, *, name: str = "run", parent: BudgetMeter | None = None
    ) -> None:
        self.budget = budget or Budget()
        self.name = name
        self.parent = parent
        self.spent = Spend()
        self._lock = threading.Lock()

    def exceeded(self) -> str | None:
        """The reason this meter (or a parent) is out of budget, or ``None``."""
        b, s = self.budget, self.spent
        reason = None
        if b.max_calls is not None and s.calls >= b.max_calls:
            reason = f"{self.name} budget: {s.calls} model calls reached max_calls={b.max_calls}"
        elif b.max_tokens is not None and s.tokens >= b.max_tokens:
            reason = f"{self.name} budget: {s.tokens} tokens reached max_tokens={b.max_tokens}"
        elif b.max_input_tokens is not None and s.input_tokens >= b.max_input_tokens:
            reason = f"{self.name} budget: {s.input_tokens} prompt tokens reached max_input_tokens={b.max_input_tokens}"
        elif b.max_output_tokens is not None and s.output_tokens >= b.max_output_tokens:
            reason = f"{self.name} budget: {s.output_tokens} completion tokens reached max_output_tokens={b.max_output_tokens}"
        elif b.max_usd is not None and s.usd >= b.max_usd:
            reason = f"{self.name} budget: ${s.usd:.4f} reached max_usd=${b.max_usd:.4f}"
        if reason is None and self.parent is not None:
            return self.parent.exceeded()
        return reason

    def check(self) -> None:
        """Raise :class:`BudgetExceeded` (message = stop reason) if no further call fits."""
        reason = self.exceeded()
        if reason is not None:
            raise BudgetExceeded(reason)

    def charge(
        self,
        *,
        input_tokens: int = 0,
        output_tokens: int = 0,
        usd: float = 0.0,
        cached: bool = False,
        calls: int = 1,
    ) -> None:
        """Count ``calls`` model calls (default one) and what they used."""
        with self._lock:
            if cached:
                self.spent.cached_calls += calls
            else:
                self.spent.calls += calls
                self.spent.input_tokens += input_tokens
                self.spent.output_tokens += output_tokens
                self.spent.usd += usd
        if self.parent is not None:
            self.parent.charge(
                input_tokens=input_tokens,
                output_tokens=output_tokens,
                usd=usd,
                cached=cached,
                calls=calls,
            )

    def child(self, budget: Budget | None = None, *, name: str = "run") -> BudgetMeter:
        return BudgetMeter(budget, name=name, parent=self)


__all__ = ["Budget", "BudgetMeter", "Spend"]
