"""The gate's paired evidence: which base/head trial pairs are independent observations, and
the one test that decides whether head is better (pure).

Design: docs/design/290-one-decision-procedure.md. Trial ``r`` of a task on base is paired
with trial ``r`` of the same task on head. A pair is *counted* only when both of its trials
are new observations: a trial whose actions (its :attr:`TrialOutcome.fingerprint`) repeat an
earlier trial of the same task on the same side is a copy, not evidence — deterministic
decoding and cached calls give k identical trials, and counting them k times turned one
coin flip per task into k "independent" wins. Trials without a fingerprint (imported
records with no trajectory) are taken as independent.

The counted pairs feed :class:`~skillci.gate.sequential.SequentialTest` round by round —
the flow does it online to stop early, the verdict replays the same rounds
(:func:`paired_test`) so both see one decision. Its outcome, not a pooled difference,
is the improvement check; :func:`improvement_evidence` maps it to pass / fail / not
measured with the reason.

**Scored rewards** (docs/design/365). A trial pairs on its pass/fail, never on its reward:
a graded task's weighted assertions and rubrics give a reward in [0, 1] and the task's
declared pass mark (``[reward] rule = "threshold"``'s ``threshold``; 1.0 for ``all`` and
``weighted``) turns it into :attr:`TrialOutcome.passed` once, when the trial is graded. A
head trial whose reward rises but stays under the mark is not a win (the pair is
concordant); a base trial whose verifier passed but whose graded reward is under the mark
is a failed trial. The mean reward is reported beside the pass rate, not tested.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Literal

from pydantic import Field

from skillci.basemodels import FrozenModel
from skillci.gate.metrics import TrialOutcome
from skillci.gate.sequential import Decision, SequentialConfig, SequentialTest, truncation_threshold

Status = Literal["pass", "fail", "not_measured", "not_applicable"]


class Pairing:
    """Pairs base and head trials by (task, repeat) and drops copies (see module doc).

    Feed trials with :meth:`add` in any order; :meth:`take` returns the pairs completed
    since the last call as ``(head_wins, base_wins, concordant, trials)``.
    """

    def __init__(self, exclude: Iterable[str] = ()) -> None:
        self._exclude = frozenset(exclude)
        self._seen: dict[tuple[str, str], set[str]] = {}
        self._pending: dict[tuple[str, int], dict[str, tuple[bool, bool]]] = {}
        self._new = [0, 0, 0, 0]
        self.copies = 0
        """Trials that repeated an earlier trial's actions (not counted)."""
        self.counted: dict[str, int] = {}
        """Task -> pairs counted."""

    def _is_new(self, o: TrialOutcome) -> bool:
        if o.fingerprint is None:
            return True
        seen = self._seen.setdefault((o.task_id, o.side), set())
        if o.fingerprint in seen:
            self.copies += 1
            return False
        seen.add(o.fingerprint)
        return True

    def add(self, o: TrialOutcome) -> None:
        if o.side not in ("base", "head") or o.task_id in self._exclude:
            return
        self._new[3] += 1
        slot = self._pending.setdefault((o.task_id, o.repeat), {})
        slot[o.side] = (o.passed, self._is_new(o))
        if len(slot) < 2:
            return
        del self._pending[(o.task_id, o.repeat)]
        (b, b_new), (h, h_new) = slot["base"], slot["head"]
        if not (b_new and h_new):
            return
        self.counted[o.task_id] = self.counted.get(o.task_id, 0) + 1
        self._new[0 if h and not b else 1 if b and not h else 2] += 1

    def take(self) -> tuple[int, int, int, int]:
        out = (self._new[0], self._new[1], self._new[2], self._new[3])
        self._new = [0, 0, 0, 0]
        return out


class PairedEvidence(FrozenModel):
    """What the paired test saw in one suite and what it concluded."""

    decision: Decision = Field(description="The sequential test's state after every round.")
    pairs: int = Field(description="Base/head pairs counted (independent observations).")
    copies: int = Field(description="Trials left out: they repeated an earlier trial's actions.")
    tasks: int = Field(description="Tasks with at least one counted pair.")
    effective_repeats: int = Field(
        description="Fewest counted pairs of a task with trials (0: a task had none)."
    )
    attainable: bool = Field(
        description="Whether the rounds observed could have shown an improvement at all "
        "(enough discordant pairs for the exact threshold)."
    )
    needed: int | None = Field(
        default=None, description="Head wins the exact test needed (at truncation)."
    )


class OnlineTest:
    """The sequential test over counted pairs, fed one round of trials at a time (the
    gate flow's early stop). :func:`paired_test` replays the same rounds for the verdict."""

    def __init__(self, config: SequentialConfig, *, exclude: Iterable[str] = ()) -> None:
        """``exclude``: tasks left out of the pairs (quarantined by the manifest)."""
        self.pairing = Pairing(exclude)
        self.test = SequentialTest(config)

    def update(self, outcomes: Iterable[TrialOutcome]) -> Decision:
        for o in outcomes:
            self.pairing.add(o)
        wins, losses, concordant, trials = self.pairing.take()
        return self.test.observe(wins, losses, concordant, trials=trials)

    def evidence(self, tasks: Iterable[str] = ()) -> PairedEvidence:
        """Conclude. A test still undecided when the rounds ran out (fewer rounds than
        planned, or sequential stopping off) is decided by the exact threshold at the
        rounds observed — running out of data is not data-dependent, so the level holds."""
        d = self.test.decision
        config = self.test.config
        needed = d.final_threshold
        discordant = d.head_wins + d.base_wins
        if d.outcome == "continue" and discordant:
            p1 = d.p1 or config.auto_p1(discordant)
            c, _ = truncation_threshold(self.test.discordant_per_round, config, p1)
            needed = c
            outcome = "accept" if d.head_wins >= c else "reject"
            d = d.model_copy(
                update={
                    "outcome": outcome,
                    "final_threshold": c,
                    "reason": f"{d.rounds} round(s) observed; head won {d.head_wins} of "
                    f"{discordant} discordant pairs ({'>=' if outcome == 'accept' else '<'} "
                    f"{c} needed at level {config.alpha})",
                }
            )
        if needed is not None:
            attainable = needed <= discordant
        else:
            attainable = discordant > 0
        counted = self.pairing.counted
        names = set(tasks) | set(counted)
        return PairedEvidence(
            decision=d,
            pairs=sum(counted.values()),
            copies=self.pairing.copies,
            tasks=len(counted),
            effective_repeats=min((counted.get(t, 0) for t in names), default=0),
            attainable=attainable,
            needed=needed,
        )


def paired_test(
    outcomes: Sequence[TrialOutcome],
    config: SequentialConfig,
    *,
    tasks: Iterable[str] = (),
    exclude: Iterable[str] = (),
) -> PairedEvidence:
    """Replay the rounds of ``outcomes`` (by repeat index) through the sequential test, as
    the flow feeds them, and conclude (:meth:`OnlineTest.evidence`)."""
    exclude = frozenset(exclude)
    online = OnlineTest(config, exclude=exclude)
    by_round: dict[int, list[TrialOutcome]] = {}
    for o in outcomes:
        if o.side in ("base", "head"):
            by_round.setdefault(o.repeat, []).append(o)
    for r in sorted(by_round):
        if online.update(by_round[r]).outcome != "continue":
            break
    names = {*tasks, *(o.task_id for o in outcomes)} - exclude
    return online.evidence(names)


class Finding(FrozenModel):
    """A check's outcome on evidence: its status and the one line that says why."""

    status: Status
    value: str
    detail: str = ""


def improvement_evidence(ev: PairedEvidence, gain: float | None, min_gain: float) -> Finding:
    """The improvement check from the paired test (never from a pooled difference alone).

    - pass: the test shows head better at its level AND the pass-rate gain reaches
      ``min_gain``;
    - fail: the test concluded no improvement (early reject, or head no better than base
      in the discordant pairs), or the shown gain is below ``min_gain``;
    - not_measured: no discordant pair (0%→0%, 100%→100%: nothing tells the sides apart),
      too few discordant pairs for the test to ever accept, or a lean toward head that
      the rounds could not make significant.
    """
    d = ev.decision
    disc = d.head_wins + d.base_wins
    g = "n/a" if gain is None else f"{gain:+.1%}"
    value = f"head won {d.head_wins} of {disc} discordant pair(s) ({ev.pairs} counted), gain {g}"
    copies = f"; {ev.copies} repeated trial(s) counted once" if ev.copies else ""
    if ev.pairs == 0:
        return Finding(
            status="not_measured",
            value=value,
            detail="no base/head pair was measured" + copies,
        )
    if disc == 0:
        return Finding(
            status="not_measured",
            value=value,
            detail="no discordant outcome: both sides passed and failed the same tasks, "
            "so the suite cannot tell head from base" + copies,
        )
    if d.outcome == "accept":
        if gain is not None and gain + 1e-12 >= min_gain:
            return Finding(status="pass", value=value, detail=d.reason + copies)
        return Finding(
            status="fail",
            value=value,
            detail=f"improvement shown but the gain {g} is below min_validation_gain "
            f"{min_gain:.1%}",
        )
    if not ev.attainable:
        return Finding(
            status="not_measured",
            value=value,
            detail=f"{disc} discordant pair(s) cannot show an improvement at this level "
            f"(at least {ev.needed} head wins needed): add tasks, or repeats with a "
            "non-deterministic student" + copies,
        )
    if d.head_wins <= d.base_wins or d.final_threshold is None:
        return Finding(status="fail", value=value, detail=d.reason + copies)
    return Finding(
        status="not_measured",
        value=value,
        detail=f"leans toward head but not significant ({d.reason}): more repeats or "
        "tasks can decide" + copies,
    )


__all__ = [
    "Finding",
    "OnlineTest",
    "PairedEvidence",
    "Pairing",
    "Status",
    "improvement_evidence",
    "paired_test",
]
