"""Finding processes and containers a test run started and left behind (Linux /proc).

The pytest process (and every xdist worker) makes itself a *child subreaper*
(``PR_SET_CHILD_SUBREAPER``): a process that daemonizes (double fork, setsid) is re-parented
to the nearest pytest process instead of init, so it stays visible as a descendant and
cannot escape the end-of-session check in tests/conftest.py.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
import time
from dataclasses import dataclass

PR_SET_CHILD_SUBREAPER = 36


def become_subreaper() -> bool:
    """Orphaned descendants are re-parented to this process (Linux >= 3.4); False elsewhere."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


@dataclass(frozen=True)
class Proc:
    pid: int
    ppid: int
    state: str
    cmdline: str

    def __str__(self) -> str:
        return f"pid {self.pid} (parent {self.ppid}, state {self.state}): {self.cmdline[:200]}"


def _read(pid: int) -> Proc | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as f:
            stat = f.read()
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            cmd = f.read().replace(b"\0", b" ").decode("utf-8", "replace").strip()
    except OSError:
        return None
    head, _, rest = stat.rpartition(")")
    fields = rest.split()
    if len(fields) < 2:
        return None
    comm = head.partition("(")[2]
    return Proc(pid, int(fields[1]), fields[0], cmd or f"[{comm}]")


def processes() -> dict[int, Proc]:
    out: dict[int, Proc] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            p = _read(int(name))
            if p is not None:
                out[p.pid] = p
    return out


def descendants(root: int) -> list[Proc]:
    """Every live process below ``root`` (zombies included), parents before children."""
    table = processes()
    children: dict[int, list[Proc]] = {}
    for p in table.values():
        children.setdefault(p.ppid, []).append(p)
    out: list[Proc] = []
    todo = [root]
    while todo:
        for child in sorted(children.get(todo.pop(), []), key=lambda p: p.pid):
            out.append(child)
            todo.append(child.pid)
    return out


def reap_zombies() -> None:
    """Collect exited children (orphans re-parented to us become our zombies)."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def stop_interpreter_helpers() -> None:
    """multiprocessing's forkserver and resource tracker live as long as the interpreter by
    design; stop them so that only processes a test really left behind remain."""
    from multiprocessing import forkserver, resource_tracker

    for helper in (
        getattr(forkserver, "_forkserver", None),
        getattr(resource_tracker, "_resource_tracker", None),
    ):
        stop = getattr(helper, "_stop", None)
        if stop is not None:
            with contextlib.suppress(Exception):
                stop()


def leftovers(root: int, ignore: set[int], grace: float = 5.0) -> list[Proc]:
    """Live (non-zombie) descendants of ``root`` not in ``ignore``, after up to ``grace``
    seconds for processes that are already on their way out."""
    deadline = time.monotonic() + grace
    while True:
        reap_zombies()
        live = [p for p in descendants(root) if p.pid not in ignore and p.state not in "ZX"]
        if not live or time.monotonic() >= deadline:
            return live
        time.sleep(0.1)


def kill(procs: list[Proc]) -> None:
    for p in procs:
        with contextlib.suppress(OSError):
            os.kill(p.pid, signal.SIGKILL)
    time.sleep(0.2)
    reap_zombies()
