"""The sharded gate in rounds (docs/design/417): ``evals run --round K`` and the
coordinator ``evals decide`` stop dispatching rounds where the sequential test stops, and
the merge of every round's shards is the unsharded gate's report.

Each shard, each decision, the merge and the unsharded gate use their own state dir, as
separate CI machines would.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.errors import InvalidInputError
from skillci.flows.context import RepoContext
from skillci.flows.demo import OVERFIT_RULE
from skillci.flows.gate import GateOptions, run_gate
from skillci.flows.gate_rounds import decide_round, run_round
from skillci.flows.gate_shard import (
    GateSpec,
    ShardResult,
    _rounds_of,
    comparable,
    merge_shards,
    read_shard,
    run_shard,
)
from tests.integration.loop.conftest import git, make_scratch, write_suites

SHARDS = 2
SUITES = {"regression": ["py-window-end"], "security": ["sec-secret-reveal"]}
OVERFIT = Path("skills", "repo-debugger", "skillci", "rules", "overfit.yaml")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The bundled skill on main; ``cand`` adds an over-fitting rule that breaks
    py-window-end: the regression suite's paired test rejects at round 1 (one pair the
    base wins), while the security suite (one concordant pair: no evidence either way)
    runs every round."""
    path = make_scratch(tmp_path_factory.mktemp("rounds") / "repo", drop_rule_file=None)
    write_suites(path, SUITES)
    git(path, "commit", "-qam", "two small suites")
    git(path, "checkout", "-q", "-b", "cand")
    (path / OVERFIT).write_text(OVERFIT_RULE)
    git(path, "add", "-A")
    git(path, "commit", "-qm", "head: a fast path that over-fits")
    git(path, "checkout", "-q", "main")
    return path


def _ctx(repo: Path, state: Path) -> RepoContext:
    return RepoContext.open(repo, state_dir=state)


@pytest.mark.slow  # > 20 s: 59-225 s wall on the shared 2-core machine, 2026-12-04
def test_rounds_stop_where_the_sequential_test_stops(repo: Path, tmp_path: Path) -> None:
    opts = GateOptions(
        skill="repo-debugger", base="main", head="cand", suites=("regression", "security"),
        repeat=3,
    )  # fmt: skip
    unsharded = run_gate(_ctx(repo, tmp_path / "one"), opts)
    heads = {t: len(sides.get("head", [])) for t, sides in unsharded.evidence.items()}
    # the premise: regression stops after round 1, security runs every round
    assert heads == {"py-window-end": 1, "sec-secret-reveal": 3}
    assert unsharded.verdict == "reject"

    dirs: list[Path] = []
    dispatch = list(range(SHARDS))
    open_shard = -1
    for k in (1, 2, 3):
        rk = [tmp_path / f"eval-r{k}-{i}" for i in dispatch]
        for i, d in zip(dispatch, rk, strict=True):
            ctx = _ctx(repo, tmp_path / f"s{k}-{i}")
            if k == 1:
                res = run_shard(ctx, opts, i, SHARDS, d, rnd=1)
                assert {t.repeat_index for t in res.trials if t.side == "head"} <= {0}
            else:  # only the open suite's head round k, of this shard's own units
                res = run_round(ctx, opts, i, SHARDS, d, dirs, rnd=k)
                assert {(t.task_id, t.side, t.repeat_index) for t in res.trials} <= {
                    ("sec-secret-reveal", "head", k - 1)
                }
            assert (res.round, res.last_round) == (k, k)
        assert sum(len(read_shard(d).trials) for d in rk) == (2 * 3 + 2 if k == 1 else 1)
        if k == 1:
            # the one open suite's unit (security's task) is in one shard: later rounds
            # dispatch only that shard (design 427)
            (open_shard,) = [i for i, d in zip(dispatch, rk, strict=True)
                             if any(u.task_id == "sec-secret-reveal" for u in read_shard(d).units)]  # fmt: skip
            with pytest.raises(InvalidInputError, match="missing 1/2"):
                decide_round(_ctx(repo, tmp_path / "d0"), rk[:1])
            with pytest.raises(InvalidInputError, match=r"hold rounds 1\.\.1"):
                run_round(_ctx(repo, tmp_path / "bad"), opts, 0, SHARDS, tmp_path / "x", rk, rnd=3)
        dirs += rk
        decision = decide_round(_ctx(repo, tmp_path / f"d{k}"), dirs)
        assert decision.rounds == k
        if k < 3:
            assert not decision.decided and decision.next_round == k + 1
            assert decision.open == {"security": ["sec-secret-reveal"]}
            # the next dispatch: the open unit's shard only, as the round jobs' matrix
            assert decision.shards == [open_shard]
            assert [e["index"] for e in decision.matrix["include"]] == [open_shard]
            dispatch = decision.shards
        else:  # every planned round ran
            assert decision.decided and decision.next_round is None and decision.open == {}
            assert decision.shards == [] and decision.matrix == {"include": []}

    merged = merge_shards(_ctx(repo, tmp_path / "merge"), list(reversed(dirs)))
    assert comparable(merged) == comparable(unsharded)
    assert merged.verdict == unsharded.verdict
    sharding = merged.config["sharding"]
    assert isinstance(sharding, dict) and sharding["rounds"] == 3
    assert sharding["unused_trials"] == 0
    # fewer trials than the one-shot plan's 2 tasks x (3 base + 3 head) = 12
    assert sharding["trials"] == 2 * 3 + 2 + 1 + 1 < 12


@pytest.mark.slow  # > 20 s: 22 s wall on the shared 2-core machine, 2026-12-04
def test_round_one_with_remaining_is_the_one_shot_shard(repo: Path, tmp_path: Path) -> None:
    """``--round 1 --remaining`` runs what the one-shot shard runs; the merge of such round
    shards ignores the trials after the stop, as it always did."""
    opts = GateOptions(
        skill="repo-debugger", base="main", head="cand", suites=("regression",), repeat=3
    )
    d = tmp_path / "eval-r1-0"
    res = run_shard(_ctx(repo, tmp_path / "s"), opts, 0, 1, d, rnd=1, remaining=True)
    assert (res.round, res.last_round) == (1, 3)
    assert decide_round(_ctx(repo, tmp_path / "d"), [d]).decided
    merged = merge_shards(_ctx(repo, tmp_path / "m"), [d])
    assert merged.config["sharding"]["unused_trials"] == 2  # type: ignore[index]


def _result(shard: int, shards: int, rnd: int, last: int | None = None) -> ShardResult:
    spec = GateSpec(
        skill="repo-debugger", base="main", head="cand", base_sha="1" * 40, head_sha="2" * 40,
        suites=["regression"], repeat=3, student="sim/student", sequential=True, impact=True,
    )  # fmt: skip
    return ShardResult(
        plan_id="plan-x", gate_id="gate-x", spec=spec, shard=shard, shards=shards, units=[],
        round=rnd, last_round=rnd if last is None else last, trials=[], ran=0, cached=0,
        model_calls=0, wall_time_sec=0.0,
    )  # fmt: skip


def test_shards_received_are_whole_dispatches_of_rounds_one_to_k() -> None:
    """(head rounds received, dispatches) — what decide, run --round K and merge trust."""
    r = _result
    assert _rounds_of([r(1, 2, 1), r(0, 2, 1)]) == (1, 1)
    assert _rounds_of([r(0, 2, 1), r(1, 2, 1), r(1, 2, 2), r(0, 2, 2)]) == (2, 2)
    # a later round dispatches only the shards with open units (design 427)
    assert _rounds_of([r(0, 2, 1), r(1, 2, 1), r(1, 2, 2)]) == (2, 2)
    assert _rounds_of([r(0, 1, 1), r(0, 1, 2, 3)]) == (3, 2)  # round 2 --remaining
    assert _rounds_of([r(0, 2, 0), r(1, 2, 0)]) == (3, 0)  # one-shot: every planned round
    for bad, why in (
        ([r(0, 1, 2)], "round 1 is missing"),
        ([r(0, 1, 1), r(0, 1, 3)], "round 2 is missing"),
        ([r(0, 2, 1), r(0, 2, 2)], "round 1: missing 1/2"),
        ([r(0, 2, 1), r(1, 2, 1), r(0, 2, 2), r(0, 2, 2)], "round 2: duplicated 0"),
        ([r(0, 2, 1), r(0, 2, 1), r(1, 2, 1)], "duplicated 0"),
        ([r(0, 1, 0), r(0, 1, 1)], "mix one-shot and round shards"),
    ):
        with pytest.raises(InvalidInputError, match=why):
            _rounds_of(bad)
    # a shard file of schema version 1 (no round fields) is a one-shot shard
    old = r(0, 1, 1).model_dump(mode="json", exclude={"round", "last_round"})
    assert ShardResult.model_validate({**old, "schema_version": 1}).round == 0
