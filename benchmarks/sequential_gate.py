"""Sequential gate vs a fixed k=5 design on simulated patches with known true effects.

    python benchmarks/sequential_gate.py [--patches 2000] [--tasks 50] [--seed N] [--json]
                                         [--sizes 10,20,50,100]

World: each simulated patch is evaluated on ``--tasks`` tasks whose base pass probability
is drawn from Beta(0.6, 0.6) (U-shaped: many tasks almost always pass or fail, some are
flaky). The patch shifts every task's log-odds by ``delta`` (so P(head wins | a trial pair
is discordant) = sigmoid(delta) on every task). Scenarios: two regressions, no effect, and
small/medium/large improvements. The right verdict is accept iff delta > 0.

Designs, on the same simulated trials (common random numbers):
- fixed k=5: 5 repeats per task on base and head, then the exact one-sided sign test at
  alpha = 0.05 on all discordant trial pairs (pooled McNemar). Also shown: the same fixed
  trials judged by the task-level sign test (per-task pass fractions).
- sequential: rounds of one repeat per task on both sides, fed to
  ``skillci.gate.sequential.SequentialTest`` with its defaults (alpha 0.05, Wald beta 0.30,
  p1 chosen from the budget, at most 5 rounds). The first patches of every scenario also go through
  ``SequentialTest.update`` with real TrialOutcome objects and must decide identically.

Prints per scenario: accept rates, the error that matters (false accept when delta <= 0,
false reject when delta > 0) with its Monte-Carlo standard error, mean trials, and the
share of trials saved; then the totals. ``--sizes`` adds one summary line per suite size
(savings depend on how many discordant pairs a round yields, hence on the suite size).
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from dataclasses import asdict, dataclass
from typing import Any

from skillci.gate.metrics import TrialOutcome
from skillci.gate.sequential import SequentialConfig, SequentialTest
from skillci.gate.stats import sign_test

FIXED_K = 5
ALPHA = 0.05
CROSS_CHECK = 40  # patches per scenario also run through SequentialTest.update
SCENARIOS: tuple[tuple[str, float], ...] = (
    ("large regression", -1.0),
    ("regression", -0.5),
    ("no effect", 0.0),
    ("small improvement", 0.4),
    ("medium improvement", 0.8),
    ("large improvement", 1.2),
)


@dataclass
class Row:
    scenario: str
    delta: float
    p_head_wins: float
    patches: int
    fixed_accept: float
    fixed_task_level_accept: float
    seq_accept: float
    error_kind: str
    fixed_error: float
    seq_error: float
    error_se: float
    fixed_trials: float
    seq_trials: float
    saved: float
    seq_rounds: float


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z))


def _patch(
    rng: random.Random, tasks: int, delta: float
) -> tuple[list[list[bool]], list[list[bool]]]:
    """Per task, FIXED_K pass/fail draws on base and on head."""
    base: list[list[bool]] = []
    head: list[list[bool]] = []
    for _ in range(tasks):
        p = min(max(rng.betavariate(0.6, 0.6), 1e-9), 1 - 1e-9)
        q = _sigmoid(math.log(p / (1 - p)) + delta)
        base.append([rng.random() < p for _ in range(FIXED_K)])
        head.append([rng.random() < q for _ in range(FIXED_K)])
    return base, head


def _round_counts(base: list[list[bool]], head: list[list[bool]], r: int) -> tuple[int, int, int]:
    wins = losses = 0
    for b, h in zip(base, head, strict=True):
        if h[r] and not b[r]:
            wins += 1
        elif b[r] and not h[r]:
            losses += 1
    return wins, losses, len(base) - wins - losses


def _fixed(base: list[list[bool]], head: list[list[bool]]) -> tuple[bool, bool]:
    wins = losses = 0
    task_up = task_down = 0
    for b, h in zip(base, head, strict=True):
        for r in range(FIXED_K):
            wins += h[r] and not b[r]
            losses += b[r] and not h[r]
        task_up += sum(h) > sum(b)
        task_down += sum(h) < sum(b)
    pooled = sign_test(wins, losses, alternative="greater").p_value <= ALPHA
    task_level = sign_test(task_up, task_down, alternative="greater").p_value <= ALPHA
    return pooled, task_level


def _sequential(
    base: list[list[bool]], head: list[list[bool]], cfg: SequentialConfig
) -> tuple[bool, int, int]:
    test = SequentialTest(cfg)
    for r in range(cfg.max_rounds):
        wins, losses, same = _round_counts(base, head, r)
        d = test.observe(wins, losses, same)
        if d.outcome != "continue":
            return d.outcome == "accept", d.trials_used, d.rounds
    raise AssertionError("the sequential test must decide by max_rounds")


def _sequential_via_update(
    base: list[list[bool]], head: list[list[bool]], cfg: SequentialConfig
) -> tuple[bool, int]:
    test = SequentialTest(cfg)
    for r in range(cfg.max_rounds):
        outcomes = [
            TrialOutcome(task_id=f"t{i}", side=side, repeat=r, reward=float(ok), passed=ok)
            for i in range(len(base))
            for side, ok in (("base", base[i][r]), ("head", head[i][r]))
        ]
        d = test.update(outcomes)
        if d.outcome != "continue":
            return d.outcome == "accept", d.trials_used
    raise AssertionError("the sequential test must decide by max_rounds")


def run(patches: int, tasks: int, seed: int) -> tuple[list[Row], SequentialConfig]:
    cfg = SequentialConfig(alpha=ALPHA, max_rounds=FIXED_K)
    rows: list[Row] = []
    for index, (name, delta) in enumerate(SCENARIOS):
        rng = random.Random(seed * 1000 + index)
        fixed_acc = task_acc = seq_acc = seq_trials = seq_rounds = 0
        for i in range(patches):
            base, head = _patch(rng, tasks, delta)
            pooled, task_level = _fixed(base, head)
            accepted, trials, rounds = _sequential(base, head, cfg)
            if i < CROSS_CHECK and _sequential_via_update(base, head, cfg) != (accepted, trials):
                raise AssertionError(f"update() and observe() disagree on patch {i} of {name}")
            fixed_acc += pooled
            task_acc += task_level
            seq_acc += accepted
            seq_trials += trials
            seq_rounds += rounds
        improvement = delta > 0
        fa, sa = fixed_acc / patches, seq_acc / patches
        fixed_err, seq_err = (1 - fa, 1 - sa) if improvement else (fa, sa)
        worst = max(fixed_err, seq_err, 1 / patches)
        fixed_trials = 2 * tasks * FIXED_K
        rows.append(
            Row(
                scenario=name,
                delta=delta,
                p_head_wins=_sigmoid(delta),
                patches=patches,
                fixed_accept=fa,
                fixed_task_level_accept=task_acc / patches,
                seq_accept=sa,
                error_kind="false reject" if improvement else "false accept",
                fixed_error=fixed_err,
                seq_error=seq_err,
                error_se=math.sqrt(worst * (1 - worst) / patches),
                fixed_trials=fixed_trials,
                seq_trials=seq_trials / patches,
                saved=1 - seq_trials / patches / fixed_trials,
                seq_rounds=seq_rounds / patches,
            )
        )
    return rows, cfg


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--patches", type=int, default=2000, help="simulated patches per scenario")
    ap.add_argument("--tasks", type=int, default=50, help="tasks per patch")
    ap.add_argument("--seed", type=int, default=20261129)
    ap.add_argument("--json", action="store_true", help="print JSON instead of a table")
    ap.add_argument("--sizes", default="", help="also summarise these suite sizes, e.g. 10,20")
    args = ap.parse_args(argv)
    sizes = [int(x) for x in args.sizes.split(",") if x.strip()]
    start = time.perf_counter()
    rows, cfg = run(args.patches, args.tasks, args.seed)
    elapsed = time.perf_counter() - start
    fixed_total = sum(r.fixed_trials for r in rows)
    seq_total = sum(r.seq_trials for r in rows)
    saved = 1 - seq_total / fixed_total
    by_size = {n: _summary(*run(args.patches, n, args.seed)) for n in sizes}
    if args.json:
        doc = {
            "config": cfg.model_dump(),
            "patches_per_scenario": args.patches,
            "tasks": args.tasks,
            "seed": args.seed,
            "rows": [asdict(r) for r in rows],
            "saved_overall": saved,
            "by_suite_size": by_size,
            "seconds": elapsed,
        }
        sys.stdout.write(json.dumps(doc, indent=2) + "\n")
        return 0
    print(
        f"sequential gate vs fixed k={FIXED_K}: {args.patches} simulated patches per scenario, "
        f"{args.tasks} tasks each, base pass p ~ Beta(0.6, 0.6), seed {args.seed}"
    )
    print(
        f"sequential: alpha {cfg.alpha}, Wald beta {cfg.beta}, p1 {cfg.p1 or 'auto'}, "
        f"early-accept share "
        f"{cfg.early_alpha_share}, max {cfg.max_rounds} rounds; fixed: exact one-sided sign "
        f"test at {ALPHA} on pooled trial pairs (task-level test shown for reference)"
    )
    print()
    head = (
        f"{'scenario':<19} {'P(win)':>6} | {'accept: fixed':>13} {'task-lvl':>8} {'seq':>6} | "
        f"{'error':<12} {'fixed':>6} {'seq':>6} {'±se':>6} | {'trials: fixed':>13} {'seq':>6} "
        f"{'saved':>6} {'rounds':>6}"
    )
    print(head)
    print("-" * len(head))
    for r in rows:
        print(
            f"{r.scenario:<19} {r.p_head_wins:>6.3f} | {r.fixed_accept:>13.3f} "
            f"{r.fixed_task_level_accept:>8.3f} {r.seq_accept:>6.3f} | {r.error_kind:<12} "
            f"{r.fixed_error:>6.3f} {r.seq_error:>6.3f} {r.error_se:>6.3f} | "
            f"{r.fixed_trials:>13.0f} {r.seq_trials:>6.1f} {r.saved:>6.1%} {r.seq_rounds:>6.2f}"
        )
    print("-" * len(head))
    print(
        f"all scenarios: fixed {fixed_total / len(rows):.0f} trials/patch, sequential "
        f"{seq_total / len(rows):.1f} trials/patch: {saved:.1%} fewer trials "
        f"(goal >= 30%: {'met' if saved >= 0.30 else 'NOT met'})"
    )
    short = [r.scenario for r in rows if r.saved < 0.30]
    if short:
        print(f"scenarios below 30% saved: {', '.join(short)}")
    worse = [r.scenario for r in rows if r.seq_error > r.fixed_error + 2 * r.error_se]
    print(
        "error rates: sequential within 2 s.e. of fixed or better in every scenario"
        if not worse
        else f"error rates WORSE than fixed by > 2 s.e. in: {', '.join(worse)}"
    )
    for n, summ in by_size.items():
        print(
            f"suite of {n:>3} tasks: {summ['saved']:.1%} fewer trials; worst error excess over "
            f"fixed {summ['worst_excess_se']:+.1f} s.e.; below 30% saved: "
            f"{', '.join(summ['short']) or 'none'}"
        )
    print(f"({time.perf_counter() - start:.1f} s)")
    return 0


def _summary(rows: list[Row], cfg: SequentialConfig) -> dict[str, Any]:
    del cfg
    saved = 1 - sum(r.seq_trials for r in rows) / sum(r.fixed_trials for r in rows)
    excess = max((r.seq_error - r.fixed_error) / max(r.error_se, 1e-9) for r in rows)
    return {
        "saved": saved,
        "worst_excess_se": excess,
        "short": [r.scenario for r in rows if r.saved < 0.30],
    }


if __name__ == "__main__":
    raise SystemExit(main())
