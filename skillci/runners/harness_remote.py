"""What every harness runner of the trial commands shares (designs 409, 431).

``--runner harbor`` and ``--runner benchflow`` each run one trial
:class:`~skillci.runners.remote.RemoteTrials` submits as one job of an external harness CLI
(``harbor run``, ``bench eval run``) on a thread pool of ``concurrency`` threads, and read it
back with that harness's importer. :class:`HarnessEnvironment` is that part: the pool,
``submit``/``cancel``/``close``, one attempt's dir under ``work_dir``, and the record keyed as
the gate keys the trial (the spec's task id, repeat, suite, split, seed; the runner and
``<runner>:<environment>`` in ``runtime``). A subclass says how to launch the job
(:meth:`HarnessEnvironment._launch`) and how to read one result dir
(:meth:`HarnessEnvironment._import`).

A harness failure (the CLI cannot start, times out, or leaves no single result dir) is an
``infra_error`` record — a failed measurement RemoteTrials may retry — never a failed trial.
"""

from __future__ import annotations

import shutil
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from skillci.errors import InvalidInputError, SkillciError
from skillci.runners.base import TrialSpec
from skillci.trace.models import EvalState, RunRecord, SkillRef

#: Seconds one harness job may take before it counts as a harness failure.
DEFAULT_TIMEOUT = 1800.0


def write_skills(spec: TrialSpec, where: Path) -> list[Path]:
    """The trial's skill (then its companions) as dirs under ``where``, for the harness's
    skills option (``--skills DIR`` each, or ``--skills-dir`` their parent)."""
    dirs: list[Path] = []
    for skill in [s for s in (spec.skill, *spec.companion_skills) if s is not None]:
        root = where / skill.name
        for f in skill.files:
            (root / f.path).parent.mkdir(parents=True, exist_ok=True)
            (root / f.path).write_bytes(f.content)
        dirs.append(root)
    return dirs


def skill_ref(spec: TrialSpec) -> SkillRef | None:
    """The skill a record of ``spec`` names (its package hash, as a local record has it)."""
    if spec.skill is None:
        return None
    return SkillRef(
        name=spec.skill.name,
        version=spec.skill.version,
        content_hash=spec.skill_package_hash or spec.skill.package_hash,
    )


@dataclass
class HarnessEnvironment:
    """A :class:`~skillci.runners.remote.RemoteEnvironment` on environment ``environment``
    of harness :attr:`runner` (its ``name``, as records' ``metadata.remote_environment`` show
    it: ``<runner>:<environment>``). Jobs dirs go under ``work_dir`` (one per attempt; kept
    unless ``keep_jobs`` is False). Construction runs :meth:`_check`, so a command refuses
    before any trial."""

    #: the harness's name (``runtime.runner`` of its records)
    runner: ClassVar[str]
    #: its name in messages (``Harbor``, ``BenchFlow``)
    label: ClassVar[str]
    #: the field naming its executable (``harbor``, ``bench``), the command-line option that
    #: sets it (``--harbor``; None: none on the trial commands) and the variable read without
    #: it (``SKILLCI_HARBOR``, ``SKILLCI_BENCH``)
    executable_field: ClassVar[str]
    executable_option: ClassVar[str | None] = None
    executable_variable: ClassVar[str]
    #: what the harness calls one trial's result dir (said when it left none, or several)
    result_dir: ClassVar[str] = "trial"
    #: its environments (``--env``) -> the credentials each needs: any one group of
    #: environment variables, all of it set (none: runs with what this machine has)
    environments: ClassVar[dict[str, tuple[tuple[str, ...], ...]]]

    environment: str
    work_dir: Path
    concurrency: int = 4
    timeout: float | None = DEFAULT_TIMEOUT
    keep_jobs: bool = True
    name: str = field(init=False)
    _pool: ThreadPoolExecutor = field(init=False)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise InvalidInputError(
                f"{self.runner} concurrency must be >= 1", hint="pass --concurrency 1 or more"
            )
        self._check()
        self.name = f"{self.runner}:{self.environment}"
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix=self.runner)

    _exe: str = field(init=False)

    def _check(self) -> None:
        self._exe = self.preflight(self.environment, self.executable)

    @property
    def executable(self) -> str | None:
        """The harness executable the caller named (None: its variable, else PATH)."""
        raise NotImplementedError

    @classmethod
    def preflight(cls, environment: str, executable: str | None) -> str:
        """Refuse (with a one-line hint) what cannot run here -- the environment, its
        credentials, the harness's executable -- before any trial; the executable's path."""
        raise NotImplementedError

    @classmethod
    def check_agent(cls, kind: str) -> None:
        """Refuse (exit 2) an agent kind this harness cannot run (all run by default)."""

    def _launch(self, spec: TrialSpec, attempt: int, run_dir: Path, log: Path) -> int:
        """Run the harness's job of one attempt into ``run_dir / "jobs"``; its exit code."""
        raise NotImplementedError

    def _results(self, jobs: Path) -> list[Path]:
        """The result dirs the job left under ``jobs`` (one when it ran)."""
        raise NotImplementedError

    def _import(self, result: Path, spec: TrialSpec) -> RunRecord:
        """The harness importer's record of ``result`` (an empty dir when none was left) for
        ``spec`` (its skill: :func:`skill_ref`)."""
        raise NotImplementedError

    def _adjust(self, spec: TrialSpec, rec: RunRecord) -> tuple[dict[str, str], dict[str, object]]:
        """``runtime`` and ``metadata`` fields the harness runner sets itself on the imported
        record (none by default)."""
        return {}, {}

    def _warnings(self, spec: TrialSpec) -> list[str]:
        """Caveats of how the harness ran ``spec`` that its record must carry (none by
        default)."""
        return []

    def submit(self, spec: TrialSpec, attempt: int) -> Future[RunRecord]:
        return self._pool.submit(self._attempt, spec, attempt)

    def cancel(self, future: Future[RunRecord]) -> bool:
        """True for an attempt not started yet; a started job runs to its end."""
        return future.cancel()

    def close(self) -> None:
        """Drop the attempts not started; wait for the running ones."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _attempt(self, spec: TrialSpec, attempt: int) -> RunRecord:
        tag = f"{spec.task.id}-r{spec.repeat_index}-a{attempt}-{uuid.uuid4().hex[:8]}"
        run_dir = self.work_dir / tag
        run_dir.mkdir(parents=True)
        log = run_dir / f"{self.runner}.log"
        cause: str | None = None
        found: Path | None = None
        try:
            code = self._launch(spec, attempt, run_dir, log)
            dirs = self._results(run_dir / "jobs")
            if len(dirs) == 1:
                found = dirs[0]
            else:
                tail = log.read_text(errors="replace")[-400:] if log.is_file() else ""
                cause = (
                    f"{self.runner} exited {code} and left {len(dirs)} {self.result_dir} dirs: "
                    f"{tail!r}"
                )
        except (SkillciError, OSError) as exc:  # could not start: the harness failed
            cause = f"{self.runner} run failed: {exc}"
        rec = self._record(spec, found, run_dir, cause)
        if not self.keep_jobs:
            shutil.rmtree(run_dir, ignore_errors=True)
        return rec

    def _record(
        self, spec: TrialSpec, found: Path | None, run_dir: Path, cause: str | None
    ) -> RunRecord:
        """The importer's record of the result dir (an empty one when the harness left none:
        ``infra_error``), as the gate keys it: the spec's task id, repeat, suite and skill."""
        if found is None:
            found = run_dir / f"no-{self.result_dir}__00000000"
            found.mkdir(exist_ok=True)
        rec = self._import(found, spec)
        runtime, extra = self._adjust(spec, rec)
        meta = {**rec.metadata, f"{self.runner}_jobs_dir": str(run_dir / "jobs"), **extra}
        update: dict[str, object] = {}
        route = spec.agent.route
        if spec.agent.kind == "builtin" and route is not None:  # as a local record names it
            update["model"] = rec.model.model_copy(
                update={"route": spec.agent.route_name, "name": route.model_id}
            )
        update |= {
            "task_id": spec.task.id,
            "repeat_index": spec.repeat_index,
            "suite": spec.suite,
            "split": spec.split,
            "runtime": rec.runtime.model_copy(
                update={"runner": self.runner, "sandbox": self.name, "seed": spec.seed, **runtime}
            ),
            "metadata": meta,
            "warnings": [*rec.warnings, *self._warnings(spec)],
        }
        if cause is not None:  # the harness failed: a failed measurement, never a verdict
            update["evaluation"] = rec.evaluation.model_copy(
                update={"state": EvalState.infra_error, "passed": False, "verifier_output": cause}
            )
            meta["harness_error"] = cause
        return rec.model_copy(update=update)


__all__ = ["DEFAULT_TIMEOUT", "HarnessEnvironment", "skill_ref", "write_skills"]
