"""The machinery every trial scheduler shares: a worker pool that dies with its parent,
moving incomplete trial dirs aside, and the hard cap on trials per command.

- :func:`worker_pool` — a ``forkserver`` :class:`~concurrent.futures.ProcessPoolExecutor`
  whose workers ignore Ctrl-C (the parent handles it) and die when the command's process
  dies, even by SIGKILL. A worker's parent is the forkserver, not the command, and the
  forkserver only exits once every worker has (each holds its "alive" pipe), so
  ``PR_SET_PDEATHSIG`` alone never fires: each worker also watches the command's process
  through a pidfd (a daemon thread blocked in ``select``) and SIGKILLs itself when it
  exits. Then the forkserver and the resource tracker exit too.
- :func:`quarantine` — an incomplete trial dir goes to ``.incomplete/<name>-<stamp>-<pid>``
  beside the trials it belongs to: nothing is deleted, nothing half-written is reused.
- :func:`check_trial_count` — ``tasks x repeats`` above :data:`MAX_TRIALS` is a usage error
  (exit 2) before anything is planned, never a MemoryError.

Used by :mod:`skillci.runners.scheduler` (trials keyed by cache key under the state dir)
and :mod:`skillci.runners.slots` (trials in named ``test-NNN`` dirs of a run dir).
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import select
import shutil
import signal
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from skillci.errors import UsageError

INCOMPLETE = ".incomplete"
#: Most trials one command may plan (tasks x repeats).
MAX_TRIALS = 100_000
_PR_SET_PDEATHSIG = 1


def _kill_self() -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _watch(owner: int) -> None:
    """Block until process ``owner`` exits, then SIGKILL this process."""
    try:
        fd = os.pidfd_open(owner)
    except ProcessLookupError:
        _kill_self()
        return
    except (OSError, AttributeError):  # no pidfd (old kernel): poll, at most 0.5 s late
        while True:
            time.sleep(0.5)
            try:
                os.kill(owner, 0)
            except ProcessLookupError:
                _kill_self()
            except PermissionError:
                pass
    select.select([fd], [], [])
    _kill_self()


def die_with_parent(owner: int) -> None:
    """Pool initializer: die when ``owner`` (the command's process) or the direct parent
    dies, even by SIGKILL; ignore Ctrl-C here (the command handles it)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL("libc.so.6", use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    threading.Thread(target=_watch, args=(owner,), name="skillci-owner-watch", daemon=True).start()


def worker_pool(parallel: int, preload: Sequence[str]) -> ProcessPoolExecutor:
    """At most ``parallel`` workers from a forkserver that has imported ``preload``; they
    die with this process (see the module docstring)."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload(list(preload))
    return ProcessPoolExecutor(
        max_workers=parallel,
        mp_context=ctx,
        initializer=die_with_parent,
        initargs=(os.getpid(),),
    )


def quarantine(path: Path, incomplete_dir: Path) -> Path | None:
    """Move the dir ``path`` into ``incomplete_dir``; where it went (None if absent)."""
    if not path.exists():
        return None
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S%f")
    dest = incomplete_dir / f"{path.name}-{stamp}-{os.getpid()}"
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.move(str(path), str(dest))
    return dest


def check_trial_count(tasks: int, repeats: int) -> None:
    """Refuse a plan of more than :data:`MAX_TRIALS` trials (exit 2)."""
    if tasks * repeats > MAX_TRIALS:
        raise UsageError(
            f"{tasks} task(s) x {repeats} repeat(s) is more than {MAX_TRIALS} trials",
            hint="lower --repeat (or run fewer tasks)",
        )


__all__ = [
    "INCOMPLETE",
    "MAX_TRIALS",
    "check_trial_count",
    "die_with_parent",
    "quarantine",
    "worker_pool",
]
