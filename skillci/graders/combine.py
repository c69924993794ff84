"""Grader results -> the task's reward and pass (the rule of ``[reward]``).

| rule | reward | passes when |
|---|---|---|
| ``all`` | 1.0 when every grader passed, else 0.0 | reward = 1.0 |
| ``weighted`` | sum(weight * score) / sum(weight) | reward = 1.0 |
| ``threshold`` | the same weighted mean | reward >= ``threshold`` |

An assertion scores 0 or 1, a rubric the fraction of its criteria the judge passed, the
verifier (``tests/test.sh``, when the task has one) its reward clipped to [0, 1].
"""

from __future__ import annotations

from skillci.graders.models import GradeReport, GraderResult, JudgeUsage, RewardRule


def verifier_result(reward: float, passed: bool, weight: float) -> GraderResult:
    """``tests/test.sh``'s reward as one more grader."""
    return GraderResult(
        id="verifier",
        kind="verifier",
        passed=passed,
        score=min(1.0, max(0.0, reward)),
        weight=weight,
        detail=f"tests/test.sh wrote reward {reward:g}",
    )


def combine(
    rule: RewardRule, results: list[GraderResult], judge: JudgeUsage | None = None
) -> GradeReport:
    """The :class:`GradeReport` of ``results`` under ``rule``."""
    if not results:
        raise ValueError("no grader results to combine")
    if rule.rule == "all":
        reward = 1.0 if all(r.passed for r in results) else 0.0
    else:
        total = sum(r.weight for r in results)
        reward = round(sum(r.weight * r.score for r in results) / total, 6)
    mark = rule.pass_mark
    return GradeReport(
        rule=rule.rule,
        threshold=mark,
        reward=reward,
        passed=reward >= mark,
        results=results,
        judge=judge,
    )


__all__ = ["combine", "verifier_result"]
