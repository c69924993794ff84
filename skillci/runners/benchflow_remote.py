"""BenchFlow's sandboxes behind :class:`~skillci.runners.remote.RemoteEnvironment` (design 431).

:class:`BenchflowEnvironment` runs each trial :class:`~skillci.runners.remote.RemoteTrials`
submits as one ``bench eval run --include TASK --concurrency 1`` job
(:class:`~skillci.runners.benchflow.BenchRun`) and reads the rollout back with BenchFlow's
importer (:func:`~skillci.trace.importers.benchflow.import_rollout`); the pool, the attempt
dirs and the record's keys are :class:`~skillci.runners.harness_remote.HarnessEnvironment`'s,
shared with ``--runner harbor``.

Each attempt gets its own copy of the task (``--tasks-dir`` holds only it) and runs in the
image skillci's Docker runner builds for the task
(:func:`~skillci.runners.docker.resolve_image`, with ``$SKILLCI_DOCKER_BUILD_NETWORK`` as the
build's network), handed to BenchFlow as ``sandbox.docker_image``: BenchFlow's own
``docker compose build`` needs the engine's default bridge, which the CI engine has none of.
BenchFlow closes a no-network task's network itself (its ``docker-compose-no-network.yaml``
gives ``main`` ``network_mode: none``).

Agents: ``oracle`` is BenchFlow's oracle (the task's ``solution/solve.sh``); ``noop`` is
that oracle over a ``solve.sh`` that does nothing (BenchFlow 0.7 has no no-op agent), so the
verifier judges the untouched workspace; a real agent is the ACP agent BenchFlow registers for
it (:data:`REAL_AGENTS`). One with an offline layer (OpenCode, design 436; Claude Code's
and Codex's ACP adapters, design 440; :mod:`skillci.runners.benchflow_agents`) is baked into
the image and its model is skillci's gateway on the route, behind BenchFlow's host LiteLLM
proxy (a route the gateway saw fail interrupts the job; the record's cost is the gateway's);
Gemini CLI gets the route's model and is installed by BenchFlow from npm in the sandbox. skillci's built-in agent
does not run here yet (BenchFlow's in-process ``session-factory`` agents are the way: 431).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

import skillci.runners.benchflow as bf
from skillci.errors import InvalidInputError, RunnerError
from skillci.runners.base import TrialSpec
from skillci.runners.benchflow_agents import (
    agent_image,
    gateway_cost,
    layer_for,
    route_client,
    run_alias,
)
from skillci.runners.harness_remote import HarnessEnvironment, skill_ref, write_skills
from skillci.trace.models import AgentRole, RunRecord

if TYPE_CHECKING:
    from skillci.providers.gateway import GatewayCall

#: BenchFlow sandboxes skillci drives (``bench eval run --sandbox``) -> their credentials
#: (as Harbor's table). Only ``docker`` for now: it runs in this project's CI.
ENVIRONMENTS: dict[str, tuple[tuple[str, ...], ...]] = {"docker": ()}
#: skillci agent kinds BenchFlow runs without a model.
NO_MODEL_AGENTS = frozenset({"oracle", "noop"})
#: skillci's real agents -> the ACP agent BenchFlow 0.7.11 registers for each
#: (``benchflow.agents.registry.AGENTS``; the contract test checks the names).
REAL_AGENTS = {
    "claude-code": "claude-agent-acp",
    "codex": "codex-acp",
    "opencode": "opencode",
    "opencode-acp": "opencode",  # skillci's ACP client of it; BenchFlow's is ACP too
    "gemini": "gemini",
}
#: BenchFlow's provider for an OpenAI-compatible endpoint the caller names: its host LiteLLM
#: proxy's upstream is then skillci's gateway (design 436).
GATEWAY_PROVIDER = "vllm"
#: The ``sandbox`` settings of an agent baked into the image: a network, so the agent reaches
#: BenchFlow's LiteLLM proxy on the host (a no-network sandbox makes BenchFlow pip-install
#: LiteLLM inside it, design 436); on the CI engine (no NAT) it reaches only the host.
HOST_PROXY_SANDBOX: dict[str, object] = {"allow_internet": True, "network_mode": "public"}
#: The record's caveat when a task without ``allow_internet`` ran a baked agent (design 436).
BAKED_NETWORK_NOTE = (
    "benchflow: the task sets no allow_internet, but a baked agent's sandbox runs on a "
    "network that reaches the host (BenchFlow's model proxy); on an engine with NAT it "
    "reaches the internet too, and BenchFlow leaves the agent's web-fetch tool on"
)
#: What ``noop`` runs as BenchFlow's oracle: a solve.sh that changes nothing.
NOOP_SOLVE = "#!/usr/bin/env bash\n# skillci's noop agent: the workspace is left as it is\nexit 0\n"
#: Says where ``--runner benchflow`` cannot run (the engine is absent).
ENGINE_HINT = (
    f"install benchflow=={bf.BENCHFLOW_VERSION} in its own Python 3.12 venv and set "
    "SKILLCI_BENCH to its bin/bench (scripts/ci_venvs.sh does both), with a Docker engine "
    "at DOCKER_HOST; or use --runner local"
)


def supported(kind: str) -> bool:
    """Whether agent kind ``kind`` can be the student (or oracle) on BenchFlow."""
    return kind in NO_MODEL_AGENTS or kind in REAL_AGENTS


def check_agent(kind: str) -> None:
    """Refuse (exit 2) an agent BenchFlow cannot run, before any trial."""
    if not supported(kind):
        runs = ", ".join([*sorted(NO_MODEL_AGENTS), *REAL_AGENTS])
        raise InvalidInputError(
            f"--runner benchflow cannot run agent {kind!r}",
            hint=f"use --agent {runs}, or --runner harbor / local for the built-in agent",
        )


def bench_agent(spec: TrialSpec) -> tuple[str, str | None]:
    """BenchFlow's agent and model for ``spec``'s agent."""
    kind = spec.agent.kind
    if kind in NO_MODEL_AGENTS:
        return "oracle", None
    check_agent(kind)
    model = spec.agent.route.model if spec.agent.route is not None else spec.agent.route_name
    return REAL_AGENTS[kind], model


def export_task(task_root: Path, where: Path, *, noop: bool) -> Path:
    """``task_root`` copied to ``where/<its name>`` (BenchFlow's tasks dir is ``where``);
    for ``noop`` its ``solution/solve.sh`` does nothing."""
    dest = where / task_root.name
    shutil.copytree(task_root, dest, symlinks=True)
    if noop:
        solve = dest / "solution" / "solve.sh"
        shutil.rmtree(dest / "solution", ignore_errors=True)
        solve.parent.mkdir()
        solve.write_text(NOOP_SOLVE)
        solve.chmod(0o755)
    return dest


def bench_run(
    spec: TrialSpec,
    run_dir: Path,
    *,
    image: str | None,
    sandbox: str = "docker",
    gateway: tuple[str, str] | None = None,
) -> bf.BenchRun:
    """The ``bench eval run`` of one attempt of ``spec`` in ``image`` (what the contract test
    checks against BenchFlow's parser); the task is exported under ``run_dir/tasks``, the
    skills (for a real agent) under ``run_dir/skills``. ``gateway`` (its base URL and
    token): the model is that skillci gateway, upstream of BenchFlow's LiteLLM proxy, and
    the sandbox gets :data:`HOST_PROXY_SANDBOX` (an agent baked into ``image``)."""
    agent, model = bench_agent(spec)
    agent_env: dict[str, str] = {}
    sandbox_config: dict[str, object] = {}
    if gateway is not None:
        model = f"{GATEWAY_PROVIDER}/{spec.agent.route_name or 'skillci'}"
        layer = layer_for(agent)
        agent_env = dict(layer.env) if layer is not None else {}
        agent_env |= {
            "BENCHFLOW_PROVIDER_BASE_URL": gateway[0] + "/v1",
            "BENCHFLOW_PROVIDER_API_KEY": gateway[1],
        }
        sandbox_config = dict(HOST_PROXY_SANDBOX)
    task = export_task(spec.task.root, run_dir / "tasks", noop=spec.agent.kind == "noop")
    skills = [] if agent == "oracle" else write_skills(spec, run_dir / "skills")
    return bf.BenchRun(
        tasks_dir=task.parent,
        include=[task.name],
        agent=agent,
        model=model,
        jobs_dir=run_dir / "jobs",
        skill_mode="with-skill" if skills else "no-skill",
        skills_dir=run_dir / "skills" if skills else None,
        sandbox=sandbox,
        concurrency=1,
        image=image,
        agent_env=agent_env,
        sandbox_config=sandbox_config,
    )


@dataclass
class BenchflowEnvironment(HarnessEnvironment):
    """A :class:`~skillci.runners.remote.RemoteEnvironment` on BenchFlow sandbox
    ``environment`` (``benchflow:<environment>``). ``bench``: BenchFlow's executable (None:
    ``$SKILLCI_BENCH``, else ``bench`` on PATH). Construction refuses (exit 2, one-line hint)
    an unknown sandbox, or a machine without ``bench`` or a Docker engine."""

    runner: ClassVar[str] = "benchflow"
    label: ClassVar[str] = "BenchFlow"
    executable_field: ClassVar[str] = "bench"
    executable_option: ClassVar[str | None] = None
    executable_variable: ClassVar[str] = "SKILLCI_BENCH"
    result_dir: ClassVar[str] = "rollout"

    environments: ClassVar[dict[str, tuple[tuple[str, ...], ...]]] = ENVIRONMENTS

    bench: str | None = None
    #: agent kind -> the version baked into the image (records name it)
    _baked: dict[str, str] = field(init=False, default_factory=dict)
    #: attempt dir name -> the calls skillci's gateway answered in it (the record's cost)
    _calls: dict[str, list[GatewayCall]] = field(init=False, default_factory=dict)

    @property
    def executable(self) -> str | None:
        return self.bench

    @classmethod
    def preflight(cls, environment: str, executable: str | None) -> str:
        """Exit 2 with a one-line hint for an unknown sandbox, or where the engine is absent
        (no ``bench``, or no Docker engine to reach)."""
        if environment not in ENVIRONMENTS:
            raise InvalidInputError(
                f"unknown BenchFlow sandbox {environment!r}",
                hint=f"use one of: {', '.join(ENVIRONMENTS)}",
            )
        from skillci.runners.docker import docker_available

        try:
            exe = bf.find_bench(executable)
        except RunnerError as exc:
            raise InvalidInputError(
                f"--runner benchflow: {exc.message}", hint=ENGINE_HINT
            ) from None
        why = docker_available()
        if why is not None:
            raise InvalidInputError(f"--runner benchflow: {why}", hint=ENGINE_HINT)
        return exe

    @classmethod
    def check_agent(cls, kind: str) -> None:
        check_agent(kind)

    def run_spec(self, spec: TrialSpec, run_dir: Path, image: str | None) -> bf.BenchRun:
        return bench_run(spec, run_dir, image=image, sandbox=self.environment)

    def _launch(self, spec: TrialSpec, attempt: int, run_dir: Path, log: Path) -> int:
        from skillci.providers.gateway import Gateway
        from skillci.runners.docker import resolve_image
        from skillci.runners.sandbox import scrub_env

        image = resolve_image(spec)
        agent = bench_agent(spec)[0]
        if layer_for(agent) is None:  # oracle, noop; an agent BenchFlow installs itself
            run = self.run_spec(spec, run_dir, image)
            return bf.run(self._exe, run, log=log, timeout=self.timeout)
        baked, self._baked[spec.agent.kind] = agent_image(image, agent, spec.agent.agent_version)
        with run_alias(baked, run_dir.name) as alias, Gateway(route_client(spec)) as gateway:
            run = bench_run(
                spec,
                run_dir,
                image=alias,
                sandbox=self.environment,
                gateway=(gateway.base_url, gateway.token),
            )
            # BenchFlow hands the provider keys it finds in its environment to the agent's
            # sandbox: it gets none of this process's secrets (the gateway holds the route's)
            environ = scrub_env(dict(os.environ))
            # a route that failed (after its retries) fails every later call: the bench job is
            # interrupted then, not left to the agent's and BenchFlow's retries (design 440)
            code = bf.run(
                self._exe,
                run,
                log=log,
                timeout=self.timeout,
                environ=environ,
                stop=gateway.fatal_event,
            )
            self._calls[run_dir.name] = list(gateway.calls)
            lines = [c.model_dump_json() + "\n" for c in gateway.calls]
            (run_dir / "gateway.jsonl").write_text("".join(lines))
        if gateway.fatal is not None:  # the model, not the skill: a failed measurement
            raise RunnerError(f"the agent's model was unreachable: {gateway.fatal}")
        return code

    def _results(self, jobs: Path) -> list[Path]:
        from skillci.trace.importers.benchflow import find_rollouts

        return find_rollouts(jobs)

    def _import(self, result: Path, spec: TrialSpec) -> RunRecord:
        from skillci.trace.importers.benchflow import import_rollout

        rec = import_rollout(result, skill=skill_ref(spec), role=AgentRole(spec.agent.role))
        inside = result.is_relative_to(self.work_dir)
        attempt = result.relative_to(self.work_dir).parts[0] if inside else ""
        if (calls := self._calls.pop(attempt, None)) is not None:  # a baked agent
            rec = rec.model_copy(update={"cost": gateway_cost(rec.cost, calls)})
        if spec.agent.kind != "noop":
            return rec
        # the empty solve.sh BenchFlow ran is no action of the agent: a noop trial records
        # none, as locally and on Harbor (the gate's pairing tells trials apart by actions)
        cost = rec.cost.model_copy(update={"tool_calls": 0})
        return rec.model_copy(update={"events": [], "final_output": None, "cost": cost})

    def _warnings(self, spec: TrialSpec) -> list[str]:
        if spec.agent.kind not in self._baked or spec.task.config.environment.allow_internet:
            return []
        return [BAKED_NETWORK_NOTE]

    def _adjust(self, spec: TrialSpec, rec: RunRecord) -> tuple[dict[str, str], dict[str, object]]:
        """The record's role is the spec's; ``noop`` is named so, with what ran it."""
        extra: dict[str, object] = {"benchflow_agent": bench_agent(spec)[0]}
        if spec.agent.kind in self._baked:
            version = self._baked[spec.agent.kind]
            extra["benchflow_agent_version"] = version
            extra["benchflow_agent_source"] = "skillci's agents cache, baked into the image"
            return {"harness_version": version}, extra
        if spec.agent.kind == "noop":
            extra["noop"] = "BenchFlow's oracle over a solve.sh that does nothing"
            return {"harness": "noop"}, extra
        return {}, extra


__all__ = [
    "BAKED_NETWORK_NOTE",
    "ENGINE_HINT",
    "ENVIRONMENTS",
    "GATEWAY_PROVIDER",
    "HOST_PROXY_SANDBOX",
    "NOOP_SOLVE",
    "NO_MODEL_AGENTS",
    "REAL_AGENTS",
    "BenchflowEnvironment",
    "bench_agent",
    "bench_run",
    "check_agent",
    "export_task",
    "supported",
]
