"""The reward-model client against the loopback AgentRM-compatible stub (real HTTP)."""

from __future__ import annotations

import socket

import pytest

from skillci.errors import RewardModelError
from skillci.providers.reward_model import RewardModelClient, trajectory_messages
from tests.fakes.reward_model import RewardModelStub, stub_score
from tests.unit.analyze.traj import T


def records() -> list:  # type: ignore[type-arg]
    short = T(run_id="run-a").localize().patch().test(exit_code=0).say("ok").build(passed=True)
    long = T(run_id="run-b").localize().test(exit_code=1).test(exit_code=1).patch().say("?").build()
    return [short, long]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_health_and_scores_in_order() -> None:
    recs = records()
    with RewardModelStub() as rm, RewardModelClient(rm.url, backoff=0.01) as client:
        h = client.health()
        assert (h.status, h.device, h.max_length) == ("ok", "cpu-stub", 4096)
        scores = client.score(recs, "task-calc", ["a", "b"])
        (_, body) = next(r for r in rm.requests if r[0] == "POST /score")
    assert [t["id"] for t in body["trajectories"]] == ["a", "b"]
    assert scores == [stub_score(t) for t in body["trajectories"]]
    assert scores[0] > scores[1]
    roles = {m["role"] for m in body["trajectories"][0]["messages"]}
    assert roles <= {"user", "assistant", "tool"}  # no system prompt (the skill) is sent


def test_transient_errors_are_retried() -> None:
    with RewardModelStub(fail_first=2) as rm, RewardModelClient(rm.url, backoff=0.01) as client:
        assert len(client.score(records(), "t", ["a", "b"])) == 2
        assert sum(1 for r in rm.requests if r[0] == "GET /health") == 3


def test_service_down_fails_with_a_hint() -> None:
    client = RewardModelClient(f"http://127.0.0.1:{closed_port()}", retries=2, backoff=0.01)
    with pytest.raises(RewardModelError) as err:
        client.health()
    assert "--no-rm" in err.value.hint and err.value.exit_code == 4
    client.close()


@pytest.mark.parametrize(
    ("kw", "msg"), [({"status": "loading"}, "status"), ({"bad": True}, "scores")]
)
def test_unhealthy_or_wrong_answers_are_errors(kw: dict[str, object], msg: str) -> None:
    with (
        RewardModelStub(**kw) as rm,  # type: ignore[arg-type]
        RewardModelClient(rm.url, backoff=0.01) as client,
        pytest.raises(RewardModelError, match=msg),
    ):
        client.score(records(), "t", ["a", "b"])


def test_trajectory_is_clipped_to_the_length_budget() -> None:
    rec = T().read("big.txt", output="x" * 50_000).say("done").build()
    msgs = trajectory_messages(rec, max_chars=2_000)
    assert sum(len(m["content"]) for m in msgs) < 3_000
