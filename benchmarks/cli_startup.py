"""Start-up time of ``skillci --help`` and ``skillci trace ls`` against ``python -c pass``
(issue 17 item 3: each <= 3x).

Runs the commands interleaved, N rounds each, in fresh interpreters of this venv
(``trace ls`` on an empty store in a temp dir, and on one with 50 runs: the default
``--limit``, so a full table is laid out and printed), and prints the median and minimum wall time
of each and the ratios of the medians and of the minimums. On a busy machine the medians are
noisy; the minimums are the closest to an idle machine.

    python benchmarks/cli_startup.py [--rounds N]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def _time(cmd: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(wall, CPU) seconds of one run; CPU is user + system of the child."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, cwd=cwd, stdout=subprocess.DEVNULL)
    _, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} exited {proc.returncode}")
    return wall, ru.ru_utime + ru.ru_stime


def _store_with_runs(root: Path, n: int) -> None:
    """A trace store whose index lists ``n`` runs (rows written straight into the index)."""
    import sqlite3

    from skillci.trace.store import TraceStore

    with TraceStore(root)._db(write=True):  # creates the (empty) index as the store does
        pass
    roles, states = ("student", "teacher", "oracle"), ("passed", "failed", "timeout")
    rows = [
        (
            f"run-20260813-1000{i:02d}-{i:04d}",
            "d" * 64,
            1,
            f"fix-the-{('cache', 'parser', 'retry-loop')[i % 3]}-bug-{i}",
            roles[i % 3],
            ("sim/student", "openai/gpt-4.1-mini-2025-04-14")[i % 2],
            "repo-debugger",
            "0.7.1",
            "a" * 64,
            "discovery",
            "discovery",
            i % 3,
            None,
            states[i % 3],
            int(i % 3 == 0),
            1.0 if i % 3 == 0 else 0.0,
            f"2026-08-13T10:{i:02d}:00.000000+00:00",
            "2026-08-13T11:00:00.000000+00:00",
        )
        for i in range(n)
    ]
    with sqlite3.connect(root / "index.sqlite") as conn:
        marks = ", ".join("?" * 18)  # placeholders only; the values are bound
        conn.executemany(f"INSERT INTO runs VALUES ({marks})", rows)  # noqa: S608
    conn.close()


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=15, help="Runs of each command.")
    args = ap.parse_args()
    py = sys.executable
    work = Path(tempfile.mkdtemp(prefix="skillci-startup-"))
    env = {**os.environ, "SKILLCI_HOME": str(work / "home"), "COLUMNS": "80"}
    # As installed (pip compiles .pyc files): the warm-up runs write them if missing.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    full = work / "full"
    _store_with_runs(full, 50)
    cmds = {
        "python -c pass": [py, "-c", "pass"],
        "skillci --help": [py, "-m", "skillci", "--help"],
        "skillci trace ls": [py, "-m", "skillci", "trace", "ls"],
        "trace ls, 50 runs": [py, "-m", "skillci", "trace", "ls", "--home", str(full)],
    }
    load_before = os.getloadavg()[0]
    for cmd in cmds.values():  # warm the page cache and .pyc files
        _time(cmd, env, work)
    walls: dict[str, list[float]] = {k: [] for k in cmds}
    cpus: dict[str, list[float]] = {k: [] for k in cmds}
    for _ in range(args.rounds):
        for name, cmd in cmds.items():
            wall, cpu = _time(cmd, env, work)
            walls[name].append(wall)
            cpus[name].append(cpu)
    print(
        f"{args.rounds} rounds, load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    )
    print(f"{'command':18} {'wall med':>9} {'wall min':>9} {'x':>6} {'CPU med':>8} {'x':>6}")
    cb = statistics.median(cpus["python -c pass"])
    mb = min(walls["python -c pass"])
    for name in cmds:
        wm, wl, cm = statistics.median(walls[name]), min(walls[name]), statistics.median(cpus[name])
        print(
            f"{name:18} {wm * 1000:7.0f}ms {wl * 1000:7.0f}ms {wl / mb:5.1f}x "
            f"{cm * 1000:6.0f}ms {cm / cb:5.1f}x"
        )
    print("x: ratio to python -c pass (wall: of the minimums; CPU: of the medians)")
    print("goal: skillci --help and skillci trace ls <= 3.0x python -c pass")
    print("stdout to /dev/null, COLUMNS=80")
    return 0


if __name__ == "__main__":
    sys.exit(main())
