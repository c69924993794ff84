"""Re-running `skillci gate` on an unchanged PR: model calls and wall time (target: 0 and <= 2 s).

Builds a scratch repository from the bundled skill and tasks (base = the skill without
`finish.report-success`, head = the bundled skill), runs the gate once to fill the trial
cache, then runs the same `skillci gate` command again as a fresh process and prints what
the second run cost. Usage: python benchmarks/gate_rerun.py [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="skillci-bench-") as tmp:
        repo = Path(tmp) / "repo"
        repo.mkdir()
        shutil.copytree(ROOT / "skills", repo / "skills")
        shutil.copytree(ROOT / "evals", repo / "evals")
        (repo / ".gitignore").write_text(".skillci/\n")
        env = dict(
            os.environ,
            GIT_AUTHOR_NAME="b",
            GIT_AUTHOR_EMAIL="b@b",
            GIT_COMMITTER_NAME="b",
            GIT_COMMITTER_EMAIL="b@b",
            SKILLCI_HOME=str(Path(tmp) / "home"),
        )
        os.environ.update(env)
        git(repo, "init", "-q", "-b", "main")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "bundled")
        git(repo, "checkout", "-q", "-b", "base")
        git(repo, "rm", "-q", "skills/repo-debugger/skillci/rules/finish.yaml")
        git(repo, "commit", "-qm", "without finish")
        git(repo, "checkout", "-q", "main")
        cmd = [
            sys.executable,
            "-m",
            "skillci",
            "gate",
            "--skill",
            "repo-debugger",
            "--base",
            "base",
            "--head",
            "main",
            "--repeat",
            str(args.repeat),
            "--json",
        ]
        runs = []
        for label in ("first (cold cache)", "second (unchanged PR)"):
            t0 = time.perf_counter()
            proc = subprocess.run(
                cmd, cwd=repo, env=env, capture_output=True, text=True, check=False
            )
            wall = time.perf_counter() - t0
            if proc.returncode not in (0, 1):
                print(proc.stderr, file=sys.stderr)
                return 3
            rep = json.loads(proc.stdout)
            runs.append((label, wall, rep))
            print(
                f"{label}: verdict {rep['verdict']}, trials run {rep['trials_run']}, cached "
                f"{rep['trials_cached']}, reused {rep['trials_reused']}, model calls {rep['model_calls']}, "
                f"wall {wall:.2f} s"
            )
        _, wall2, rep2 = runs[1]
        ok = rep2["model_calls"] == 0 and rep2["trials_run"] == 0 and wall2 <= 2.0
        print(
            f"re-run: {rep2['model_calls']} model calls, {wall2:.2f} s "
            f"(target 0 and <= 2.00 s: {'met' if ok else 'NOT met'}); "
            f"speed-up {runs[0][1] / wall2:.1f}x over the cold run"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
