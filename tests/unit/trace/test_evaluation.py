from __future__ import annotations

from pathlib import Path

import pytest

from skillci.tasks.models import Reward, RewardState
from skillci.trace.evaluation import OUTPUT_TAIL_CHARS, evaluation_from_reward
from skillci.trace.models import EvalState


def _ok(value: float, threshold: float = 1.0) -> Reward:
    return Reward(state=RewardState.ok, value=value, threshold=threshold, source=Path("r.txt"))


@pytest.mark.parametrize(
    ("reward", "timed_out", "state"),
    [
        (_ok(1.0), False, EvalState.passed),
        (_ok(0.0), False, EvalState.failed),
        (_ok(0.5, threshold=0.5), False, EvalState.passed),
        (_ok(1.0), True, EvalState.timeout),
        (Reward(state=RewardState.missing, error="none"), False, EvalState.verifier_error),
        (Reward(state=RewardState.parse_error, error="bad"), False, EvalState.verifier_error),
    ],
)
def test_states(reward: Reward, timed_out: bool, state: EvalState) -> None:
    ev = evaluation_from_reward(reward, timed_out=timed_out, verifier_exit_code=1)
    assert ev.state is state
    assert ev.passed is (state is EvalState.passed)
    assert ev.verifier_exit_code == 1
    if reward.state is not RewardState.ok:
        assert ev.reward is None
        assert ev.details["reward_error"] == reward.error


def test_output_tail_is_kept() -> None:
    out = "x" * OUTPUT_TAIL_CHARS + "TAIL"
    ev = evaluation_from_reward(_ok(1.0), verifier_output=out)
    assert ev.verifier_output.endswith("TAIL")
    assert len(ev.verifier_output) == OUTPUT_TAIL_CHARS
    assert ev.reward_source == "r.txt"
