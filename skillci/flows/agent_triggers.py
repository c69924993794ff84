"""Trigger decisions made by a real agent: ``skillci eval triggers --agent NAME``.

The catalogue stand-in (:class:`skillci.flows.triggers.Decider`) asks the model to name a
skill. Here the decision is the agent's own (docs/design/373): for each query and run, the
skill under test and the distractors (the repository's other skills) are installed where
the agent discovers them, in an empty workspace (design 371), and the real agent runs
headless on the query against the route through the gateway (design 370), in the trial
sandbox with a fresh HOME. What it **did** decides: the skill it loaded — its skill tool
naming an installed skill, or a tool call reading a file under an installed skill's folder
(:func:`~skillci.agents.headless.skill_hits`) — never what it wrote. The choice is the
skill under test when the agent loaded it at all, else the first other installed skill it
loaded, else none. The agent is stopped as soon as its stream shows a load of the skill
under test (``stop_reason`` ``skill_loaded``): the decision is made, the task need not be.

A run whose agent could not decide — not installed, did not start, crashed, its model route
failed, or it reached the time limit without loading the skill under test — is a
measurement error: its record is stored (``infra_error``, no cache key, so it is never
reused) and the run stops with :class:`TriggerMeasurementError` (exit 4) naming the cause.
Decisions already made stay in the trace store and are reused by the next run.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from skillci.errors import ExternalError
from skillci.gate.triggers import QueryOutcome
from skillci.providers.routes import ModelRoute, resolve_route
from skillci.skill.render import RenderedSkill
from skillci.skill.triggers import TriggerQuery
from skillci.trace.models import (
    AgentRole,
    EvalState,
    Evaluation,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillRef,
)
from skillci.trace.store import TraceStore

if TYPE_CHECKING:
    from skillci.agents.base import AgentResult
    from skillci.agents.headless import HeadlessAdapter

AGENT_DECISION_VERSION = "skillci-agent-trigger-1"
#: Seconds one run of the agent on one query may take (``--agent-timeout``).
DEFAULT_TIMEOUT_SEC = 180.0
TASK_PREFIX = "trigger/"


class TriggerMeasurementError(ExternalError):
    """A real agent could not make a trigger decision (not the skill's outcome)."""

    default_hint = (
        "fix the cause and run again: decisions already made are reused from the trace store"
    )


def loaded_skills(
    result: AgentResult, adapter: HeadlessAdapter, skills: list[RenderedSkill]
) -> list[str]:
    """Names of the installed ``skills`` the agent loaded, in the order it first did: its
    skill tool naming one, or any tool call naming a file under one's installed folder."""
    from skillci.agents.headless import skill_hits

    out: list[str] = []
    for ev in result.events:
        if ev.kind != "tool_call":
            continue
        text = json.dumps(ev.arguments)
        for skill, _path in skill_hits(ev.tool, ev.arguments, text, skills, adapter):
            if skill.name not in out:
                out.append(skill.name)
    return out


def choice_of(target: str, loaded: list[str]) -> str | None:
    """The decision: ``target`` when it was loaded at all, else the first skill loaded."""
    if target in loaded:
        return target
    return loaded[0] if loaded else None


class AgentDecider:
    """Makes (or reuses) trigger decisions by running real agent ``agent`` on a route.

    ``distractors`` are installed beside the skill under test on every run (a distractor
    with the target's name is left out). Raises AgentNotInstalled (exit 4) at once when the
    agent is not installed."""

    def __init__(
        self,
        agent: str,
        route_name: str,
        store: TraceStore,
        *,
        state_dir: Path,
        distractors: list[RenderedSkill],
        version: str | None = None,
        route: ModelRoute | None = None,
        seed: int = 0,
        sandbox: str = "auto",
        timeout_sec: float = DEFAULT_TIMEOUT_SEC,
    ) -> None:
        from skillci.agents.install import resolve
        from skillci.agents.registry import adapter

        self.adapter = adapter(agent)
        self.installed = resolve(agent, version)
        self.agent = agent
        self.version = self.installed.version
        self.route_name = route_name
        self.route = route or resolve_route(route_name)
        self.store = store
        self.state_dir = state_dir
        self.distractors = distractors
        self.seed = seed
        self.sandbox = sandbox
        self.timeout_sec = timeout_sec

    def skills(self, target: RenderedSkill) -> list[RenderedSkill]:
        """What one run installs: the target first, then every other-named distractor."""
        return [target, *(d for d in self.distractors if d.name != target.name)]

    def key(self, target: RenderedSkill, query: str, seed: int) -> str:
        blob = json.dumps(
            {
                "v": AGENT_DECISION_VERSION,
                "agent": [self.agent, self.version],
                "route": self.route.fingerprint(),
                "skills": [[s.name, s.content_hash] for s in self.skills(target)],
                "query": query,
                "seed": seed,
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def outcome(
        self, q: TriggerQuery, target: RenderedSkill, runs: int, ref: SkillRef
    ) -> QueryOutcome:
        """``runs`` decisions on ``q`` with ``target`` installed (reused when stored)."""
        names = [s.name for s in self.skills(target)]
        choices: list[str | None] = []
        run_ids: list[str] = []
        cached = 0
        for i in range(runs):
            key = self.key(target, q.query, self.seed + i)
            hit = self.store.records(trial_cache_key=key, limit=1)
            if hit:
                rec = hit[0]
                cached += 1
            else:
                rec = self._decide(q, target, key, i, ref)
                self.store.put(rec)
                if rec.evaluation.state is EvalState.infra_error:
                    raise TriggerMeasurementError(
                        f"{self.agent} could not decide trigger query {q.id!r} "
                        f"(run {rec.run_id}): {rec.evaluation.verifier_output}"
                    )
            chosen = rec.metadata.get("trigger", {}).get("chosen")
            choices.append(chosen if isinstance(chosen, str) and chosen in names else None)
            run_ids.append(rec.run_id)
        return QueryOutcome(
            query_id=q.id,
            query=q.query,
            should_trigger=q.should_trigger,
            near_miss=q.near_miss,
            split=q.split,
            choices=choices,
            run_ids=run_ids,
            cached=cached,
        )

    def _run_agent(
        self, q: TriggerQuery, target: RenderedSkill, trial_dir: Path, seed: int
    ) -> tuple[AgentResult, str, list[str]]:
        """Run the agent once on ``q`` in a fresh workspace under ``trial_dir``: its result,
        the sandbox kind and the sandbox's warnings."""
        from skillci.agents.base import AgentContext, AgentResult
        from skillci.agents.workspace import WORKSPACE_MOUNT
        from skillci.providers.client import ModelClient
        from skillci.runners.agent_launch import agent_shell
        from skillci.runners.sandbox import Mount

        ws, logs, home = trial_dir / "workspace", trial_dir / "logs", trial_dir / "home"
        for d in (ws, logs):
            d.mkdir(parents=True)
        mounts = [Mount(ws, WORKSPACE_MOUNT, True), Mount(logs, "/logs/agent", True)]
        shell, warnings, launch = agent_shell(self.agent, self.version, self.sandbox, mounts, home)
        agent = self.adapter.agent(
            ModelClient(self.route_name, self.route),
            exe=self.installed.exe,
            version=self.version,
            companions=self.skills(target)[1:],
            stop_at_load=True,
        )
        ctx = AgentContext(
            task_id=f"{TASK_PREFIX}{q.id}",
            instruction=q.query,
            workspace=ws,
            shell=shell,
            skill=target,
            seed=seed,
            deadline=time.monotonic() + self.timeout_sec,
            launch=launch,
            home=home,
            logs=logs,
            agent_cwd=WORKSPACE_MOUNT if shell.kind != "none" else str(ws),
        )
        try:
            result = agent.run(ctx)
        except Exception as exc:  # an adapter bug is this run's error, not a decision
            why = f"{type(exc).__name__}: {exc}"
            result = AgentResult(stop_reason="agent_crash", infra_error=f"agent crashed: {why}")
        finally:
            shutil.rmtree(home, ignore_errors=True)
        return result, shell.kind, warnings

    def _decide(
        self, q: TriggerQuery, target: RenderedSkill, key: str, index: int, ref: SkillRef
    ) -> RunRecord:
        from skillci.trace.redact import Redactor, redact_files

        seed = self.seed + index
        trial_dir = self.state_dir / "trigger-trials" / key[:24]
        shutil.rmtree(trial_dir, ignore_errors=True)  # an earlier errored run's leftovers
        result, sandbox, warnings = self._run_agent(q, target, trial_dir, seed)
        skills = self.skills(target)
        loaded = loaded_skills(result, self.adapter, skills)
        chosen = choice_of(target.name, loaded)
        error = result.infra_error
        if error is None and result.stop_reason == "timeout" and chosen != target.name:
            error = (
                f"{self.agent} reached the {self.timeout_sec:g} s limit without loading "
                f"{target.name}: undecided (raise --agent-timeout)"
            )
        right = (chosen == target.name) == q.should_trigger
        if error is not None:
            evaluation = Evaluation(
                state=EvalState.infra_error, verifier_output=error, reward_source="trigger"
            )
        else:
            state = EvalState.passed if right else EvalState.failed
            evaluation = Evaluation(
                state=state, reward=1.0 if right else 0.0, passed=right, reward_source="trigger"
            )
        record = RunRecord(
            run_id=f"agent-trigger-{key[:24]}" + ("" if error is None else f"-e{time.time_ns()}"),
            task_id=f"{TASK_PREFIX}{q.id}",
            agent_role=AgentRole.student,
            model=ModelInfo(
                route=self.route_name,
                name=self.route.model_id,
                revision=self.route.revision,
                quantization=self.route.quantization,
                context_window=self.route.context_window,
                params=result.model_params,
            ),
            runtime=RuntimeInfo(
                harness=self.agent,
                harness_version=self.version,
                runner="trigger",
                sandbox=sandbox,
                seed=seed,
                skill=ref,
            ),
            events=result.events,
            final_output=result.final_output,
            stop_reason=result.stop_reason,
            evaluation=evaluation,
            cost=result.cost,
            suite="triggers",
            split=q.split,
            repeat_index=index,
            trial_cache_key=key if error is None else None,
            warnings=warnings,
            metadata={
                "trigger": {
                    "query_id": q.id,
                    "should_trigger": q.should_trigger,
                    "near_miss": q.near_miss,
                    "chosen": chosen,
                    "target": target.name,
                    "catalogue": [s.name for s in skills],
                    "loaded": loaded,
                    "decided_by": "agent",
                    "trial_dir": str(trial_dir),
                }
            },
        )
        redactor = Redactor()
        redact_files(trial_dir / "logs", redactor)  # the agent's stream, as the runner does
        return redactor.redact_model(record)


def run_agent_queries(
    decider: AgentDecider,
    target: RenderedSkill,
    queries: list[TriggerQuery],
    *,
    runs: int,
    ref: SkillRef,
    progress: Callable[[QueryOutcome], None] | None = None,
) -> list[QueryOutcome]:
    """Decide every query ``runs`` times in the agent with ``target`` installed."""
    out = []
    for q in queries:
        o = decider.outcome(q, target, runs, ref)
        if progress is not None:
            progress(o)
        out.append(o)
    return out


__all__ = [
    "AGENT_DECISION_VERSION",
    "DEFAULT_TIMEOUT_SEC",
    "AgentDecider",
    "TriggerMeasurementError",
    "choice_of",
    "loaded_skills",
    "run_agent_queries",
]
