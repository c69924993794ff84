"""Shared slots a trial queues for, and the time it spends queueing (docs/design/263).

A trial thread queues for two kinds of shared slot: a model call on a route
(:class:`skillci.providers.client.RouteLimiter`) and a sandboxed/host command
(:func:`skillci.runners.pool.sandbox_slot`). The scheduler admits more model-bound trials
than ``--parallel`` so that no call slot idles while a trial runs its tools or verifier;
the slots then decide who goes next. The time waited is not the trial's own:

- :data:`call_limit` — the scheduler's ``--parallel`` while a trial runs in this context:
  the default bound on calls in flight per route (:func:`route_call_limit`).
- :func:`hold` — acquire a slot and add the time spent waiting for it to this thread's
  :func:`queued` total, which the agent's deadline does not count
  (:meth:`skillci.agents.base.AgentContext.time_left`).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from contextvars import ContextVar

#: Calls in flight per route that the running scheduler allows (its ``--parallel``);
#: None outside a scheduler's trial: only the route's own ``max_concurrency`` bounds them.
call_limit: ContextVar[int | None] = ContextVar("skillci_call_limit", default=None)

_QUEUED = threading.local()


def queued() -> float:
    """Seconds this thread has spent waiting for slots so far (monotonic, never reset)."""
    total: float = getattr(_QUEUED, "sec", 0.0)
    return total


def acquire(slot: threading.Semaphore) -> None:
    """Acquire ``slot``; the wait for it counts as queueing time of this thread."""
    start = time.monotonic()
    slot.acquire()
    _QUEUED.sec = queued() + (time.monotonic() - start)


@contextlib.contextmanager
def hold(slot: threading.Semaphore) -> Iterator[None]:
    """Hold ``slot`` (:func:`acquire`) and release it on leaving."""
    acquire(slot)
    try:
        yield
    finally:
        slot.release()


def route_call_limit(max_concurrency: int | None) -> int | None:
    """The bound on one route's calls in flight here: the smaller of the route's
    ``max_concurrency`` and the running scheduler's ``--parallel`` (None: unbounded)."""
    bounds = [b for b in (max_concurrency, call_limit.get()) if b is not None]
    return min(bounds) if bounds else None


__all__ = ["acquire", "call_limit", "hold", "queued", "route_call_limit"]
