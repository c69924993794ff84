"""Wall and CPU time of ``skillci demo`` (issue 17 item 2: <= 90 s on an idle 2-core machine).

Runs the demo as a child of this process, which is made a *child subreaper*: every
descendant (the forkserver, pool workers, bubblewrap, the tools and verifiers run inside it)
is reaped here, so ``RUSAGE_CHILDREN`` is the CPU time of the whole process tree — the work.
Wall time minus CPU time / cores is time spent waiting. Also prints each step's seconds
(from ``skillci demo --json``) and the machine's load average, since a busy machine
stretches the wall time but not the CPU time.

    python benchmarks/demo_time.py [--html] [--keep]
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PR_SET_CHILD_SUBREAPER = 36


def _reap_all() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, 0)
        except ChildProcessError:
            return
        if pid == 0:  # pragma: no cover
            return


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--html", action="store_true", help="Also write the HTML report.")
    ap.add_argument("--keep", action="store_true", help="Keep the scratch repository.")
    args = ap.parse_args()
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1)
    work = Path(tempfile.mkdtemp(prefix="skillci-demo-bench-"))
    cmd = [sys.executable, "-m", "skillci", "demo", "--dir", str(work / "repo"), "--json"]
    if not args.html:
        cmd.append("--no-html")
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    load0 = os.getloadavg()[0]
    t0 = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    wall = time.monotonic() - t0
    _reap_all()  # orphaned descendants (the forkserver) count too
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    load1 = os.getloadavg()[0]
    if proc.returncode != 0:
        print(proc.stderr[-3000:], file=sys.stderr)
        print(f"skillci demo exited {proc.returncode}", file=sys.stderr)
        return 1
    doc = json.loads(proc.stdout)
    cpu = ru.ru_utime + ru.ru_stime
    cores = os.cpu_count() or 1
    print(f"demo wall time   {wall:7.1f} s   (goal <= 90 s on an idle 2-core machine)")
    print(f"demo CPU time    {cpu:7.1f} s   (user {ru.ru_utime:.1f} s, sys {ru.ru_stime:.1f} s)")
    print(f"CPU use          {cpu / wall / cores:7.0%}    of {cores} cores")
    print(f"load average     {load0:7.1f} -> {load1:.1f} (1 min; an idle machine is < 0.5)")
    print(f"sandbox          {doc.get('sandbox', '?')}")
    for s in doc["steps"]:
        print(f"  {s['seconds']:6.1f} s  {s['step']}")
    if args.keep:
        print(f"scratch repository: {work / 'repo'}")
    else:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
