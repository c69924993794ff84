"""The machinery every trial scheduler shares: the command's warm trial pool, the bounded
pool of sandboxed commands, moving incomplete trial dirs aside, and the hard cap on trials.

- :func:`trial_pool` — the command's one pool of trial threads (docs/design/231). A trial
  mostly waits: on a model endpoint, or on a subprocess (git, the sandbox, the verifier).
  Neither needs a process of its own, so trials run in daemon threads of the command's
  process, made once per command and grown to the largest ``--parallel`` asked for, reused
  by every suite and round. Daemon threads die with the process (Ctrl-C, SIGKILL); what
  they started dies too: bubblewrap runs ``--die-with-parent`` and the unsandboxed shell
  under ``setpriv --pdeathsig KILL``, both tied to the long-lived thread that started them.
  CPU-bound work is bounded separately: :func:`sandbox_slot` lets at most as many
  sandboxed/host commands run at once as the machine has cores, and model calls are
  bounded per route in :mod:`skillci.providers.client`.
- :func:`quarantine` — an incomplete trial dir goes to ``.incomplete/<name>-<stamp>-<pid>``
  beside the trials it belongs to: nothing is deleted, nothing half-written is reused.
- :func:`check_trial_count` — ``tasks x repeats`` above :data:`MAX_TRIALS` is a usage error
  (exit 2) before anything is planned, never a MemoryError.

Used by :mod:`skillci.runners.scheduler` (trials keyed by cache key under the state dir),
:mod:`skillci.runners.slots` (trials in named ``test-NNN`` dirs of a run dir) and the
raw-task flow (harness attempts).
"""

from __future__ import annotations

import contextlib
import itertools
import os
import queue
import shutil
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from datetime import UTC, datetime
from pathlib import Path
from typing import TypeVar

from skillci.errors import UsageError
from skillci.providers.queueing import hold

T = TypeVar("T")
R = TypeVar("R")

INCOMPLETE = ".incomplete"
#: Most trials one command may plan (tasks x repeats).
MAX_TRIALS = 100_000


class TrialPool:
    """Daemon threads running submitted calls; grows, never shrinks (see module docstring).

    Unlike :class:`~concurrent.futures.ThreadPoolExecutor` its threads are daemons, so a
    Ctrl-C'd command exits at once instead of joining the trials still running, and a
    thread never exits while the command lives (the death signal of a subprocess follows
    the thread that started it)."""

    def __init__(self) -> None:
        self._work: queue.SimpleQueue[tuple[Future[object], Callable[[], object]]] = (
            queue.SimpleQueue()
        )
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    @property
    def size(self) -> int:
        return len(self._threads)

    def grow(self, size: int) -> TrialPool:
        with self._lock:
            while len(self._threads) < size:
                t = threading.Thread(
                    target=self._serve, name=f"skillci-trial-{len(self._threads)}", daemon=True
                )
                t.start()
                self._threads.append(t)
        return self

    def submit(self, fn: Callable[..., object], *args: object) -> Future[object]:
        fut: Future[object] = Future()
        self._work.put((fut, lambda: fn(*args)))
        return fut

    def _serve(self) -> None:
        while True:
            fut, call = self._work.get()
            if not fut.set_running_or_notify_cancel():
                continue
            try:
                fut.set_result(call())
            except BaseException as exc:  # handed to the waiting scheduler
                fut.set_exception(exc)


_POOL = TrialPool()


def trial_pool(parallel: int) -> TrialPool:
    """The command's trial pool with at least ``parallel`` threads."""
    return _POOL.grow(max(1, parallel))


def submit_bounded(fn: Callable[[T], R], items: Sequence[T], parallel: int) -> list[Future[object]]:
    """``fn(item)`` for each item in the trial pool, at most ``parallel`` at a time (the pool
    may be larger: another stage asked for more); futures in the order of ``items``."""
    gate = threading.BoundedSemaphore(max(1, parallel))

    def bounded(item: T) -> R:
        with gate:
            return fn(item)

    pool = trial_pool(min(parallel, len(items)))
    return [pool.submit(bounded, item) for item in items]


def cores() -> int:
    """CPUs this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not Linux
        return max(1, os.cpu_count() or 1)


#: Env override of how many sandboxed/host commands may run at once (default: cores).
SANDBOX_SLOTS_ENV = "SKILLCI_SANDBOX_SLOTS"
_SLOTS: threading.BoundedSemaphore | None = None
_SLOTS_LOCK = threading.Lock()


def _slots() -> threading.BoundedSemaphore:
    global _SLOTS
    with _SLOTS_LOCK:
        if _SLOTS is None:
            raw = os.environ.get(SANDBOX_SLOTS_ENV, "")
            n = int(raw) if raw.isdigit() and int(raw) > 0 else cores()
            _SLOTS = threading.BoundedSemaphore(n)
        return _SLOTS


@contextlib.contextmanager
def sandbox_slot() -> Iterator[None]:
    """Hold one of the command's sandbox slots (at most cores commands run at once); the wait
    for it is queueing time, not the trial's (:func:`skillci.providers.queueing.hold`)."""
    with hold(_slots()):
        yield


TRASH = ".trash"
_TRASH_QUEUE: queue.SimpleQueue[Path] = queue.SimpleQueue()
_TRASH_THREAD: list[threading.Thread] = []
_TRASH_SEQ = itertools.count()
_TRASH_SWEPT: set[Path] = set()


def _empty_trash() -> None:
    while True:
        shutil.rmtree(_TRASH_QUEUE.get(), ignore_errors=True)


def discard_tree(path: Path, trash_dir: Path) -> None:
    """Remove the dir ``path`` off the hot path: rename it into ``trash_dir`` (same file
    system, one syscall) and let a background thread delete it. Whatever a killed command
    leaves in ``trash_dir`` is deleted by the next discard into it."""
    if not path.exists():
        return
    trash_dir.mkdir(parents=True, exist_ok=True)
    dest = trash_dir / f"{path.name}-{os.getpid()}-{next(_TRASH_SEQ)}"
    try:
        os.rename(path, dest)
    except OSError:  # another file system, or a name clash: delete here
        shutil.rmtree(path, ignore_errors=True)
        return
    with _SLOTS_LOCK:
        if trash_dir not in _TRASH_SWEPT:  # once per dir: a killed command's leftovers
            _TRASH_SWEPT.add(trash_dir)
            for left in trash_dir.iterdir():
                if left != dest:
                    _TRASH_QUEUE.put(left)
        if not _TRASH_THREAD:
            t = threading.Thread(target=_empty_trash, name="skillci-trash", daemon=True)
            t.start()
            _TRASH_THREAD.append(t)
    _TRASH_QUEUE.put(dest)


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
    "SANDBOX_SLOTS_ENV",
    "TRASH",
    "TrialPool",
    "check_trial_count",
    "cores",
    "discard_tree",
    "quarantine",
    "sandbox_slot",
    "submit_bounded",
    "trial_pool",
]
