"""Sequential gate decision: run trials in rounds, stop once the answer is clear (pure).

The test is a truncated Wald SPRT on *discordant trial pairs*. Each round runs one more
repeat of the selected tasks on base and head; trial r of a task on base is paired with
trial r of the same task on head. A pair is discordant when exactly one side passed. Under
the sharp null "the patch changes nothing", which side won a discordant pair is a fair coin
on every task whatever its difficulty, so the signs are exchangeable Bernoulli(p0) draws.

- Early stop: Wald's boundaries for H0: p = p0 vs H1: p = p1 (p = P(head won | pair
  discordant)), designed at (``alpha * early_alpha_share``, ``beta``).
- ``p1`` (the smallest improvement worth detecting) is set, or chosen automatically at the
  first round with a discordant pair: the critical effect of the full budget, i.e. the
  head-win share at which a fixed one-sided test at level ``alpha`` on ``max_rounds``
  rounds (at the discordance rate seen so far) would be just significant. It depends on
  how many pairs are discordant, never on who won them, so the level under H0 holds.
- Truncation: after ``max_rounds`` rounds the test decides with an exact threshold on the
  head-win count, computed by dynamic programming over the rounds actually observed so
  that P(accept | H0) <= ``alpha`` overall, early acceptances included (exact level
  conditional on the per-round discordant counts).

``accept`` means head is better than base (H1); ``reject`` means it was not shown to be
(H0 kept: no effect or a regression). Why this design and what it saves:
docs/design/041-sequential-gate.md; benchmarks/sequential_gate.py measures it.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from statistics import NormalDist
from typing import Literal, Self

from pydantic import BaseModel, ConfigDict, Field, model_validator

from skillci.errors import InvalidInputError
from skillci.gate.metrics import TrialOutcome
from skillci.gate.stats import binom_logpmf

Outcome = Literal["accept", "reject", "continue"]

#: How reports word an outcome: the test's "reject" keeps H0 (no improvement *shown*), which
#: is not the gate's verdict — a gate can accept on a same-instance repair regardless.
OUTCOME_TEXT: dict[str, str] = {
    "accept": "improvement shown",
    "reject": "improvement not shown",
    "continue": "undecided",
}


class SequentialConfig(BaseModel):
    """Error rates and budget of the sequential test."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    alpha: float = Field(
        default=0.05, gt=0, lt=0.5, description="Max false-accept rate (exact under H0)."
    )
    beta: float = Field(
        default=0.30,
        gt=0,
        lt=0.5,
        description="Wald design false-reject rate at p1 (sets the early-reject boundary); "
        "the achieved rate is measured by benchmarks/sequential_gate.py.",
    )
    p0: float = Field(default=0.5, gt=0, lt=1, description="P(head wins | discordant) under H0.")
    p1: float | None = Field(
        default=None,
        gt=0,
        lt=1,
        description="P(head wins | discordant) under H1; None chooses it from the budget.",
    )
    early_alpha_share: float = Field(
        default=0.5,
        gt=0,
        le=1,
        description="Share of alpha the early-accept boundary is designed with; the rest "
        "is left to the exact decision at truncation.",
    )
    max_rounds: int = Field(default=5, ge=1, description="Rounds (repeats) at most.")
    min_rounds: int = Field(default=1, ge=1, description="Rounds before an early decision.")

    @model_validator(mode="after")
    def _check(self) -> Self:
        if self.p1 is not None and not self.p0 < self.p1:
            raise ValueError(f"p1 ({self.p1}) must be greater than p0 ({self.p0})")
        if self.min_rounds > self.max_rounds:
            raise ValueError("min_rounds must be <= max_rounds")
        return self

    def auto_p1(self, planned_pairs: float) -> float:
        """The critical effect of the planned budget: the head-win share at which a fixed
        one-sided test at level alpha on ``planned_pairs`` discordant pairs is just
        significant (normal approximation), kept in [p0 + 0.02, 0.95]."""
        z = NormalDist().inv_cdf(1.0 - self.alpha)
        p1 = self.p0 + z * math.sqrt(self.p0 * (1.0 - self.p0) / max(planned_pairs, 1.0))
        return min(max(p1, self.p0 + 0.02), 0.95)

    def steps(self, p1: float) -> tuple[float, float]:
        """LLR increments of a discordant pair won by head (> 0) and by base (< 0)."""
        return math.log(p1 / self.p0), math.log((1.0 - p1) / (1.0 - self.p0))

    @property
    def upper(self) -> float:
        a = self.alpha * self.early_alpha_share
        return math.log((1.0 - self.beta) / a)

    @property
    def lower(self) -> float:
        a = self.alpha * self.early_alpha_share
        return math.log(self.beta / (1.0 - a))


class Decision(BaseModel):
    """Where the sequential test stands after a round."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    outcome: Outcome = Field(description="accept (head better), reject, or continue.")
    reason: str = Field(description="One line a reviewer can read.")
    trials_used: int = Field(description="Base and head trials received so far.")
    rounds: int = Field(description="Rounds that completed at least one pair.")
    head_wins: int = Field(description="Discordant pairs where only head passed.")
    base_wins: int = Field(description="Discordant pairs where only base passed.")
    concordant: int = Field(description="Pairs where both passed or both failed.")
    p1: float | None = Field(description="The alternative in use; None until it is chosen.")
    llr: float = Field(description="Log-likelihood ratio H1:H0 of the discordant signs.")
    upper: float = Field(description="Early-accept boundary on the LLR.")
    lower: float = Field(description="Early-reject boundary on the LLR.")
    final_threshold: int | None = Field(
        default=None, description="At truncation: accept iff head_wins >= this."
    )
    rounds_saved: int = Field(default=0, description="max_rounds - rounds, once decided.")
    trials_saved_estimate: int = Field(
        default=0, description="rounds_saved times the mean trials per round so far."
    )


def truncation_threshold(
    discordant_per_round: list[int], config: SequentialConfig, p1: float
) -> tuple[int, float]:
    """Smallest head-win count ``c`` at the last round such that, under H0 and given the
    per-round discordant counts, P(early accept) + P(no early stop and wins >= c) <= alpha.

    Returns ``(c, p_early_accept)``; ``c = total + 1`` means "never accept".
    """
    up, dn = config.steps(p1)
    dist: dict[int, float] = {0: 1.0}
    total = 0
    early = 0.0
    last = len(discordant_per_round) - 1
    for r, n in enumerate(discordant_per_round):
        pmf = [math.exp(binom_logpmf(k, n, config.p0)) for k in range(n + 1)]
        new: dict[int, float] = {}
        for s, pr in dist.items():
            for k, q in enumerate(pmf):
                if q:
                    new[s + k] = new.get(s + k, 0.0) + pr * q
        total += n
        dist = new
        if r == last:
            break
        if r + 1 >= config.min_rounds:
            kept: dict[int, float] = {}
            for s, pr in dist.items():
                llr = s * up + (total - s) * dn
                if llr >= config.upper:
                    early += pr
                elif llr > config.lower:
                    kept[s] = pr
            dist = kept
    budget = config.alpha - early
    tail = 0.0
    c = total + 1
    for s in sorted(dist, reverse=True):
        if tail + dist[s] > budget * (1.0 + 1e-12):
            break
        tail += dist[s]
        c = s
    return c, early


class SequentialTest:
    """Feed it each round's outcomes; it says accept, reject or continue.

    Deterministic: the same rounds give the same decisions. After a final decision,
    further updates return that decision unchanged and ignore their trials.
    """

    def __init__(self, config: SequentialConfig | None = None) -> None:
        self.config = config or SequentialConfig()
        self._pending: dict[tuple[str, int], dict[str, bool]] = {}
        self._seen: set[tuple[str, str, int]] = set()
        self._per_round: list[int] = []
        self._trials = 0
        self._wins = 0
        self._losses = 0
        self._concordant = 0
        self._llr = 0.0
        self._p1 = self.config.p1
        self._final: Decision | None = None

    @property
    def discordant_per_round(self) -> list[int]:
        """Discordant pairs of each round that completed a pair, in order."""
        return list(self._per_round)

    @property
    def decision(self) -> Decision:
        """The current state, as a decision (``continue`` until decided)."""
        return self._final or self._make("continue", "no round observed yet")

    def update(self, round_outcomes: Iterable[TrialOutcome]) -> Decision:
        """Add one round of base/head trials; pair them by (task, repeat) and decide."""
        if self._final is not None:
            return self._final
        wins = losses = concordant = trials = 0
        for o in round_outcomes:
            if o.side not in ("base", "head"):
                raise InvalidInputError(
                    f"sequential test got a {o.side} trial for task {o.task_id!r}",
                    hint="pass only base and head trials to SequentialTest.update",
                )
            key = (o.side, o.task_id, o.repeat)
            if key in self._seen:
                raise InvalidInputError(
                    f"duplicate trial: task {o.task_id!r}, side {o.side}, repeat {o.repeat}",
                    hint="each (task, side, repeat) must be fed once",
                )
            self._seen.add(key)
            trials += 1
            slot = self._pending.setdefault((o.task_id, o.repeat), {})
            slot[o.side] = o.passed
            if len(slot) == 2:
                del self._pending[(o.task_id, o.repeat)]
                if slot["head"] and not slot["base"]:
                    wins += 1
                elif slot["base"] and not slot["head"]:
                    losses += 1
                else:
                    concordant += 1
        return self.observe(wins, losses, concordant, trials=trials)

    def observe(
        self, head_wins: int, base_wins: int, concordant: int = 0, *, trials: int | None = None
    ) -> Decision:
        """Add one round given as pair counts (what :meth:`update` computes).

        ``trials`` defaults to two per pair. A round with no completed pair does not count
        as a round and never decides.
        """
        if self._final is not None:
            return self._final
        if min(head_wins, base_wins, concordant) < 0:
            raise InvalidInputError("pair counts must be >= 0", hint="count pairs per round")
        pairs = head_wins + base_wins + concordant
        self._trials += 2 * pairs if trials is None else trials
        if pairs == 0:
            return self._make("continue", "no paired base/head trial yet")
        cfg = self.config
        self._wins += head_wins
        self._losses += base_wins
        self._concordant += concordant
        self._per_round.append(head_wins + base_wins)
        rounds = len(self._per_round)
        discordant = self._wins + self._losses
        if self._p1 is None and discordant:
            # Chosen from how many pairs are discordant, never from who won them.
            self._p1 = cfg.auto_p1(discordant / rounds * cfg.max_rounds)
        if self._p1 is not None:
            up, dn = cfg.steps(self._p1)
            self._llr += head_wins * up + base_wins * dn
        if rounds >= cfg.max_rounds:
            c, _ = truncation_threshold(self._per_round, cfg, self._p1 or cfg.auto_p1(1.0))
            if self._wins >= c:
                return self._decide(
                    "accept",
                    f"budget of {cfg.max_rounds} rounds reached; head won {self._wins} of "
                    f"{self._wins + self._losses} discordant pairs (>= {c}, exact level "
                    f"{cfg.alpha})",
                    threshold=c,
                )
            return self._decide(
                "reject",
                f"budget of {cfg.max_rounds} rounds reached; head won {self._wins} of "
                f"{self._wins + self._losses} discordant pairs (< {c} needed at level "
                f"{cfg.alpha})",
                threshold=c,
            )
        if rounds >= cfg.min_rounds:
            if self._llr >= cfg.upper:
                return self._decide(
                    "accept",
                    f"head better: LLR {self._llr:.2f} >= {cfg.upper:.2f} after {rounds} "
                    f"round(s) ({self._wins} head wins vs {self._losses} base wins)",
                )
            if self._llr <= cfg.lower:
                return self._decide(
                    "reject",
                    f"no improvement: LLR {self._llr:.2f} <= {cfg.lower:.2f} after {rounds} "
                    f"round(s) ({self._wins} head wins vs {self._losses} base wins)",
                )
        return self._make(
            "continue",
            f"LLR {self._llr:.2f} within ({cfg.lower:.2f}, {cfg.upper:.2f}) after {rounds} "
            f"of {cfg.max_rounds} rounds",
        )

    def _decide(self, outcome: Outcome, reason: str, *, threshold: int | None = None) -> Decision:
        rounds = len(self._per_round)
        saved = self.config.max_rounds - rounds
        self._final = self._make(
            outcome,
            reason,
            threshold=threshold,
            rounds_saved=saved,
            trials_saved=round(saved * self._trials / rounds) if rounds else 0,
        )
        return self._final

    def _make(
        self,
        outcome: Outcome,
        reason: str,
        *,
        threshold: int | None = None,
        rounds_saved: int = 0,
        trials_saved: int = 0,
    ) -> Decision:
        return Decision(
            outcome=outcome,
            reason=reason,
            trials_used=self._trials,
            rounds=len(self._per_round),
            head_wins=self._wins,
            base_wins=self._losses,
            concordant=self._concordant,
            p1=self._p1,
            llr=self._llr,
            upper=self.config.upper,
            lower=self.config.lower,
            final_threshold=threshold,
            rounds_saved=rounds_saved,
            trials_saved_estimate=trials_saved,
        )
