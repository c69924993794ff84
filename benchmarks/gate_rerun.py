"""Re-running `skillci gate` on an unchanged PR: model calls and wall time (issue 22 item 5:
0 model calls and <= 2 s for 50 tasks x 5 repeats).

Builds a scratch repository from the bundled skill and tasks (base = the skill without
`finish.report-success`, head = the bundled skill), runs the gate once to fill the trial
cache (the cold run, timed), then runs the same `skillci gate` command again, each time as
a fresh process exactly as a user types it, and prints min/median wall and CPU time (user +
sys of the process and its children), model calls (must be 0), trials run/cached/reused and
the load average before each run (the machine may be shared: CPU time is the figure load
affects least). The children may write `.pyc` files (PYTHONDONTWRITEBYTECODE is dropped for
them), as an installed skillci has them; the cold run is their warm-up.

`--tasks N` synthesises a bigger suite set: the gate's suites (validation, regression,
security) keep their bundled tasks and get copies of them, round-robin, until they hold N
tasks together. A copy is the bundled task dir under a new id (`<id>-c<k>`) with one line
changed in its task.toml metadata, so that every copy has its own content hash and hence
its own trial cache keys; what the student and the verifier do is the bundled task's. These
tasks are synthetic inputs of this benchmark, not corpus items.

Usage:
  python benchmarks/gate_rerun.py [--repeat 3]                      # bundled suites
  python benchmarks/gate_rerun.py --tasks 50 --repeat 5 --runs 5    # issue 22 item 5
  ... --workdir DIR   keeps the scratch repo and its cache in DIR and reuses them when DIR
                      already holds a filled one (then no cold run is timed)
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
GATE_SUITES = ("validation", "regression", "security")
TARGET_WALL = 2.0


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def suite_ids(text: str) -> list[str]:
    """Task ids of a bundled suite file (its `tasks:` list; one `- id` per line)."""
    return re.findall(r"^\s+-\s+(\S+)\s*$", text.split("tasks:", 1)[1], flags=re.M)


def synthesise(repo: Path, total: int) -> int:
    """Add copies of the gate suites' tasks until those suites hold ``total`` tasks."""
    suites = {s: repo / "evals" / "suites" / f"{s}.yaml" for s in GATE_SUITES}
    ids = {s: suite_ids(p.read_text()) for s, p in suites.items()}
    originals = [(s, t) for s in GATE_SUITES for t in ids[s]]
    have = sum(len(v) for v in ids.values())
    k = 0
    while have < total:
        suite, tid = originals[k % len(originals)]
        copy = f"{tid}-c{k // len(originals) + 1}"
        dst = repo / "evals" / "tasks" / copy
        shutil.copytree(repo / "evals" / "tasks" / tid, dst)
        toml = dst / "task.toml"
        text = toml.read_text()
        toml.write_text(text.replace("[metadata]\n", f'[metadata]\nbenchmark_copy = "{copy}"\n', 1))
        ids[suite].append(copy)
        have += 1
        k += 1
    for s, p in suites.items():
        head = p.read_text().split("tasks:", 1)[0]
        p.write_text(head + "tasks:\n" + "".join(f"  - {t}\n" for t in ids[s]))
    return have


def build(repo: Path, tasks: int | None) -> int:
    """The scratch repository: branch ``main`` (bundled skill) and ``base`` (without finish)."""
    repo.mkdir(parents=True)
    shutil.copytree(ROOT / "skills", repo / "skills")
    shutil.copytree(ROOT / "evals", repo / "evals")
    (repo / ".gitignore").write_text(".skillci/\n")
    n = synthesise(repo, tasks) if tasks else 0
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "bundled")
    git(repo, "checkout", "-q", "-b", "base")
    git(repo, "rm", "-q", "skills/repo-debugger/skillci/rules/finish.yaml")
    git(repo, "commit", "-qm", "without finish")
    git(repo, "checkout", "-q", "main")
    return n


def skillci_cmd() -> list[str]:
    """`skillci` as a user runs it: the console script next to this interpreter."""
    script = Path(sys.executable).with_name("skillci")
    if script.exists():
        return [str(script)]
    found = shutil.which("skillci")
    return [found] if found else [sys.executable, "-m", "skillci"]


def timed(cmd: list[str], repo: Path, env: dict[str, str]) -> tuple[float, float, dict[str, Any]]:
    """(wall s, CPU s of the process tree, the --json report) of one gate run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=repo, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if proc.returncode not in (0, 1):
        sys.stderr.write(proc.stderr)
        raise SystemExit(3)
    return wall, cpu, json.loads(proc.stdout)


def line(label: str, wall: float, cpu: float, rep: dict[str, Any]) -> str:
    return (
        f"{label}: verdict {rep['verdict']}, trials run {rep['trials_run']}, cached "
        f"{rep['trials_cached']}, reused {rep['trials_reused']}, model calls "
        f"{rep['model_calls']}, wall {wall:.2f} s, CPU {cpu:.2f} s"
    )


def load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def run(work: Path, args: argparse.Namespace) -> int:
    repo = work / "repo"
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="b",
        GIT_AUTHOR_EMAIL="b@b",
        GIT_COMMITTER_NAME="b",
        GIT_COMMITTER_EMAIL="b@b",
        SKILLCI_HOME=str(work / "home"),
    )
    env.pop("PYTHONDONTWRITEBYTECODE", None)  # an installed skillci has its .pyc files
    fresh = not repo.exists()
    if fresh:
        n = build(repo, args.tasks)
        print(f"scratch repo {repo}: {n or 'bundled'} tasks in {', '.join(GATE_SUITES)}")
    cmd = [
        *skillci_cmd(),
        "gate",
        "--skill",
        "repo-debugger",
        "--base",
        "base",
        "--head",
        "main",
        "--repeat",
        str(args.repeat),
        "--parallel",
        str(args.parallel),
        "--json",
    ]
    print("command: " + " ".join(["skillci", *cmd[cmd.index("gate") :]]))
    cold: float | None = None
    if fresh or args.cold:
        print(f"cold run ({load()}) ...", flush=True)
        cold, cpu, rep = timed(cmd, repo, env)
        print(line("cold (fills the cache)", cold, cpu, rep))
    walls: list[float] = []
    cpus: list[float] = []
    reps: list[dict[str, Any]] = []
    for i in range(args.runs):
        la = load()
        wall, cpu, rep = timed(cmd, repo, env)
        walls.append(wall)
        cpus.append(cpu)
        reps.append(rep)
        print(line(f"re-gate {i + 1} ({la})", wall, cpu, rep), flush=True)
    calls = max(r["model_calls"] for r in reps)
    ran = max(r["trials_run"] for r in reps)
    med = statistics.median(walls)
    ok = calls == 0 and ran == 0 and med <= TARGET_WALL
    print(
        f"unchanged re-gate x{args.runs}: wall min {min(walls):.2f} s, median {med:.2f} s; "
        f"CPU min {min(cpus):.2f} s, median {statistics.median(cpus):.2f} s; model calls "
        f"{calls}; trials run {ran}, cached {reps[0]['trials_cached']}, reused "
        f"{reps[0]['trials_reused']} (target 0 calls and median <= {TARGET_WALL:.2f} s: "
        f"{'met' if ok else 'NOT met'})"
        + (f"; speed-up {cold / med:.0f}x over the cold run" if cold else "")
    )
    return 0


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--repeat", type=int, default=3, help="gate --repeat")
    ap.add_argument("--tasks", type=int, default=0, help="synthesise suites of N tasks")
    ap.add_argument("--runs", type=int, default=3, help="timed unchanged re-gates")
    ap.add_argument("--parallel", type=int, default=2, help="gate --parallel (cold run)")
    ap.add_argument("--workdir", type=Path, help="keep (and reuse) the scratch repo here")
    ap.add_argument("--cold", action="store_true", help="time a cold run even when reusing")
    args = ap.parse_args()
    if args.workdir:
        args.workdir.mkdir(parents=True, exist_ok=True)
        return run(args.workdir.resolve(), args)
    with tempfile.TemporaryDirectory(prefix="skillci-bench-") as tmp:
        return run(Path(tmp), args)


if __name__ == "__main__":
    sys.exit(main())
