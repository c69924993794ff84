"""Hill climbing over bounded rule-text mutations (skillci.compile.prompt_opt)."""

from __future__ import annotations

from skillci.compile.baselines import bare_package, rule_patch
from skillci.compile.prompt_opt import Score, hill_climb, mutations
from skillci.patch.apply import apply
from skillci.patch.models import Patch
from skillci.skill.package import SkillPackage
from tests.unit.skill.helpers import bundled

NEEDED = "report_success_only_after_the_target_test_exits_0"


def steps(pkg: SkillPackage) -> list[str]:
    return [s for lr in pkg.rules for s in lr.rule.instruction.steps]


def score(pkg: SkillPackage) -> Score:
    """A stand-in for the student: passes while NEEDED is in the skill; reads every step."""
    return Score(1.0 if NEEDED in steps(pkg) else 0.5, -float(len(" ".join(steps(pkg)))))


def land(pkg: SkillPackage, patch: Patch) -> tuple[SkillPackage | None, str]:
    return apply(pkg, patch), ""


def test_every_mutation_is_a_bounded_single_op_patch_that_applies() -> None:
    pkg = bundled()
    muts = mutations(pkg)
    assert len(muts) > 20 and len({w for w, _p in muts}) == len(muts)
    for what, patch in muts:
        assert len(patch.ops) == 1 and patch.author.compiler == "prompt-opt"
        after = apply(pkg, patch)
        assert after.content_hash != pkg.content_hash, what
    assert mutations(pkg) == muts  # stable order: a seed means the same search


def test_climb_keeps_only_strict_improvements_and_is_seeded() -> None:
    pkg = bundled()
    best, best_score, history = hill_climb(pkg, score, land, iterations=6, seed=3)
    assert history[0].score == score(pkg) and len(history) == 7
    assert NEEDED in steps(best)  # dropping it lowers the pass rate: never kept
    kept = [h for h in history[1:] if h.accepted]
    assert best_score == max(h.score for h in history if h.score is not None)
    for h in history[1:]:
        assert h.score is not None
        assert h.accepted == (
            h.score > max(x.score for x in history[: h.iteration] if x.accepted and x.score)
        )
    assert kept and best_score.neg_tokens > score(pkg).neg_tokens  # shorter at equal pass
    again = hill_climb(pkg, score, land, iterations=6, seed=3)
    assert again[0].content_hash == best.content_hash
    other = hill_climb(pkg, score, land, iterations=6, seed=4)
    assert [h.mutation for h in other[2]] != [h.mutation for h in history]


def test_a_refused_mutation_is_recorded_not_scored() -> None:
    pkg = bundled()
    calls: list[str] = []

    def counting(p: SkillPackage) -> Score:
        calls.append(p.content_hash)
        return score(p)

    best, _s, history = hill_climb(pkg, counting, lambda p, patch: (None, "lint"), iterations=2)
    assert best is pkg and len(calls) == 1
    assert [h.note for h in history[1:]] == ["refused: lint"] * 2


def test_no_mutation_left_stops_the_climb() -> None:
    one = apply(
        bare_package(bundled(), "x"),
        rule_patch("only.rule", ["rerun_the_check"], [], rationale="r", compiler="t", model=None),
    )
    assert mutations(one) == []
    best, _s, history = hill_climb(one, score, land, iterations=50)
    assert best is one and [h.mutation for h in history] == ["the skill as given", "none"]
