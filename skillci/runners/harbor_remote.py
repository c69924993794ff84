"""Harbor's environments behind :class:`~skillci.runners.remote.RemoteEnvironment` (issue 36).

:class:`HarborEnvironment` runs each trial :class:`~skillci.runners.remote.RemoteTrials`
submits as one ``harbor run -e NAME -n 1 -k 1`` job (:class:`~skillci.runners.harbor.HarborRun`)
on a thread pool of ``concurrency`` threads (the per-environment cap), and reads the trial
back with Harbor's importer (:func:`~skillci.trace.importers.harbor.import_trial`), so the gate
keeps it in the same trial cache and trace store as a local trial. The agent inside is the
Harbor agent of the trial's kind: ``oracle``, ``nop`` (skillci's ``noop``), or a real agent
Harbor registers under the same name (``claude-code``, ``codex``, ``opencode``, ...) with the
route's model — as ``eval raw-task --runner harbor`` runs them — or skillci's built-in agent:
Harbor runs a shim by import path whose commands come from the loop running in this process
(:mod:`skillci.runners.harbor_builtin`, docs/design/426-builtin-agent-on-harbor.md).

A harness failure (Harbor exits without a trial dir, times out, or cannot start) is an
``infra_error`` record — a failed measurement RemoteTrials may retry — never a failed trial.
``cancel`` stops an attempt not yet started; a started ``harbor run`` is let finish (its
record is counted unused by RemoteTrials): docs/design/409-harbor-remote-environment.md.

On ``docker`` each attempt's task goes through :func:`~skillci.runners.harbor_docker.docker_task`:
skillci closes a no-network task's network with a Compose overlay (Harbor's own enforcement
needs images from Docker Hub) and sets the build's network from ``build_network``
(``$SKILLCI_DOCKER_BUILD_NETWORK``): docs/design/413-harbor-docker-on-the-ci-engine.md.
"""

from __future__ import annotations

import os
import shutil
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import skillci.runners.harbor as hb
from skillci.errors import InvalidInputError, RunnerError, SkillciError
from skillci.runners.base import TrialSpec
from skillci.runners.harbor_builtin import IMPORT_PATH, AgentBridge
from skillci.runners.harbor_docker import DockerTask, docker_task
from skillci.trace.models import EvalState, RunRecord, SkillRef

#: The Harbor environments skillci drives (Harbor's ``EnvironmentType`` values) -> the
#: credentials each needs: any one group of environment variables, all of it set. Read from
#: each environment's own ``preflight`` in Harbor 0.25; the contract test checks both ways.
ENVIRONMENTS: dict[str, tuple[tuple[str, ...], ...]] = {
    "docker": (),
    "daytona": (("DAYTONA_API_KEY",), ("DAYTONA_JWT_TOKEN", "DAYTONA_ORGANIZATION_ID")),
    "modal": (("MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"),),
    "e2b": (("E2B_API_KEY",),),
    "runloop": (("RUNLOOP_API_KEY",),),
}
#: Environments run for real in this project's CI; the others are contract-tested only.
RUN_HERE = frozenset({"docker"})
#: skillci agent kinds -> Harbor agent names (a real agent keeps its name).
AGENT_NAMES = {"oracle": "oracle", "noop": "nop"}
#: Harbor agents that take no skills: Harbor 0.25 refuses a job giving them one.
NO_SKILL_AGENTS = frozenset(AGENT_NAMES.values())
#: The Harbor agent name of skillci's built-in agent (the import-path class's ``name()``).
BUILTIN_NAME = "skillci-builtin"
#: Seconds one ``harbor run`` may take before it counts as a harness failure.
DEFAULT_TIMEOUT = 1800.0


def missing_credentials(name: str, environ: dict[str, str] | None = None) -> list[str] | None:
    """None when environment ``name`` has its credentials, else the variables of its first
    group (Modal's ``~/.modal.toml``, written by ``modal token new``, counts too)."""
    env = os.environ if environ is None else environ
    groups = ENVIRONMENTS[name]
    if not groups or any(all(env.get(v) for v in g) for g in groups):
        return None
    if name == "modal" and (Path(env.get("HOME") or Path.home()) / ".modal.toml").is_file():
        return None
    return list(groups[0])


def check_environment(name: str, environ: dict[str, str] | None = None) -> None:
    """Refuse an unknown environment (exit 2) or a cloud one without credentials (exit 4),
    each with a one-line hint, before any trial runs."""
    if name not in ENVIRONMENTS:
        raise InvalidInputError(
            f"unknown Harbor environment {name!r}",
            hint=f"use one of: {', '.join(ENVIRONMENTS)}",
        )
    need = missing_credentials(name, environ)
    if need is not None:
        alts = " or ".join("+".join(g) for g in ENVIRONMENTS[name])
        extra = " (or run `modal token new`)" if name == "modal" else ""
        raise RunnerError(
            f"Harbor environment {name!r} needs credentials: {alts} not set",
            hint=f"export {' '.join(f'{v}=...' for v in need)}{extra} before the run",
        )


def harbor_agent(spec: TrialSpec) -> tuple[str, str | None]:
    """The Harbor agent and model of ``spec``'s agent. skillci's built-in agent is
    ``skillci-builtin`` (run by import path) on its route's name, as a local record names it."""
    kind = spec.agent.kind
    if kind in AGENT_NAMES:
        return AGENT_NAMES[kind], None
    if kind == "builtin":
        return BUILTIN_NAME, spec.agent.route_name
    model = spec.agent.route.model if spec.agent.route is not None else spec.agent.route_name
    return kind, model


def write_skills(spec: TrialSpec, where: Path) -> list[Path]:
    """The trial's skill (then its companions) as dirs under ``where``, for ``--skills``."""
    dirs: list[Path] = []
    for skill in [s for s in (spec.skill, *spec.companion_skills) if s is not None]:
        root = where / skill.name
        for f in skill.files:
            (root / f.path).parent.mkdir(parents=True, exist_ok=True)
            (root / f.path).write_bytes(f.content)
        dirs.append(root)
    return dirs


@dataclass
class HarborEnvironment:
    """A :class:`~skillci.runners.remote.RemoteEnvironment` on Harbor environment
    ``environment`` (its ``name``, as records' ``metadata.remote_environment`` show it:
    ``harbor:<environment>``). Jobs dirs go under ``work_dir`` (one per attempt; kept unless
    ``keep_jobs`` is False). ``build_network`` (default ``$SKILLCI_DOCKER_BUILD_NETWORK``):
    the network of ``docker``'s image builds. Construction checks the name, the credentials
    and Harbor's executable, so a gate refuses before any trial."""

    environment: str
    work_dir: Path
    concurrency: int = 4
    harbor: str | None = None
    timeout: float | None = DEFAULT_TIMEOUT
    keep_jobs: bool = True
    env_kwargs: dict[str, str] = field(default_factory=dict)
    build_network: str | None = field(
        default_factory=lambda: os.environ.get("SKILLCI_DOCKER_BUILD_NETWORK") or None
    )
    name: str = field(init=False)
    _pool: ThreadPoolExecutor = field(init=False)
    _exe: str = field(init=False)

    def __post_init__(self) -> None:
        if self.concurrency < 1:
            raise InvalidInputError("Harbor concurrency must be >= 1", hint="pass 1 or more")
        check_environment(self.environment)
        self.name = f"harbor:{self.environment}"
        self._exe = hb.find_harbor(self.harbor)
        self._pool = ThreadPoolExecutor(self.concurrency, thread_name_prefix="harbor")

    def run_spec(
        self, spec: TrialSpec, attempt: int, run_dir: Path, bridge: AgentBridge | None = None
    ) -> hb.HarborRun:
        """The ``harbor run`` of one attempt (what the contract test checks against Harbor);
        skillci's built-in agent talks to ``bridge``."""
        agent, model = harbor_agent(spec)
        skills = [] if agent in NO_SKILL_AGENTS else write_skills(spec, run_dir / "skills")
        task = (
            docker_task(spec.task.root, run_dir, self.build_network)
            if self.environment == "docker"
            else DockerTask(spec.task.root)
        )
        return hb.HarborRun(
            path=task.path,
            agent=agent,
            model=model,
            jobs_dir=run_dir / "jobs",
            env=self.environment,
            concurrency=1,
            attempts=1,
            # Harbor's oracle and nop refuse any --skills (they declare no skills capability);
            # skillci's agent installs its skills itself, at /skills/<name> as locally
            skills=[] if bridge is not None else skills,
            env_kwargs=dict(self.env_kwargs),
            extra_compose=list(task.overlays),
            agent_import_path=IMPORT_PATH if bridge is not None else None,
            agent_kwargs=bridge.agent_kwargs(run_dir / "skills" if skills else None)
            if bridge is not None
            else {},
        )

    def submit(self, spec: TrialSpec, attempt: int) -> Future[RunRecord]:
        return self._pool.submit(self._attempt, spec, attempt)

    def cancel(self, future: Future[RunRecord]) -> bool:
        """True for an attempt not started yet; a started ``harbor run`` runs to its end."""
        return future.cancel()

    def close(self) -> None:
        """Drop the attempts not started; wait for the running ones."""
        self._pool.shutdown(wait=True, cancel_futures=True)

    def _attempt(self, spec: TrialSpec, attempt: int) -> RunRecord:
        tag = f"{spec.task.id}-r{spec.repeat_index}-a{attempt}-{uuid.uuid4().hex[:8]}"
        run_dir = self.work_dir / tag
        run_dir.mkdir(parents=True)
        log = run_dir / "harbor.log"
        cause: str | None = None
        trial: Path | None = None
        bridge = AgentBridge(spec) if spec.agent.kind == "builtin" else None
        try:
            try:
                code = hb.run(self._exe, self.run_spec(spec, attempt, run_dir, bridge), log=log,
                              timeout=self.timeout)  # fmt: skip
            finally:
                if bridge is not None:
                    bridge.close()
            from skillci.trace.importers.harbor import find_trials

            trials = find_trials(run_dir / "jobs")
            if len(trials) == 1:
                trial = trials[0]
            else:
                tail = log.read_text(errors="replace")[-400:] if log.is_file() else ""
                cause = f"harbor exited {code} and left {len(trials)} trial dirs: {tail!r}"
        except (SkillciError, OSError) as exc:  # could not start: the harness failed
            cause = f"harbor run failed: {exc}"
        rec = self._record(spec, trial, run_dir, cause)
        if not self.keep_jobs:
            shutil.rmtree(run_dir, ignore_errors=True)
        return rec

    def _record(
        self, spec: TrialSpec, trial: Path | None, run_dir: Path, cause: str | None
    ) -> RunRecord:
        """The importer's record of the trial dir (an empty one when Harbor left none:
        ``infra_error``), as the gate keys it: the spec's task id, repeat, suite and skill."""
        from skillci.trace.importers.harbor import import_trial

        if trial is None:
            trial = run_dir / "no-trial__0000000"
            trial.mkdir(exist_ok=True)
        skill = (
            SkillRef(name=spec.skill.name, version=spec.skill.version,
                     content_hash=spec.skill_package_hash or spec.skill.package_hash)
            if spec.skill is not None
            else None
        )  # fmt: skip
        rec = import_trial(trial, skill=skill)
        meta = {**rec.metadata, "harbor_jobs_dir": str(run_dir / "jobs")}
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
                update={"runner": "harbor", "sandbox": self.name, "seed": spec.seed}
            ),
            "metadata": meta,
        }
        if cause is not None:  # the harness failed: a failed measurement, never a verdict
            update["evaluation"] = rec.evaluation.model_copy(
                update={"state": EvalState.infra_error, "passed": False, "verifier_output": cause}
            )
            meta["harness_error"] = cause
        return rec.model_copy(update=update)


__all__ = [
    "AGENT_NAMES",
    "BUILTIN_NAME",
    "ENVIRONMENTS",
    "NO_SKILL_AGENTS",
    "RUN_HERE",
    "HarborEnvironment",
    "check_environment",
    "harbor_agent",
    "missing_credentials",
    "write_skills",
]
