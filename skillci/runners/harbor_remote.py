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
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import skillci.runners.harbor as hb
from skillci.errors import InvalidInputError, RunnerError
from skillci.runners.base import TrialSpec
from skillci.runners.harbor_builtin import IMPORT_PATH, AgentBridge
from skillci.runners.harbor_docker import DockerTask, docker_task
from skillci.runners.harness_remote import (
    HarnessEnvironment,
    skill_ref,
    write_skills,
)
from skillci.trace.models import RunRecord

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


@dataclass
class HarborEnvironment(HarnessEnvironment):
    """A :class:`~skillci.runners.remote.RemoteEnvironment` on Harbor environment
    ``environment`` (``harbor:<environment>``; the pool, the attempt dirs and the record's
    keys: :class:`~skillci.runners.harness_remote.HarnessEnvironment`). ``build_network``
    (default ``$SKILLCI_DOCKER_BUILD_NETWORK``): the network of ``docker``'s image builds.
    Construction checks the name, the credentials and Harbor's executable, so a gate refuses
    before any trial."""

    runner: ClassVar[str] = "harbor"
    label: ClassVar[str] = "Harbor"
    executable_field: ClassVar[str] = "harbor"
    executable_option: ClassVar[str | None] = "--harbor"
    executable_variable: ClassVar[str] = "SKILLCI_HARBOR"
    result_dir: ClassVar[str] = "trial"

    environments: ClassVar[dict[str, tuple[tuple[str, ...], ...]]] = ENVIRONMENTS

    harbor: str | None = None
    env_kwargs: dict[str, str] = field(default_factory=dict)
    build_network: str | None = field(
        default_factory=lambda: os.environ.get("SKILLCI_DOCKER_BUILD_NETWORK") or None
    )

    @property
    def executable(self) -> str | None:
        return self.harbor

    @classmethod
    def preflight(cls, environment: str, executable: str | None) -> str:
        """An unknown environment: exit 2; a cloud one without credentials, or no Harbor
        executable: exit 4 (each with its one-line hint)."""
        check_environment(environment)
        return hb.find_harbor(executable)

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

    def _launch(self, spec: TrialSpec, attempt: int, run_dir: Path, log: Path) -> int:
        bridge = AgentBridge(spec) if spec.agent.kind == "builtin" else None
        try:
            return hb.run(self._exe, self.run_spec(spec, attempt, run_dir, bridge), log=log,
                          timeout=self.timeout)  # fmt: skip
        finally:
            if bridge is not None:
                bridge.close()

    def _results(self, jobs: Path) -> list[Path]:
        from skillci.trace.importers.harbor import find_trials

        return find_trials(jobs)

    def _import(self, result: Path, spec: TrialSpec) -> RunRecord:
        from skillci.trace.importers.harbor import import_trial

        return import_trial(result, skill=skill_ref(spec))


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
