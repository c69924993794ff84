"""Kill `skillci pipeline` with SIGKILL at random points, resume, compare with a clean run.

    .venv/bin/python benchmarks/pipeline_kill.py [--kills 20] [--per-cycle 8] [--seed 7]
                                                  [--max-delay 4] [--parallel 2] [--keep DIR]

Runs the pipeline on the bundled SkillsBench-style task (py-shelf-slots, a private copy)
with the sim models and the loopback reward-model stub, 1 repeat: once uninterrupted (the
reference), then in fresh run dirs ("cycles") that are SIGKILLed (the whole process group)
inside a randomly chosen unfinished stage, 0..--max-delay s after it started, at most
--per-cycle times each, and then left to finish — until --kills kills happened in all.
Prints the figures and checks, for every killed run, that the final manifest (without
times, attempts and the run id), every artifact (Deep's rollout trials by trial key) and
the set of trial dirs equal the reference's, and that no complete trial was quarantined.
Exit 1 on a mismatch.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from skillci.flows.pipeline.manifest import RunManifest  # noqa: E402
from skillci.runners.trialdir import INCOMPLETE, MARKER  # noqa: E402
from tests.fakes.reward_model import RewardModelStub  # noqa: E402
from tests.integration.compile.helpers import snapshot_task  # noqa: E402
from tests.integration.compile.test_pipeline import artifacts, trial_dirs  # noqa: E402


def command(rm_url: str, run_dir: str, root: Path, parallel: int) -> list[str]:
    tasks = root / "tasks"
    return [
        sys.executable, "-m", "skillci", "pipeline", "--harness", "builtin",
        "--model", "sim/student", "--external-model", "sim/teacher",
        "--task", "py-shelf-slots", "--tasks-root", str(tasks),
        "--repeat", "1", "--rm-api-url", rm_url, "--max-parallel", str(parallel),
        "--run-dir", run_dir, "--root", str(root), "--no-pr", "--quiet",
    ]  # fmt: skip


def kill_inside_a_stage(
    proc: subprocess.Popen[str], run_dir: Path, rng: random.Random, max_delay: float
) -> str | None:
    """SIGKILL the process group inside a randomly chosen unfinished stage, after a random
    delay into it; the stage name, or None when the run finished first."""
    manifest = run_dir / "manifest.json"
    target: str | None = None
    while proc.poll() is None:
        try:
            m = RunManifest.model_validate_json(manifest.read_bytes())
        except (OSError, ValueError):
            time.sleep(0.05)
            continue
        open_ = [s.name for s in m.stages if s.status != "done" and s.name != "publish"]
        if not open_:
            break
        if target not in open_:
            target = rng.choice(open_)
        if m.stage(target).status == "running":  # type: ignore[arg-type]
            time.sleep(rng.uniform(0.0, max_delay))
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            return target
        time.sleep(0.05)
    proc.wait()
    return None


def cycle(
    n: int,
    work: Path,
    env: dict[str, str],
    rm_url: str,
    rng: random.Random,
    args: argparse.Namespace,
) -> tuple[Path, list[str], int] | None:
    """One killed run: kill inside random stages until it would finish, then finish it.
    Returns (run dir, stages killed in, attempts), or None when an attempt failed."""
    name = f"results/compile-pipeline/killed-{n}"
    cmd = command(rm_url, name, work, args.parallel)
    run_dir = work / name
    where: list[str] = []
    attempts = 0
    while True:
        attempts += 1
        proc = subprocess.Popen(
            cmd, cwd=work, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        if len(where) >= args.per_cycle:
            _, err = proc.communicate()
            if proc.returncode != 0:
                print(err[-3000:])
                return None
            return run_dir, where, attempts
        stage = kill_inside_a_stage(proc, run_dir, rng, args.max_delay)
        if stage is None:
            if proc.returncode != 0:
                print(proc.stderr.read()[-3000:] if proc.stderr else "")
                return None
            return run_dir, where, attempts
        where.append(stage)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--kills", type=int, default=20, help="SIGKILLs in total (over cycles)")
    ap.add_argument("--per-cycle", type=int, default=8, help="at most this many per run dir")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--max-delay", type=float, default=4.0, help="seconds into the stage")
    ap.add_argument("--parallel", type=int, default=2)
    ap.add_argument("--keep", type=Path, default=None, help="work dir to keep (default: temp)")
    args = ap.parse_args()
    rng = random.Random(args.seed)
    work = args.keep or Path(tempfile.mkdtemp(prefix="pipeline-kill-"))
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "COLUMNS": "200"}
    snapshot_task(work / "tasks")
    ref_dir = work / "results" / "compile-pipeline" / "reference"
    results: list[tuple[Path, list[str], int]] = []
    with RewardModelStub() as rm:
        t0 = time.monotonic()
        ref = subprocess.run(
            command(rm.url, "results/compile-pipeline/reference", work, args.parallel),
            cwd=work, env=env, capture_output=True, text=True, check=False,
        )  # fmt: skip
        t_ref = time.monotonic() - t0
        if ref.returncode != 0:
            print(ref.stderr[-3000:])
            return 1
        t1 = time.monotonic()
        while sum(len(w) for _, w, _ in results) < args.kills:
            got = cycle(len(results), work, env, rm.url, rng, args)
            if got is None:
                return 1
            results.append(got)
        t_killed = time.monotonic() - t1
    m_ref = RunManifest.model_validate_json((ref_dir / "manifest.json").read_bytes())
    checks = {
        "manifest equal": True,
        "artifacts equal": True,
        "trial dirs equal": True,
        "no complete trial quarantined": True,
    }
    quarantined = 0
    for run_dir, _w, _a in results:
        m = RunManifest.model_validate_json((run_dir / "manifest.json").read_bytes())
        inc = [d for i in run_dir.rglob(INCOMPLETE) for d in i.iterdir()]
        quarantined += len(inc)
        checks["manifest equal"] &= m.comparable() == m_ref.comparable()
        checks["artifacts equal"] &= artifacts(run_dir) == artifacts(ref_dir)
        checks["trial dirs equal"] &= trial_dirs(run_dir) == trial_dirs(ref_dir)
        checks["no complete trial quarantined"] &= not [d for d in inc if (d / MARKER).exists()]
    where = [s for _, w, _ in results for s in w]
    attempts = sum(a for _, _, a in results)
    trials = sum(len(v) for v in trial_dirs(ref_dir).values())
    print("| figure | value |\n|---|---|")
    print(f"| SIGKILLs | {len(where)} over {len(results)} killed runs ({attempts} attempts) |")
    print(f"| killed inside | {', '.join(f'{k} {v}' for k, v in sorted(Counter(where).items()))} |")
    print(f"| uninterrupted run | {t_ref:.1f} s |")
    print(f"| killed + resumed runs | {t_killed:.1f} s in all |")
    print(f"| trial dirs per run (each once, complete) | {trials} |")
    print(f"| incomplete dirs quarantined | {quarantined} |")
    for name, ok in checks.items():
        print(f"| {name} (every run) | {'yes' if ok else 'NO'} |")
    print(f"work dir: {work}")
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
