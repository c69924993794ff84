"""Queueing for shared slots (skillci.providers.queueing): the per-route call bound under a
scheduler, and time spent waiting for a slot not counted against an agent's deadline."""

from __future__ import annotations

import threading
import time
from pathlib import Path

from skillci.agents.base import AgentContext
from skillci.providers.queueing import call_limit, hold, queued, route_call_limit


def _ctx(seconds: float) -> AgentContext:
    return AgentContext(
        task_id="t",
        instruction="",
        workspace=Path("."),
        shell=None,  # type: ignore[arg-type]  # never used here
        skill=None,
        seed=0,
        deadline=time.monotonic() + seconds,
    )


def test_the_call_bound_is_the_smaller_of_the_route_and_the_scheduler() -> None:
    assert route_call_limit(None) is None  # outside a scheduler: unbounded
    assert route_call_limit(3) == 3
    token = call_limit.set(16)
    try:
        assert route_call_limit(None) == 16
        assert route_call_limit(4) == 4
        assert route_call_limit(64) == 16
    finally:
        call_limit.reset(token)
    token = call_limit.set(1)
    try:
        assert route_call_limit(None) == route_call_limit(8) == 1  # p1: one call at a time
    finally:
        call_limit.reset(token)


def test_waiting_for_a_slot_does_not_use_up_the_agents_time() -> None:
    ctx = _ctx(10.0)
    slot = threading.Semaphore(1)
    slot.acquire()  # another trial holds the only slot for 0.4 s
    threading.Timer(0.4, slot.release).start()
    before = queued()
    with hold(slot):
        pass
    assert queued() - before >= 0.35
    assert ctx.time_left() > 9.9  # the 0.4 s queued are given back
    time.sleep(0.3)  # the agent's own time (a model call, a tool) is not
    assert ctx.time_left() < 9.75


def test_a_free_slot_adds_no_queueing_and_other_threads_do_not_count() -> None:
    ctx = _ctx(5.0)
    other = threading.Semaphore(1)
    other.acquire()
    t = threading.Thread(target=lambda: hold(other).__enter__())  # queues in its own thread
    t.start()
    time.sleep(0.3)
    other.release()
    t.join(timeout=10)
    with hold(threading.Semaphore(1)):
        pass
    assert ctx.time_left() < 4.75  # nothing queued in this thread: 0.3 s of its time gone
