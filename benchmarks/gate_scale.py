"""Wall time of the gate's pure core over 100k synthetic trial outcomes.

    python benchmarks/gate_scale.py [--trials 100000] [--repeats 5] [--n-boot 2000] [--json]

Synthetic suite: ``trials / (4 * repeats)`` tasks, each run ``repeats`` times on the four
sides (base, head, teacher, baseline), with heterogeneous pass probabilities, costs and
loaded skill files. Timed separately:

- building (validating) the TrialOutcome models, which a caller mapping RunRecords pays;
- ``compute_metrics``: pass rates, pass@k/pass^k, Wilson intervals, per-task changes,
  repair/regression, costs, the task-level sign test and paired bootstrap CI, and both
  GCR bootstrap CIs (``n_boot`` resamples each);
- ``SequentialTest.update`` over the base/head trials in ``repeats`` rounds;
- ``select_tasks`` (test-impact selection) from the base trials' loaded files.

The target is <= 2 s for the metrics + statistics (the last three).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time

from skillci.gate.impact import loaded_files_by_task, select_tasks
from skillci.gate.metrics import SIDES, TrialOutcome, compute_metrics
from skillci.gate.sequential import SequentialConfig, SequentialTest

TARGET_S = 2.0
WORKFLOWS = [f"skillci/workflows/w{i}.md" for i in range(8)]
LIFT = {"base": 0.0, "head": 0.08, "teacher": 0.3, "baseline": -0.15}


def synthetic(trials: int, repeats: int, seed: int) -> list[TrialOutcome]:
    rng = random.Random(seed)
    tasks = trials // (len(SIDES) * repeats)
    out: list[TrialOutcome] = []
    for t in range(tasks):
        p = rng.betavariate(0.6, 0.6)
        workflow = WORKFLOWS[t % len(WORKFLOWS)]
        for side in SIDES:
            q = min(max(p + LIFT[side], 0.0), 1.0)
            for r in range(repeats):
                ok = rng.random() < q
                out.append(
                    TrialOutcome(
                        task_id=f"task-{t:05d}",
                        side=side,
                        repeat=r,
                        reward=1.0 if ok else rng.choice((0.0, 0.25, 0.5)),
                        passed=ok,
                        input_tokens=rng.randint(2_000, 40_000),
                        output_tokens=rng.randint(200, 4_000),
                        model_calls=rng.randint(3, 30),
                        tool_calls=rng.randint(2, 40),
                        latency_s=rng.uniform(5, 120),
                        usd=rng.uniform(0.001, 0.05),
                        loaded_skill_files=frozenset({"SKILL.md", workflow}),
                    )
                )
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="gate core wall time over synthetic trials")
    ap.add_argument("--trials", type=int, default=100_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    outcomes = synthetic(args.trials, args.repeats, args.seed)
    t1 = time.perf_counter()
    metrics = compute_metrics(outcomes, n_boot=args.n_boot, seed=args.seed)
    t2 = time.perf_counter()
    test = SequentialTest(SequentialConfig(max_rounds=args.repeats))
    by_round: list[list[TrialOutcome]] = [[] for _ in range(args.repeats)]
    for o in outcomes:
        if o.side in ("base", "head"):
            by_round[o.repeat].append(o)
    decision = test.decision
    for batch in by_round:
        decision = test.update(batch)
        if decision.outcome != "continue":
            break
    t3 = time.perf_counter()
    selection = select_tasks({"skillci/workflows/w3.md"}, loaded_files_by_task(outcomes))
    t4 = time.perf_counter()

    core = t4 - t1
    figures = {
        "trials": len(outcomes),
        "tasks": metrics.changes.tasks,
        "n_boot": args.n_boot,
        "build_models_s": t1 - t0,
        "compute_metrics_s": t2 - t1,
        "sequential_s": t3 - t2,
        "impact_selection_s": t4 - t3,
        "core_total_s": core,
        "target_s": TARGET_S,
        "met": core <= TARGET_S,
    }
    if args.json:
        sys.stdout.write(json.dumps(figures, indent=2) + "\n")
        return 0
    paired = metrics.paired
    print(
        f"{len(outcomes)} trial outcomes: {metrics.changes.tasks} tasks x {len(SIDES)} sides x "
        f"{args.repeats} repeats; bootstrap {args.n_boot} resamples"
    )
    print(f"  build TrialOutcome models     {t1 - t0:6.3f} s  (validation, paid by the caller)")
    print(f"  compute_metrics (all stats)   {t2 - t1:6.3f} s")
    print(
        f"  sequential test, {decision.rounds} round(s)    {t3 - t2:6.3f} s  -> {decision.outcome}"
    )
    print(f"  impact selection              {t4 - t3:6.3f} s  -> {selection.summary}")
    print(
        f"  metrics + statistics total    {core:6.3f} s  (target <= {TARGET_S:.0f} s: "
        f"{'met' if core <= TARGET_S else 'NOT met'})"
    )
    if paired is not None and paired.diff_ci is not None:
        print(
            f"  head - base pass rate {paired.diff:+.4f} "
            f"[{paired.diff_ci.low:+.4f}, {paired.diff_ci.high:+.4f}], "
            f"GCR head {metrics.gcr_head.value:.3f} ({metrics.gcr_head.label})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
