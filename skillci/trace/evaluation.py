"""Turn what a verifier left behind into a run record's :class:`Evaluation`.

One function so that every runner maps rewards the same way:

| verifier outcome                         | ``EvalState``     |
|------------------------------------------|-------------------|
| killed for time                          | ``timeout``       |
| reward ``ok`` and ``value >= threshold`` | ``passed``        |
| reward ``ok`` and below the threshold    | ``failed``        |
| reward ``missing`` or ``parse_error``    | ``verifier_error``|

A non-zero verifier exit code with a readable reward keeps the reward's verdict (Harbor
verifiers often ``exit 1`` after writing ``0``); the exit code is recorded alongside.
"""

from __future__ import annotations

from skillci.tasks.models import Reward, RewardState
from skillci.trace.models import EvalState, Evaluation

#: Characters of verifier output kept in the record (the tail: pytest summaries end there).
OUTPUT_TAIL_CHARS = 4000


def evaluation_from_reward(
    reward: Reward,
    *,
    verifier_exit_code: int | None = None,
    timed_out: bool = False,
    verifier_output: str = "",
    failure_class: str | None = None,
) -> Evaluation:
    """The :class:`Evaluation` for a verifier run that produced ``reward``."""
    if timed_out:
        state = EvalState.timeout
    elif reward.state is RewardState.ok:
        state = EvalState.passed if reward.passed else EvalState.failed
    else:
        state = EvalState.verifier_error
    details = dict(reward.details)
    if reward.error:
        details["reward_error"] = reward.error
    return Evaluation(
        state=state,
        passed=state is EvalState.passed,
        reward=reward.value if reward.state is RewardState.ok else None,
        threshold=reward.threshold,
        reward_source=str(reward.source) if reward.source else None,
        verifier_exit_code=verifier_exit_code,
        verifier_output=verifier_output[-OUTPUT_TAIL_CHARS:],
        failure_class=failure_class,
        details=details,
    )


__all__ = ["OUTPUT_TAIL_CHARS", "evaluation_from_reward"]
