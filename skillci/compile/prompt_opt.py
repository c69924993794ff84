"""Generic prompt optimisation of a skill: seeded hill climbing over bounded text mutations.

The ``prompt-opt`` baseline of ``skillci bench`` (docs/design/246-bench-prompt-opt.md).
It knows nothing of trajectories, teachers or failure classes: it mutates the skill's
rule text (drop a step, swap two adjacent steps, drop an anti-pattern, move a step to
another rule, delete a rule), asks an injected ``score`` for the student's result on the
*training* suite, and keeps a mutation only when the score strictly improves (higher pass
rate; at equal pass rate, fewer tokens per trial). Every mutation is a bounded
:class:`~skillci.patch.models.Patch`, so apply, guard and lint treat it like any other.
Pure: the score callable does the running.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from skillci.patch.models import Author, DeleteRule, Patch, ReplaceRule
from skillci.skill.package import SkillPackage

DEFAULT_ITERATIONS = 3


@dataclass(frozen=True, order=True)
class Score:
    """The student's result on the training suite (ordered: better compares greater)."""

    pass_rate: float
    neg_tokens: float
    """Minus the mean tokens per trial (fewer is better at an equal pass rate)."""


@dataclass(frozen=True)
class Step:
    """One iteration of the climb."""

    iteration: int
    mutation: str
    score: Score | None
    accepted: bool
    note: str = ""


def _patch(op: ReplaceRule | DeleteRule, what: str) -> Patch:
    return Patch(
        failure_class="bench_baseline",
        rationale=f"prompt-opt mutation: {what}",
        author=Author(compiler="prompt-opt"),
        ops=[op],
    ).with_id()


def mutations(pkg: SkillPackage) -> list[tuple[str, Patch]]:
    """Every bounded mutation of ``pkg``'s rules, in a stable order (description, patch)."""
    out: list[tuple[str, Patch]] = []
    rules = [lr.rule for lr in pkg.rules]
    for r in rules:
        steps = r.instruction.steps
        for i in range(len(steps)):
            if len(steps) > 1:
                rest = steps[:i] + steps[i + 1 :]
                new = r.model_copy(
                    update={"instruction": r.instruction.model_copy(update={"steps": rest})}
                )
                what = f"drop step {i + 1} of {r.id}"
                out.append((what, _patch(ReplaceRule(rule_id=r.id, rule=new, reason=what), what)))
            if i + 1 < len(steps):
                swapped = [*steps[:i], steps[i + 1], steps[i], *steps[i + 2 :]]
                new = r.model_copy(
                    update={"instruction": r.instruction.model_copy(update={"steps": swapped})}
                )
                what = f"swap steps {i + 1} and {i + 2} of {r.id}"
                out.append((what, _patch(ReplaceRule(rule_id=r.id, rule=new, reason=what), what)))
        for j in range(len(r.anti_patterns)):
            anti = r.anti_patterns[:j] + r.anti_patterns[j + 1 :]
            new = r.model_copy(update={"anti_patterns": anti})
            what = f"drop anti-pattern {j + 1} of {r.id}"
            out.append((what, _patch(ReplaceRule(rule_id=r.id, rule=new, reason=what), what)))
        if len(rules) > 1:
            what = f"delete rule {r.id}"
            out.append((what, _patch(DeleteRule(rule_id=r.id, reason=what), what)))
    return out


Land = Callable[[SkillPackage, Patch], tuple[SkillPackage | None, str]]
"""Apply a patch through guard and lint: (the package, "") or (None, why refused)."""


def hill_climb(
    pkg: SkillPackage,
    score: Callable[[SkillPackage], Score],
    land: Land,
    *,
    iterations: int = DEFAULT_ITERATIONS,
    seed: int = 0,
) -> tuple[SkillPackage, Score, list[Step]]:
    """The best package found in ``iterations`` seeded mutations, its score, the history."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible search, not a secret
    best, best_score = pkg, score(pkg)
    history = [Step(0, "the skill as given", best_score, True)]
    for it in range(1, iterations + 1):
        options = mutations(best)
        if not options:
            history.append(Step(it, "none", None, False, "no mutation applies"))
            break
        what, patch = options[rng.randrange(len(options))]
        cand, why = land(best, patch)
        if cand is None:
            history.append(Step(it, what, None, False, f"refused: {why}"))
            continue
        s = score(cand)
        better = s > best_score
        history.append(Step(it, what, s, better))
        if better:
            best, best_score = cand, s
    return best, best_score, history


__all__ = ["DEFAULT_ITERATIONS", "Land", "Score", "Step", "hill_climb", "mutations"]
