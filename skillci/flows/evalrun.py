"""Run a suite (or some tasks) for one skill and one model: the domain of ``skillci eval run``.

:func:`plan_eval` loads the suite and tasks (the sealed final split only for
``--suite final``), renders the skill for the built-in harness and plans
``tasks x repeats`` trials; :func:`run_eval` hands them to the
:class:`~skillci.runners.scheduler.Scheduler` with the trace store attached.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from skillci.errors import UsageError
from skillci.flows.remote import RunnerOptions, check_agent, open_environment, remote_source
from skillci.providers.budget import Budget
from skillci.runners.base import (
    AgentSpec,
    SandboxMode,
    TrialSpec,
    builtin_agent,
    judge_spec,
    plan,
    real_agent,
)
from skillci.runners.outcome import EvalResult, TrialRun, first_error, summarize
from skillci.runners.scheduler import (
    Progress,
    RerunMode,
    Scheduler,
    sandbox_kind,
    trial_outcome,
)
from skillci.runners.trialdir import read_complete, trial_dir
from skillci.tasks.loader import load_suite_tasks, load_task, tasks_dir
from skillci.tasks.models import Purpose, Task
from skillci.tasks.suites import SEALED_SPLIT, load_suite


class EvalRequest(BaseModel):
    """What to run. Exactly one of ``suite`` and ``tasks`` is given."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root: Path = Field(description="Repo root (holding evals/) or the tasks dir.")
    suite: str | None = Field(default=None, description="Suite name under evals/suites/.")
    tasks: list[str] = Field(default_factory=list, description="Task ids or task dirs.")
    skill: Path | None = Field(default=None, description="Skill package dir; None = no skill.")
    agent: str = Field(
        default="builtin",
        description="Agent: builtin, oracle, noop or a real agent (skillci agents ls).",
    )
    agent_version: str | None = Field(
        default=None, description="Real agent's installed version (None: the newest)."
    )
    model: str = Field(
        default="sim/student", description="Model route (builtin agent, real agent's gateway)."
    )
    role: Literal["student", "teacher"] = Field(default="student", description="Role recorded.")
    repeats: int = Field(default=1, ge=1, description="Trials per task.")
    parallel: int = Field(default=1, ge=1, description="Trials at once.")
    seed: int = Field(default=0, description="Seed of repeat 0; repeat i uses seed + i.")
    max_steps: int | None = Field(default=None, ge=1, description="Model calls per trial.")
    sandbox: SandboxMode = Field(
        default="auto", description="Trial mode: auto, bwrap, none, docker or a plug-in runner."
    )
    require_skill: bool = Field(default=False, description="Fail trials that never loaded it.")
    cache_responses: bool = Field(default=False, description="Cache student model answers too.")
    trial_budget: Budget = Field(default_factory=Budget, description="Per-run model budget.")
    command_budget: Budget = Field(default_factory=Budget, description="Whole-command budget.")
    keep_workspace: bool = Field(default=False, description="Keep trial workspaces.")
    judge: str | None = Field(
        default=None, description="Model route judging rubric graders (default sim/judge)."
    )
    rerun: RerunMode = Field(
        default="errors",
        description="errors: reuse every complete trial but failed measurements; all: reuse none.",
    )
    home: Path = Field(description="skillci state dir (.skillci): trial cache and trace store.")
    remote: RunnerOptions | None = Field(
        default=None,
        description="Run the trials on this Harbor environment (--runner harbor; None: locally).",
    )

    @field_validator("agent")
    @classmethod
    def _registered(cls, v: str) -> str:
        if v not in agent_names():
            raise UsageError(
                f"unknown agent {v!r}",
                hint=f"use one of: {', '.join(agent_names())} (skillci agents ls)",
            )
        return v


def sandbox_mode(sandbox: str | None) -> SandboxMode:
    """Set the policy ``--sandbox`` names (required, auto, none: design 310) and return the
    trials' mode; the other modes (bwrap, docker, plug-ins) are ones the policy keeps."""
    from skillci.runners.policy import POLICIES, use_policy
    from skillci.runners.registry import modes

    use_policy(sandbox if sandbox is None or sandbox in POLICIES else None)
    if sandbox is not None and sandbox in modes():
        return str(sandbox)
    return "auto"


def agent_names() -> list[str]:
    """Every agent ``--agent`` accepts (the registry's names)."""
    from skillci.agents.registry import names

    return names()


def _load_tasks(req: EvalRequest) -> tuple[list[Task], str | None, str | None]:
    if (req.suite is None) == (not req.tasks):
        raise UsageError("give either --suite or --task (not both, not neither)")
    if req.suite is not None:
        purpose = Purpose.final_report if req.suite == SEALED_SPLIT.value else Purpose.optimize
        suite = load_suite(req.suite, req.root, purpose=purpose)
        if suite.split is SEALED_SPLIT:
            purpose = Purpose.final_report
        return load_suite_tasks(suite, req.root, purpose=purpose), suite.name, suite.split.value
    out = []
    for t in req.tasks:
        path = Path(t) if Path(t).is_dir() else tasks_dir(req.root) / t
        out.append(load_task(path, purpose=Purpose.optimize))
    return out, None, None


def agent_spec(req: EvalRequest) -> AgentSpec:
    from skillci.agents.registry import registry

    if registry()[req.agent].real:
        return real_agent(
            req.agent,
            req.model,
            version=req.agent_version,
            role=req.role,
            budget=req.trial_budget,
            cache_responses=req.cache_responses,
            local=req.remote is None,  # a Harbor environment installs the agent itself
        )
    if req.agent != "builtin":
        return AgentSpec(kind=req.agent, role="oracle" if req.agent == "oracle" else req.role)
    return builtin_agent(
        req.model,
        role=req.role,
        max_steps=req.max_steps,
        budget=req.trial_budget,
        cache_responses=req.cache_responses,
    )


def plan_eval(req: EvalRequest) -> list[TrialSpec]:
    """The trials ``req`` asks for (loads tasks and renders the skill; runs nothing)."""
    tasks, suite, split = _load_tasks(req)
    skill = pkg_hash = None
    agent = agent_spec(req)
    if req.skill is not None and (req.agent == "builtin" or agent.real):
        from skillci.skill.package import SkillPackage
        from skillci.skill.render import render

        pkg = SkillPackage.from_dir(req.skill)
        # a real agent gets the skill folder as its authors keep it
        skill, pkg_hash = render(pkg, "folder" if agent.real else "builtin"), pkg.content_hash
    return plan(
        tasks,
        agent,
        repeats=req.repeats,
        state_dir=req.home,
        skill=skill,
        skill_package_hash=pkg_hash,
        seed=req.seed,
        suite=suite,
        split=split,
        sandbox=req.sandbox,
        require_skill=req.require_skill,
        keep_workspace=req.keep_workspace,
        judge=judge_spec(req.judge),
    )


def cached(spec: TrialSpec) -> bool:
    """Whether a complete trial for ``spec`` would be reused (what --dry-run reports): a
    failed measurement never is (docs/design/300)."""
    key = spec.cache_key(sandbox_kind(spec))
    done = read_complete(trial_dir(spec.state_dir, key), key)
    return done is not None and not done[1].evaluation.state.is_error


def run_eval(req: EvalRequest, *, progress: Progress | None = None) -> EvalResult:
    """Plan and run ``req``; records go to the trace store under ``req.home``."""
    from skillci.trace.store import TraceStore

    if req.remote is not None:
        return _run_remote(req, req.remote, progress)
    specs = plan_eval(req)
    if req.suite is not None and any(s.task.graders and s.task.graders.needs_judge for s in specs):
        from skillci.flows.graders import check_judge

        check_judge(req.root, req.suite, req.judge, req.home)  # refuses an unfit judge
    scheduler = Scheduler(
        parallel=req.parallel,
        budget=req.command_budget,
        store=TraceStore(req.home),
        progress=progress,
        rerun=req.rerun,
    )
    return scheduler.run(specs)


def _run_remote(req: EvalRequest, remote: RunnerOptions, progress: Progress | None) -> EvalResult:
    """``req``'s trials on a Harbor environment through :class:`RemoteTrials` (no look-ahead:
    every trial is asked for at once), kept in the same trial cache and trace store. Missing
    credentials or Harbor (exit 4) are refused before anything runs."""
    from skillci.trace.store import TraceStore

    check_agent(remote, req.agent)  # one the remote runner cannot run: exit 2
    env = open_environment(remote, req.home)
    try:
        specs = plan_eval(req)
        src = remote_source(remote, env, req.home, TraceStore(req.home),
                            judge=judge_spec(req.judge), lookahead=0,
                            progress=progress)  # fmt: skip
        try:
            done = src.run_specs(specs, fresh=req.rerun == "all")
        finally:
            src.close()
    finally:
        env.close()
    causes = dict(line.split(": ", 1) for line in src.errors)
    trials = []
    for spec, key, rec, was_cached in done:
        if rec is not None:
            trials.append(trial_outcome(spec, key, rec, cached=was_cached))
            continue
        cause = causes.get(f"{spec.task.id} #{spec.repeat_index}", "no record came back")
        state = "skipped" if "budget spent" in cause else "error"
        trials.append(TrialRun(key=key, task_id=spec.task.id, repeat_index=spec.repeat_index,
                               state=state, error=cause))  # fmt: skip
    stop = next((t.error for t in trials if t.state == "skipped"), None)
    return summarize(trials, budget_stop=stop)


#: ``Budget``, ``EvalResult``, ``TrialRun`` and ``first_error``: the shapes ``eval run``
#: builds and renders, re-exported for the command line (design 420).
__all__ = [
    "Budget",
    "EvalRequest",
    "EvalResult",
    "TrialRun",
    "agent_names",
    "agent_spec",
    "cached",
    "first_error",
    "plan_eval",
    "run_eval",
    "sandbox_mode",
]
