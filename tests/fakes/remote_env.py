"""A fake remote environment (the network boundary of :mod:`skillci.runners.remote`).

:class:`FakeRemote` completes each submitted attempt after a seeded random latency on one
timer thread, with a real :class:`RunRecord` (built as tests/builders.py does): an
``infra_error`` with probability ``error_rate``, else passed with the task's probability plus
``lift`` on the head package, costing ``usd`` dollars (None: unknown, as an engine that
reports no price; the tasks in ``unknown_usd`` always report none). :func:`gate_inputs` builds the gate's real inputs: the bundled
skill on both sides (the head one line longer) and ``n`` copies of a bundled task.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import random
import threading
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path

from skillci.errors import ModelError
from skillci.flows.gate import GateInputs, _Side
from skillci.providers import health
from skillci.runners.base import TrialSpec, builtin_agent
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.trace.models import AgentRole, Cost, EvalState, RunRecord, RuntimeInfo, SkillRef
from tests.builders import run_record

REPO = Path(__file__).resolve().parents[2]


@dataclass
class FakeRemote:
    """Completes attempts after ``latency`` s (uniform 0.5x..1.5x) on one timer thread."""

    latency: float = 0.0
    error_rate: float = 0.0
    lift: float = 0.0
    head_hash: str | None = None
    seed: int = 0
    #: tasks whose every attempt fails its measurement
    always_error: frozenset[str] = frozenset()
    #: dollars each attempt's record reports (None: unknown)
    usd: float | None = None
    #: tasks whose attempts report no cost
    unknown_usd: frozenset[str] = frozenset()
    name: str = "fake"
    #: a route every attempt finds down: the attempt marks it so in
    #: :mod:`skillci.providers.health` (as the trial gateway's model client does) and is
    #: an ``infra_error``
    down_route: str | None = None
    #: (task, repeat, attempt, head side) of every attempt submitted
    submitted: list[tuple[str, int, int, bool]] = field(default_factory=list)
    cancelled: int = 0
    _heap: list[tuple[float, int, Future[RunRecord], TrialSpec, int]] = field(default_factory=list)
    _cv: threading.Condition = field(default_factory=threading.Condition)
    _seq: itertools.count[int] = field(default_factory=itertools.count)
    _rng: random.Random = field(init=False)
    _thread: threading.Thread | None = None

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def submit(self, spec: TrialSpec, attempt: int) -> Future[RunRecord]:
        fut: Future[RunRecord] = Future()
        self.submitted.append(
            (spec.task.id, spec.repeat_index, attempt, spec.skill_package_hash == self.head_hash)
        )
        due = time.monotonic() + self.latency * self._rng.uniform(0.5, 1.5)
        with self._cv:
            heapq.heappush(self._heap, (due, next(self._seq), fut, spec, attempt))
            if self._thread is None:
                self._thread = threading.Thread(target=self._loop, daemon=True)
                self._thread.start()
            self._cv.notify()
        return fut

    def cancel(self, future: Future[RunRecord]) -> bool:
        ok = future.cancel()
        self.cancelled += ok
        return ok

    def _loop(self) -> None:
        while True:
            with self._cv:
                while not self._heap or self._heap[0][0] > time.monotonic():
                    wait = self._heap[0][0] - time.monotonic() if self._heap else None
                    self._cv.wait(wait)
                _, _, fut, spec, attempt = heapq.heappop(self._heap)
            if fut.set_running_or_notify_cancel():
                fut.set_result(self._record(spec, attempt))

    def _record(self, spec: TrialSpec, attempt: int) -> RunRecord:
        tid = spec.task.id
        head = spec.skill_package_hash == self.head_hash
        h = hashlib.sha256(f"{self.seed}|{tid}|{head}|{spec.repeat_index}|{attempt}".encode())
        u = int.from_bytes(h.digest()[:8], "big") / 2**64
        v = int.from_bytes(h.digest()[8:16], "big") / 2**64
        p = int.from_bytes(hashlib.sha256(tid.encode()).digest()[:2], "big") / 2**16
        if self.down_route is not None:
            health.mark_down(self.down_route, "fp", ModelError("connection refused"))
        if tid in self.always_error or v < self.error_rate or self.down_route is not None:
            state = EvalState.infra_error
        else:
            ok = u < min(1.0, p + (self.lift if head else 0.0))
            state = EvalState.passed if ok else EvalState.failed
        skill = (
            SkillRef(name="repo-debugger", version="1.0.0", content_hash=spec.skill_package_hash)
            if spec.skill_package_hash
            else None
        )
        return run_record(
            run_id=f"{tid}-{'h' if head else 'b'}-{spec.repeat_index}-{attempt}-s{self.seed}-{next(self._seq)}",
            task_id=tid,
            agent_role=AgentRole.student,
            state=state,
            repeat_index=spec.repeat_index,
            runtime=RuntimeInfo(harness="skillci-agent", skill=skill),
            cost=Cost(usd=None if tid in self.unknown_usd else self.usd),
        )


def gate_inputs(tmp: Path, tasks: int) -> GateInputs:
    """Real gate inputs: the bundled skill on both sides (head one line longer) and ``tasks``
    copies of a bundled task under distinct ids."""
    base_pkg = SkillPackage.from_dir(REPO / "skills" / "repo-debugger")
    skill_md = base_pkg.files["SKILL.md"] + b"\nCheck the failing test first.\n"
    head_pkg = base_pkg.with_files({"SKILL.md": skill_md})
    task = load_task(REPO / "evals" / "tasks" / "cfg-bool-flag")
    copies = [
        task.model_copy(update={"id": f"t{i:04d}", "content_hash": f"{i:064x}"})
        for i in range(tasks)
    ]
    base = _Side("b" * 40, base_pkg, render(base_pkg, "builtin"), {"bench": copies})
    head = _Side("h" * 40, head_pkg, render(head_pkg, "builtin"), {"bench": copies})
    return GateInputs("b" * 40, "h" * 40, "skills/repo-debugger", base, head,
                      builtin_agent("sim/student"), changed={"SKILL.md"})  # fmt: skip
