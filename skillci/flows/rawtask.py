"""``skillci eval raw-task``: seed 000's raw-task evaluation, on any runner.

One task, one skill, ``repeat`` attempts; attempt ``N`` lives in ``<output>/test-NNN/``::

    test-001/result.json       the attempt's RunRecord (skillci's structured result)
    test-001/trajectory.json   its events (the ACP/ATIF trajectory, converted)
    test-001/skill_check.json  SkillCheck: was the skill invoked (required with --require-skill)
    test-001/summary.json      AttemptSummary — written LAST: the completion marker
    test-001/run/              what the runner itself wrote (trial dir, bench/harbor job dir)

A ``test-NNN`` dir is reused only when it is *complete*: the four files parse and agree
(run id, event count, skill verdict) and its request key matches this request (task content,
skill content, harness, model, runner, image, --require-skill). Anything else is moved to
``<output>/.incomplete/`` and the attempt runs again; attempts of a *different* request in
the same output dir are an error, not silently mixed. One run per output dir at a time
(file lock). Runners (:mod:`skillci.runners.registry`): trial runners (``local``,
``docker``, plug-ins) run skillci's built-in agent (``--harness builtin``) or the task's
solution (``--harness oracle``); harness runners (``benchflow``, ``harbor``) run any
harness they know, in their own venvs. Missing tools are reported before anything runs.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from filelock import FileLock, Timeout
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillci.errors import UsageError
from skillci.fsutil import atomic_write_text, tree_hash
from skillci.runners.pool import INCOMPLETE, check_trial_count, quarantine, submit_bounded
from skillci.runners.registry import (
    HarnessAttempt,
    harness_runner,
    mode_of_runner,
    runner_entry,
    runner_names,
    trial_runner,
)
from skillci.skill.render import RenderedSkill
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose, Task
from skillci.tasks.skillset import select_skill
from skillci.trace.models import RunRecord, SkillRef
from skillci.trace.redact import Redactor, redact_files, redact_text

SCHEMA_VERSION = 1
#: A name in the runner registry (skillci.runners.registry): local, docker, benchflow,
#: harbor, plug-ins.
RunnerName = str
SUMMARY, RESULT, TRAJECTORY, SKILL_CHECK = (
    "summary.json",
    "result.json",
    "trajectory.json",
    "skill_check.json",
)
#: Phase -> share of the progress bar at its start.
PHASES = {"preparing": 0.05, "running": 0.10, "checking": 0.95, "done": 1.0, "reused": 1.0}


class RawTaskRequest(BaseModel):
    """What ``skillci eval raw-task`` was asked to do."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    harness: str = Field(description="builtin/oracle (local, docker) or a benchflow/harbor agent.")
    model: str = Field(description="provider/model-id (a route for the built-in agent).")
    task: Path = Field(description="The task dir (SkillsBench/Harbor layout).")
    skill_source: Path | None = Field(
        description="A skill dir, or a skills root (a task's environment/skills): the whole "
        "set is installed for each attempt."
    )
    skill: str | None = Field(
        default=None, description="The skill under test, when the skills root holds several."
    )
    output: Path = Field(description="Where test-NNN/ attempt dirs go.")
    require_skill: bool = Field(default=False, description="An attempt must invoke the skill.")
    repeat: int = Field(default=1, ge=1, description="Attempts.")
    max_parallel: int = Field(default=1, ge=1, description="Attempts at once.")
    image: str | None = Field(default=None, description="Use this image (docker, benchflow).")
    runner: RunnerName = Field(
        default="benchflow", description="Where attempts run (skillci.runners.registry)."
    )
    bench: str | None = Field(default=None, description="BenchFlow's bench executable.")
    harbor: str | None = Field(default=None, description="Harbor's harbor executable.")

    @field_validator("runner")
    @classmethod
    def _registered(cls, v: str) -> str:
        if v not in runner_names():
            raise ValueError(f"unknown runner {v!r}; registered: {', '.join(runner_names())}")
        return v

    @property
    def executables(self) -> dict[str, str | None]:
        """The executables named by option (``--bench``, ``--harbor``) for harness runners."""
        return {"bench": self.bench, "harbor": self.harbor}


class SkillCheck(BaseModel):
    """Whether the attempt invoked the skill."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=SCHEMA_VERSION, description="Shape version.")
    required: bool = Field(description="--require-skill was given.")
    invocations: int = Field(description="Skill loads/invocations seen in the trajectory.")
    ok: bool = Field(description="Not required, or invoked at least once.")
    evidence: list[str] = Field(default_factory=list, description="Skill files/names loaded.")


class AttemptSummary(BaseModel):
    """summary.json: one attempt's outcome and its completion marker."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=SCHEMA_VERSION, description="Shape version.")
    name: str = Field(description="test-NNN.")
    attempt: int = Field(description="1-based attempt number.")
    request_key: str = Field(description="Hash of the request this attempt answers.")
    task_id: str = Field(description="Task id.")
    runner: str = Field(description="The runner: local, docker, benchflow, harbor, a plug-in.")
    harness: str = Field(description="Agent harness.")
    model: str = Field(description="Model.")
    run_id: str = Field(description="Run id in result.json.")
    state: str = Field(description="Evaluation state of the run record.")
    reward: float | None = Field(default=None, description="Verifier reward.")
    verifier_passed: bool = Field(description="The verifier passed it.")
    skill_ok: bool = Field(description="The skill check held (see skill_check.json).")
    passed: bool = Field(description="verifier_passed and skill_ok.")
    events: int = Field(description="Events in trajectory.json.")
    duration_sec: float = Field(description="Wall time of the attempt.")
    finished_at: datetime = Field(description="UTC time the attempt finished.")
    warnings: list[str] = Field(default_factory=list, description="Run record warnings.")


class RawTaskResult(BaseModel):
    """What the command did (``--json``)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=SCHEMA_VERSION, description="Shape version.")
    output: str = Field(description="The output dir.")
    attempts: list[AttemptSummary] = Field(description="Complete attempts, in order.")
    reused: list[str] = Field(default_factory=list, description="Attempts reused as they were.")
    quarantined: list[str] = Field(default_factory=list, description="Moved to .incomplete/.")
    errors: dict[str, str] = Field(default_factory=dict, description="Attempts that failed to run.")

    @property
    def pass_rate(self) -> float | None:
        return sum(a.passed for a in self.attempts) / len(self.attempts) if self.attempts else None


SAVED_MODELS: dict[str, type[BaseModel]] = {
    "raw-task-attempt": AttemptSummary,
    "raw-task-skill-check": SkillCheck,
    "raw-task-result": RawTaskResult,
}

Progress = Callable[[str, int, int, str, float, float], None]
"""(name, index, total, phase, fraction 0..1, elapsed seconds)."""


# ---------------------------------------------------------------------------- preflight


def skill_dir(source: Path, name: str | None = None) -> Path:
    """The skill under test at ``source`` (a skill dir, or a root of skills: ``name``
    picks one when there are several)."""
    return select_skill(source, name).under_test


def companions(req: RawTaskRequest) -> tuple[Path, ...]:
    """The other skills of ``--skill-source``, installed beside the one under test."""
    if req.skill_source is None:
        return ()
    return select_skill(req.skill_source, req.skill).companions


def preflight(req: RawTaskRequest) -> tuple[Task, Path | None]:
    """Load the task and find the skill; check every tool the runner needs, up front."""
    if not req.task.is_dir():
        raise UsageError(f"--task {req.task}: not a directory")
    check_trial_count(1, req.repeat)
    task = load_task(req.task, purpose=Purpose.optimize)
    skill = None
    if req.skill_source is not None:
        if not req.skill_source.is_dir():
            raise UsageError(f"--skill-source {req.skill_source}: not a directory")
        skill = skill_dir(req.skill_source, req.skill)
    elif req.skill is not None:
        raise UsageError("--skill needs --skill-source")
    if req.require_skill and skill is None:
        raise UsageError("--require-skill needs --skill-source")
    if runner_entry(req.runner).harness:
        harness_runner(req.runner).preflight(req.executables)
        return task, skill
    if req.harness not in ("builtin", "oracle"):
        raise UsageError(
            f"--harness {req.harness} runs under --runner benchflow or harbor; the "
            f"{req.runner} runner runs skillci's built-in agent",
            hint="use --harness builtin (or oracle), or --runner benchflow",
        )
    if req.harness == "builtin":
        from skillci.providers.routes import resolve_route

        resolve_route(req.model)
    trials = trial_runner(req.runner)
    if req.image and not trials.takes_image:
        takes = [n for n in runner_names() if n != req.runner and _takes_image(n)]
        listed = ", ".join(takes[:-1]) + f" or {takes[-1]}" if len(takes) > 1 else takes[0]
        raise UsageError(f"--image needs --runner {listed}")
    trials.preflight()
    return task, skill


def _takes_image(name: str) -> bool:
    """Whether runner ``name`` runs an ``--image`` (harness runners pass it on)."""
    return runner_entry(name).harness or trial_runner(name).takes_image


def _dir_hash(root: Path) -> str:
    files = [
        (p.relative_to(root).as_posix(), p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    ]
    return tree_hash(files)


def request_key(req: RawTaskRequest, task: Task, skill: Path | None) -> str:
    data: dict[str, object] = {
        "task": task.content_hash,
        "skill": _dir_hash(skill) if skill is not None else None,
        "harness": req.harness,
        "model": req.model,
        "runner": req.runner,
        "image": req.image,
        "require_skill": req.require_skill,
    }
    if skill is not None and (others := companions(req)):
        data["installed_with"] = {p.name: _dir_hash(p) for p in others}
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


# ---------------------------------------------------------------------------- attempt dirs


def attempt_name(n: int) -> str:
    return f"test-{n:03d}"


def read_attempt(path: Path, key: str) -> AttemptSummary | None:
    """The summary when ``path`` is a complete attempt of request ``key``; else None.
    Raises :class:`UsageError` when it is a complete attempt of another request."""
    try:
        summary = AttemptSummary.model_validate_json((path / SUMMARY).read_bytes())
        record = RunRecord.model_validate_json((path / RESULT).read_bytes())
        events = json.loads((path / TRAJECTORY).read_text())
        check = SkillCheck.model_validate_json((path / SKILL_CHECK).read_bytes())
    except (OSError, ValueError, ValidationError, RecursionError):
        return None
    if summary.run_id != record.run_id or not isinstance(events, list):
        return None
    if len(events) != len(record.events) or summary.events != len(events):
        return None
    if check.ok != summary.skill_ok or summary.state != record.evaluation.state.value:
        return None
    if summary.request_key != key:
        raise UsageError(
            f"{path} holds an attempt of a different request (task, skill, model, harness, "
            "runner or image changed)",
            hint="use a new --output dir, or remove the old test-* dirs",
        )
    return summary


def skill_check(record: RunRecord, required: bool) -> SkillCheck:
    loads = [e.path for e in record.events if e.kind == "skill_load"]
    n = len(loads)
    meta = record.metadata.get("n_skill_invocations")
    if isinstance(meta, int) and meta > n:  # the harness counted calls we could not see
        n = meta
    return SkillCheck(required=required, invocations=n, ok=(n > 0) or not required, evidence=loads)


def write_attempt(
    path: Path, n: int, key: str, req: RawTaskRequest, record: RunRecord, started: float
) -> AttemptSummary:
    """Write result, trajectory, skill check and — last — the summary (redacted: importers
    of BenchFlow/Harbor output hand over what the harness wrote)."""
    record = Redactor().redact_model(record)
    check = skill_check(record, req.require_skill)
    atomic_write_text(path / RESULT, record.model_dump_json(indent=1))
    atomic_write_text(
        path / TRAJECTORY, json.dumps([e.model_dump(mode="json") for e in record.events])
    )
    atomic_write_text(path / SKILL_CHECK, check.model_dump_json(indent=1))
    summary = AttemptSummary(
        name=attempt_name(n),
        attempt=n,
        request_key=key,
        task_id=record.task_id,
        runner=req.runner,
        harness=req.harness,
        model=req.model,
        run_id=record.run_id,
        state=record.evaluation.state.value,
        reward=record.evaluation.reward,
        verifier_passed=record.evaluation.passed,
        skill_ok=check.ok,
        passed=record.evaluation.passed and check.ok,
        events=len(record.events),
        duration_sec=round(time.monotonic() - started, 3),
        finished_at=datetime.now(UTC),
        warnings=record.warnings,
    )
    atomic_write_text(path / SUMMARY, summary.model_dump_json(indent=1))
    return summary


# ---------------------------------------------------------------------------- running


def _skill_ref(skill: Path | None) -> SkillRef | None:
    if skill is None:
        return None
    version = "unversioned"  # a plain skill; a skillci package names its version
    from skillci.skill.package import MANIFEST

    if (skill / MANIFEST).is_file():
        import yaml

        data = yaml.safe_load((skill / MANIFEST).read_text(encoding="utf-8"))
        if isinstance(data, dict) and data.get("version"):
            version = str(data["version"])
    return SkillRef(name=skill.name, version=version, content_hash=_dir_hash(skill))


def _rendered(skill: Path) -> tuple[RenderedSkill, str]:
    from skillci.skill.package import MANIFEST, SkillPackage, read_executables, read_tree
    from skillci.skill.porting import import_plain
    from skillci.skill.render import render

    if (skill / MANIFEST).is_file():
        pkg = SkillPackage.from_dir(skill)
    else:
        pkg = import_plain(read_tree(skill), executable=read_executables(skill), source=str(skill))
    return render(pkg, "builtin"), pkg.content_hash


def _run_skillci(
    req: RawTaskRequest, task: Task, skill: Path | None, n: int, run_dir: Path
) -> RunRecord:
    from skillci.runners.base import AgentSpec, builtin_agent, plan
    from skillci.runners.scheduler import runner_for, sandbox_kind

    if req.harness == "oracle":
        agent = AgentSpec(kind="oracle", role="oracle")
        rendered, pkg_hash = None, None
    else:
        agent = builtin_agent(req.model)
        rendered, pkg_hash = _rendered(skill) if skill is not None else (None, None)
    (spec,) = plan(
        [task],
        agent,
        repeats=1,
        state_dir=req.output / ".state",
        skill=rendered,
        skill_package_hash=pkg_hash,
        seed=n - 1,
        sandbox=mode_of_runner(req.runner),
        image=req.image,
        require_skill=req.require_skill and req.harness == "builtin",
    )
    others = [_rendered(p)[0] for p in companions(req)] if rendered is not None else []
    spec = spec.model_copy(update={"repeat_index": n - 1, "companion_skills": others})
    return runner_for(spec).run_trial(spec, run_dir, spec.cache_key(sandbox_kind(spec)))


def _harness_check(req: RawTaskRequest, task: Task, n: int, run_dir: Path) -> RunRecord | None:
    """An ``environment_unsupported`` record when a harness runner (BenchFlow, Harbor:
    skillci's local bubblewrap environment, no RUN step) cannot honour the task; None
    otherwise. Trial runners check in ``run_trial`` (docs/design/185)."""
    if not runner_entry(req.runner).harness:
        return None
    from skillci.runners.base import AgentSpec, plan
    from skillci.runners.local import TrialRunner
    from skillci.tasks.environment import check_environment, requirements

    needs = requirements(task)
    check = check_environment(needs, harness_runner(req.runner).capabilities(needs))
    if check.supported:
        return None
    if not check.hint or "--sandbox" in check.hint:
        hint = "run it with --runner docker or --runner benchflow (they build the task's image)"
        check = check.model_copy(update={"hint": hint})
    (spec,) = plan(
        [task], AgentSpec(kind="noop", role="student"), repeats=1, state_dir=req.output / ".state"
    )
    runner = TrialRunner()
    runner.name = req.runner
    spec = spec.model_copy(update={"repeat_index": n - 1, "seed": n - 1})
    return runner.unsupported_trial(spec, run_dir, f"raw-task-{n}", check)


def _run_harness(req: RawTaskRequest, task: Task, skill: Path | None, run_dir: Path) -> RunRecord:
    """One attempt on the harness runner ``req.runner`` (BenchFlow, Harbor)."""
    attempt = HarnessAttempt(
        task_root=task.root,
        task_id=task.id,
        harness=req.harness,
        model=req.model,
        run_dir=run_dir,
        scratch=req.output,
        skills=(skill, *companions(req)) if skill is not None else (),
        skill_ref=_skill_ref(skill),
        image=req.image,
        executables=req.executables,
    )
    return harness_runner(req.runner).run_attempt(attempt)


def run_raw_task(req: RawTaskRequest, *, progress: Progress | None = None) -> RawTaskResult:
    """Run (or reuse) ``req.repeat`` attempts; see the module docstring."""
    task, skill = preflight(req)
    key = request_key(req, task, skill)
    out = req.output
    out.mkdir(parents=True, exist_ok=True)
    report = progress or (lambda *_: None)
    try:
        lock = FileLock(str(out / ".lock"), timeout=0)
        lock.acquire()
    except Timeout:
        raise UsageError(
            f"{out} is in use by another raw-task run", hint="wait for it, or use another --output"
        ) from None
    try:
        result = RawTaskResult(output=str(out), attempts=[])
        todo: list[int] = []
        done: dict[int, AttemptSummary] = {}
        for n in range(1, req.repeat + 1):
            path = out / attempt_name(n)
            summary = read_attempt(path, key)
            if summary is not None:
                done[n] = summary
                result.reused.append(path.name)
                report(path.name, n, req.repeat, "reused", 1.0, summary.duration_sec)
                continue
            if path.exists():
                moved = quarantine(path, out / INCOMPLETE)
                assert moved is not None
                result.quarantined.append(str(moved.relative_to(out)))
            todo.append(n)

        def one(n: int) -> None:
            name = attempt_name(n)
            path = out / name
            started = time.monotonic()
            state = {"phase": "preparing"}
            stop = threading.Event()

            def tick() -> None:  # the running phase's bar advances with time
                budget = task.agent_timeout_sec + task.verifier_timeout_sec
                while not stop.wait(15.0):
                    el = time.monotonic() - started
                    frac = PHASES["running"] + 0.8 * min(1.0, el / budget)
                    report(name, n, req.repeat, state["phase"], frac, el)

            report(name, n, req.repeat, "preparing", PHASES["preparing"], 0.0)
            ticker = threading.Thread(target=tick, daemon=True)
            ticker.start()
            try:
                path.mkdir(parents=True)
                run_dir = path / "run"
                state["phase"] = "running"
                report(
                    name, n, req.repeat, "running", PHASES["running"], time.monotonic() - started
                )
                unsupported = _harness_check(req, task, n, run_dir)
                if unsupported is not None:
                    record = unsupported
                elif runner_entry(req.runner).harness:
                    record = _run_harness(req, task, skill, run_dir)
                else:
                    record = _run_skillci(req, task, skill, n, run_dir)
                state["phase"] = "checking"
                report(
                    name, n, req.repeat, "checking", PHASES["checking"], time.monotonic() - started
                )
                done[n] = write_attempt(path, n, key, req, record, started)
                report(name, n, req.repeat, "done", 1.0, time.monotonic() - started)
            except Exception as exc:  # an attempt that failed to run stays incomplete
                result.errors[name] = redact_text(f"{type(exc).__name__}: {exc}")
                report(name, n, req.repeat, "error", 1.0, time.monotonic() - started)
            finally:
                stop.set()
                redact_files(path / "run")  # what the runner wrote (logs, job dirs), failed or not

        # in the command's one trial pool, at most max_parallel at a time
        for fut in submit_bounded(one, todo, req.max_parallel):
            fut.result()
        result.attempts = [done[n] for n in sorted(done)]
        return result
    finally:
        lock.release()


__all__ = [
    "SAVED_MODELS",
    "AttemptSummary",
    "RawTaskRequest",
    "RawTaskResult",
    "SkillCheck",
    "attempt_name",
    "preflight",
    "read_attempt",
    "request_key",
    "run_raw_task",
    "skill_dir",
]
