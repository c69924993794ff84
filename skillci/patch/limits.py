"""Patch limits: how big one patch may be (manifest ``patch_limits``, the seed's defaults).

Counted on the applied result, not on what the ops claim:

- ``max_new_rules``: rule ids present after and not before (a split into A1, A2 of A counts
  2; a merge into a fresh id counts 1).
- ``max_files``: files whose bytes differ (added, changed or removed).
- ``max_added_tokens``: growth of the rendered bootstrap *and*, separately, of everything
  loadable (``render(pkg).bootstrap_tokens`` / ``.total_tokens``, the skill's tokenizer).
- ``failure_classes``: exactly one primary failure class per patch.
- ``token_budget.*``: the patch may not push the skill over its manifest token budget
  (only when it grows the count; an already-over skill is lint's problem).
- ``token_growth``: the release gate's rule on the bootstrap, :func:`token_growth` — the one
  function both ``propose`` and the gate call (docs/design/321): growth within
  ``release_gate.max_token_growth`` *or* at most ``patch_limits.max_added_tokens`` added.

Limits come from the package *before* the patch, so a patch cannot loosen its own bounds.
"""

from __future__ import annotations

from collections.abc import Collection

from pydantic import BaseModel, Field

from skillci.patch.apply import Applied
from skillci.skill.render import render

LIMITS_SCHEMA_VERSION = 1


class LimitResult(BaseModel):
    """One limit, its allowed value and what the patch did."""

    limit: str = Field(description="Limit name, e.g. max_new_rules.")
    allowed: int = Field(description="Allowed maximum (for failure_classes: exactly this).")
    actual: int = Field(description="What the patch does.")
    ok: bool

    @property
    def over_by(self) -> int:
        return max(0, self.actual - self.allowed)

    def message(self) -> str:
        if self.limit == "failure_classes":
            return f"failure_classes: the patch names {self.actual}; exactly 1 is allowed"
        return f"{self.limit}: {self.actual} > {self.allowed} (over by {self.over_by})"


class TokenCounts(BaseModel):
    """Rendered token counts of the skill before and after the patch."""

    bootstrap_before: int
    bootstrap_after: int
    total_before: int
    total_after: int

    @property
    def bootstrap_delta(self) -> int:
        return self.bootstrap_after - self.bootstrap_before

    @property
    def total_delta(self) -> int:
        return self.total_after - self.total_before


class LimitReport(BaseModel):
    """Every limit checked for one patch."""

    schema_version: int = LIMITS_SCHEMA_VERSION
    results: list[LimitResult]
    tokens: TokenCounts
    new_rules: list[str] = Field(description="Rule ids the patch adds.")
    touched_files: list[str] = Field(description="Files whose bytes the patch changes.")

    @property
    def ok(self) -> bool:
        return all(r.ok for r in self.results)

    @property
    def violations(self) -> list[LimitResult]:
        return [r for r in self.results if not r.ok]


class TokenGrowth(BaseModel):
    """The release gate's token-growth rule applied to one before/after pair."""

    before: int = Field(description="Bootstrap tokens before.")
    after: int = Field(description="Bootstrap tokens after.")
    max_growth: float = Field(description="release_gate.max_token_growth (relative).")
    max_added: int = Field(description="patch_limits.max_added_tokens (absolute).")

    @property
    def added(self) -> int:
        return self.after - self.before

    @property
    def growth(self) -> float:
        """Relative growth; a skill growing from nothing grows by +inf (0.0 when unchanged)."""
        if self.before:
            return self.added / self.before
        return 0.0 if self.added <= 0 else float("inf")

    @property
    def passed(self) -> bool:
        """Growth within the relative bound, or no more added than one patch may add: relative
        growth alone would refuse any rule on a bootstrap of a few hundred tokens."""
        return self.growth <= self.max_growth or self.added <= self.max_added

    @property
    def value(self) -> str:
        return f"{self.before} -> {self.after} ({self.growth:+.1%}, {self.added:+d} tokens)"

    @property
    def threshold(self) -> str:
        return f"<= {self.max_growth:+.0%} or <= +{self.max_added} tokens"


def token_growth(before: int, after: int, *, max_growth: float, max_added: int) -> TokenGrowth:
    """The token-growth rule of the release gate and of ``propose`` (one source of truth):
    pass when ``(after - before) / before <= max_growth`` OR ``after - before <= max_added``.

    Callers pass ``manifest.release_gate.max_token_growth`` and
    ``manifest.patch_limits.max_added_tokens`` of the *base* package."""
    return TokenGrowth(before=before, after=after, max_growth=max_growth, max_added=max_added)


def token_counts(applied: Applied) -> TokenCounts:
    before, after = render(applied.before), render(applied.after)
    return TokenCounts(
        bootstrap_before=before.bootstrap_tokens,
        bootstrap_after=after.bootstrap_tokens,
        total_before=before.total_tokens,
        total_after=after.total_tokens,
    )


def check_limits(applied: Applied) -> LimitReport:
    """Measure ``applied`` against the before-package's patch limits and token budget."""
    manifest = applied.before.manifest
    lim = manifest.patch_limits
    budget = manifest.token_budget
    tokens = token_counts(applied)
    new_rules = applied.new_rule_ids
    touched = applied.changed_files
    classes = len(applied.patch.failure_classes)

    def res(name: str, allowed: int, actual: int) -> LimitResult:
        return LimitResult(limit=name, allowed=allowed, actual=actual, ok=actual <= allowed)

    results = [
        res("max_new_rules", lim.max_new_rules, len(new_rules)),
        res("max_files", lim.max_files, len(touched)),
        res("max_added_tokens.bootstrap", lim.max_added_tokens, tokens.bootstrap_delta),
        res("max_added_tokens.total", lim.max_added_tokens, tokens.total_delta),
        LimitResult(limit="failure_classes", allowed=1, actual=classes, ok=classes == 1),
    ]
    tg = token_growth(
        tokens.bootstrap_before,
        tokens.bootstrap_after,
        max_growth=manifest.release_gate.max_token_growth,
        max_added=lim.max_added_tokens,
    )
    results.append(
        LimitResult(
            limit="token_growth",
            allowed=max(lim.max_added_tokens, int(tg.before * tg.max_growth)),
            actual=tg.added,
            ok=tg.passed,
        )
    )
    if tokens.bootstrap_delta > 0:
        results.append(res("token_budget.bootstrap", budget.bootstrap, tokens.bootstrap_after))
    if tokens.total_delta > 0:
        results.append(res("token_budget.max_total", budget.max_total, tokens.total_after))
    return LimitReport(results=results, tokens=tokens, new_rules=new_rules, touched_files=touched)


#: The patch-size limits (the bench's no-patch-limits ablation lifts them).
SIZE_LIMITS = frozenset(
    {
        "max_new_rules",
        "max_files",
        "max_added_tokens.bootstrap",
        "max_added_tokens.total",
        "failure_classes",
    }
)
#: The token-budget limits (the bench's no-token-budget ablation lifts them).
BUDGET_LIMITS = frozenset({"token_budget.bootstrap", "token_budget.max_total", "token_growth"})


def lift(report: LimitReport, names: Collection[str]) -> LimitReport:
    """``report`` with the limits in ``names`` measured but passed, marked ``(lifted)``."""
    if not names:
        return report
    results = [
        r.model_copy(update={"limit": f"{r.limit} (lifted)", "ok": True}) if r.limit in names else r
        for r in report.results
    ]
    return report.model_copy(update={"results": results})
