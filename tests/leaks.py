"""Finding processes and containers a test run started and left behind (Linux /proc).

Two nets: the process tree below the pytest process, and an environment token. Every pytest
process puts a fresh token in its environment at start-up (``SKILLCI_TEST_RUN`` in the
controller, ``SKILLCI_TEST_WORKER`` in an xdist worker); every process it starts inherits it,
so a daemon that double-forks away from the tree (re-parented to init) is still found by
scanning ``/proc/*/environ``. (A child subreaper would keep such daemons in the tree, but the
sandbox's orphaned bwrap helpers then pile up as zombies of the worker: tried and dropped.)
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from dataclasses import dataclass


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


def carrying(var: str, value: str) -> set[int]:
    """Pids of processes whose initial environment has ``var=value``."""
    needle = f"{var}={value}".encode()
    out: set[int] = set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as f:
                if needle in f.read().split(b"\0"):
                    out.add(int(name))
        except OSError:
            continue
    return out


def leftovers(
    root: int, ignore: set[int], token: tuple[str, str] | None = None, grace: float = 5.0
) -> list[Proc]:
    """Live (non-zombie) processes below ``root`` or carrying ``token`` (var, value), except
    ``root`` and ``ignore``, after up to ``grace`` seconds for those already on their way out."""
    deadline = time.monotonic() + grace
    while True:
        reap_zombies()
        found = {p.pid: p for p in descendants(root)}
        if token is not None:
            table = processes()
            found.update({pid: table[pid] for pid in carrying(*token) if pid in table})
        live = [
            p
            for pid, p in sorted(found.items())
            if pid != root and pid not in ignore and p.state not in "ZX"
        ]
        if not live or time.monotonic() >= deadline:
            return live
        time.sleep(0.1)


def kill(procs: list[Proc]) -> None:
    for p in procs:
        with contextlib.suppress(OSError):
            os.kill(p.pid, signal.SIGKILL)
    time.sleep(0.2)
    reap_zombies()
