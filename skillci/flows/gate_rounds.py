"""The sharded gate in rounds: each round a dispatch of shard jobs, a coordinator between
them (docs/design/417-sharded-gate-rounds.md).

Round 1's shards run the base side, the reference sides, the same-instance trials and head
round 1 (:func:`skillci.flows.gate_shard.run_shard` with ``rnd=1``). After each round the
coordinator replays the gate over the rounds received (:func:`decide_round`): where the
replay asks for a head round no shard ran yet, that suite is still open. No open suite:
the gate decided and no further round is dispatched. Otherwise the next round's dispatch
is only the shards holding an open unit (``RoundDecision.matrix``, design 427). Otherwise round ``K + 1``'s shards
(:func:`run_round`) replay the same way to find the open suites and run head round
``K + 1`` of those suites' rerun tasks among their own units — nothing else. The final
``evals merge`` over every round's directories replays the whole gate; the trials it
reads are exactly the ones the stopped test asked for (``unused_trials`` 0).
"""

from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, Field

from skillci.errors import InvalidInputError
from skillci.flows.context import RepoContext
from skillci.flows.gate import GateOptions, Progress, run_suite
from skillci.flows.gate_shard import (
    NextRound,
    Received,
    Replay,
    ShardResult,
    effective_shards,
    receive_shards,
    round_range,
    shard_runner,
    write_shard,
)
from skillci.tasks.models import Task


def open_rounds(ctx: RepoContext, got: Received) -> dict[str, list[Task]]:
    """The suites whose sequential test has not stopped after the rounds ``got`` holds, with
    the tasks whose next head round the gate would ask for (the suite's rerun tasks)."""
    replay = Replay(
        ctx,
        got.trials,
        judge=got.inputs.judge,
        partial=(got.rounds, got.inputs.head.pkg.content_hash),
    )
    still: dict[str, list[Task]] = {}
    for s in got.opts.suites:
        try:
            run_suite(s, got.opts, got.inputs, replay)
        except NextRound as nxt:
            if nxt.index != got.rounds:  # a replay asks for rounds in order: cannot happen
                raise AssertionError(f"{s}: round {nxt.index + 1} after {got.rounds}") from nxt
            still[s] = nxt.tasks
    return still


class RoundDecision(BaseModel):
    """What the coordinator decides after a round: stop (every suite decided, or every
    planned round ran) or dispatch ``next_round``."""

    plan_id: str = Field(description="The plan the shards ran.")
    gate_id: str = Field(description="Id the merged GateReport will have.")
    rounds: int = Field(description="Head rounds received.")
    repeat: int = Field(description="Rounds planned (--repeat).")
    decided: bool = Field(description="No further round runs: merge now.")
    next_round: int | None = Field(description="The round to dispatch (None when decided).")
    open: dict[str, list[str]] = Field(
        description="Suite -> the tasks the next round runs (empty when decided)."
    )
    shards: list[int] = Field(
        description="The shards (0-based) holding an open unit: the next round's dispatch."
    )
    matrix: dict[str, list[dict[str, object]]] = Field(
        description="The next round's GitHub Actions matrix: those shards only."
    )


def decide_round(ctx: RepoContext, dirs: list[Path]) -> RoundDecision:
    """The coordinator: replay the gate over the rounds in ``dirs`` (every shard of rounds
    1..K) and say whether round K+1 runs."""
    got = receive_shards(ctx, dirs)
    still = open_rounds(ctx, got)
    first = got.results[0]
    wanted = {(s, t.id) for s, tasks in still.items() for t in tasks}
    n = first.shards
    shards = [i for i in range(n)
              if any((u.suite, u.task_id) in wanted for u in got.plan.units_of(i, n))]  # fmt: skip
    return RoundDecision(
        shards=shards,
        matrix=got.plan.matrix(n, only=shards),
        plan_id=first.plan_id,
        gate_id=first.gate_id,
        rounds=got.rounds,
        repeat=got.opts.repeat,
        decided=not still,
        next_round=got.rounds + 1 if still else None,
        open={s: [t.id for t in tasks] for s, tasks in still.items()},
    )


def run_round(
    ctx: RepoContext,
    opts: GateOptions,
    shard: int,
    shards: int,
    out: Path,
    previous: list[Path],
    progress: Progress | None = None,
    *,
    rnd: int,
    remaining: bool = False,
) -> ShardResult:
    """Round ``rnd`` (> 1; with ``remaining`` also every later round) of shard ``shard``:
    head trials of this shard's units in suites still open after the rounds in
    ``previous`` (every shard of rounds 1..rnd-1)."""
    t0 = time.monotonic()
    first, last = round_range(opts, rnd, remaining)
    if first == 1:
        raise InvalidInputError(
            "round 1 reads no earlier rounds", hint="skillci evals run --round 1 (no directories)"
        )
    if not previous:
        raise InvalidInputError(
            f"--round {first} needs the shard directories of rounds 1..{first - 1}",
            hint=f"skillci evals run --round {first} ... shards/eval-r*-* (downloaded first)",
        )
    got = receive_shards(ctx, previous, opts=opts)
    if got.rounds != first - 1 or got.dispatches == 0:
        raise InvalidInputError(
            f"round {first} runs after rounds 1..{first - 1}, but the directories given hold "
            + (f"rounds 1..{got.rounds}" if got.dispatches else "one-shot shards"),
            hint=f"pass the eval-r<k>-* directories of rounds 1..{first - 1} only",
        )
    n = effective_shards(got.plan, shards)
    units = got.plan.units_of(shard, n) if shard < n else []
    mine = {(u.suite, u.task_id) for u in units}
    runner = shard_runner(ctx, opts, got.inputs, progress)
    head = got.inputs.head
    for s, tasks in open_rounds(ctx, got).items():
        todo = [t for t in tasks if (s, t.id) in mine]
        if todo:
            runner.run(
                got.inputs.agent,
                todo,
                head.rendered,
                head.pkg.content_hash,
                repeats=last - first + 1,
                first_repeat=first - 1,
                suite=s,
            )
    return write_shard(ctx, got.plan, got.inputs, runner, (shard, n), units, (first, last), out, t0)
