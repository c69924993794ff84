"""What determines a trial, and the runner protocol.

A :class:`TrialSpec` holds everything that can change a trial's outcome; its
:meth:`~TrialSpec.cache_key` is the content hash of exactly those things (task content,
rendered skill, model route fingerprint and parameters, harness and its version, seed,
repeat index, agent limits and per-run budget, the sandbox mode asked for — what it resolved
to is recorded, not keyed: docs/design/233). Two specs with the same key
are the same trial: the scheduler never runs it twice.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field, field_validator

from skillci.graders.registry import plugin_identities
from skillci.providers.budget import Budget
from skillci.providers.routes import ModelRoute, resolve_route
from skillci.runners.pool import check_trial_count
from skillci.runners.registry import check_mode, is_local_mode
from skillci.skill.render import RenderedSkill
from skillci.tasks.environment import EnvCheck
from skillci.tasks.models import Task
from skillci.trace.models import RunRecord

RUNNER_VERSION = "local-1"
#: A name in the agent registry (skillci.agents.registry): builtin, oracle, noop, or a
#: real agent such as claude-code, codex, opencode.
AgentKind = str
#: A trial mode of :mod:`skillci.runners.registry`: a sandbox of the local runner (auto,
#: bwrap, none) or another trial runner by name (docker, plug-ins).
SandboxMode = str

#: Default step budgets per role (the teacher needs room to try more fixes).
DEFAULT_MAX_STEPS = {"student": 40, "teacher": 60}


Role = Literal["student", "teacher", "oracle"]


class AgentSpec(BaseModel):
    """Which agent acts and with what limits."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: AgentKind = Field(
        description="builtin (model loop), oracle (solve.sh), noop, or a real agent "
        "(claude-code, codex, opencode, ...: skillci agents ls)."
    )
    role: Role = Field(description="Role in the run record.")
    route_name: str | None = Field(default=None, description="Model route (builtin, real).")
    route: ModelRoute | None = Field(
        default=None, description="Resolved route (builtin; a real agent's gateway route)."
    )
    agent_version: str | None = Field(
        default=None, description="Installed version of a real agent (part of the key)."
    )
    max_steps: int = Field(default=40, ge=1, description="Model calls per trial.")
    tool_timeout_sec: float = Field(default=60.0, gt=0, description="Per shell command.")
    budget: Budget = Field(default_factory=Budget, description="Per-run model budget.")
    cache_responses: bool = Field(
        default=False, description="Serve repeated identical model requests from the cache."
    )

    @field_validator("kind")
    @classmethod
    def _registered(cls, v: str) -> str:
        from skillci.agents.registry import names

        if v not in names():
            raise ValueError(f"unknown agent {v!r}; registered: {', '.join(names())}")
        return v

    @property
    def real(self) -> bool:
        """A real agent (an installed CLI through the gateway), not skillci's own."""
        from skillci.agents.registry import registry

        return registry()[self.kind].real

    def identity(self) -> dict[str, object]:
        from skillci.agents.version import HARNESS_VERSION

        out: dict[str, object] = {"kind": self.kind, "role": self.role}
        if self.real:
            assert self.route is not None
            out |= {
                "route": self.route_name,
                "model": self.route.fingerprint(),
                "harness": f"{self.kind}@{self.agent_version}",
                "tool_timeout": self.tool_timeout_sec,
                "budget": self.budget.model_dump(),
                "cache_responses": self.cache_responses,
            }
        if self.kind == "builtin":
            assert self.route is not None
            out |= {
                "route": self.route_name,
                "model": self.route.fingerprint(),
                "harness": HARNESS_VERSION,
                "max_steps": self.max_steps,
                "tool_timeout": self.tool_timeout_sec,
                "budget": self.budget.model_dump(),
                "cache_responses": self.cache_responses,
            }
        return out


#: The judge of rubric graders when none is named (``--judge``): lexical, a simulator.
DEFAULT_JUDGE = "sim/judge"


def named_judge(route: str | None) -> str | None:
    """``route`` when it names a judge other than :data:`DEFAULT_JUDGE`, else None: naming
    the default is the same measurement as naming none (gate ids and plans agree)."""
    return route if (route or DEFAULT_JUDGE) != DEFAULT_JUDGE else None


class JudgeSpec(BaseModel):
    """The model route that judges a task's rubric graders (never the agent's route)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    route_name: str = Field(description="Model route of the judge.")
    route: ModelRoute = Field(description="The resolved route.")

    def identity(self) -> dict[str, object]:
        from skillci.graders.judge import JUDGE_PROMPT_VERSION

        return {
            "route": self.route_name,
            "model": self.route.fingerprint(),
            "prompt": JUDGE_PROMPT_VERSION,
        }


def judge_spec(route_name: str | None = None) -> JudgeSpec:
    """The judge on ``route_name`` (default :data:`DEFAULT_JUDGE`), resolved from
    provider_routes.json."""
    name = route_name or DEFAULT_JUDGE
    return JudgeSpec(route_name=name, route=resolve_route(name))


class TrialSpec(BaseModel):
    """One trial: an agent, a task, a skill, a seed, a repeat index."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task: Task = Field(description="The loaded task.")
    agent: AgentSpec = Field(description="Who acts.")
    skill: RenderedSkill | None = Field(
        default=None, description="Rendered skill (builtin harness)."
    )
    skill_package_hash: str | None = Field(default=None, description="Package content hash.")
    companion_skills: list[RenderedSkill] = Field(
        default_factory=list,
        description="The other skills of the task's set, installed beside the skill under "
        "test at /skills/<name> (on disk; the built-in prompt holds the skill under test).",
    )
    seed: int = Field(default=0, description="Seed for the model and tools.")
    repeat_index: int = Field(default=0, ge=0, description="0-based repeat.")
    suite: str | None = Field(default=None, description="Suite name, if any.")
    split: str | None = Field(default=None, description="Split of the suite.")
    sandbox: SandboxMode = Field(
        default="auto",
        description="Trial mode: a sandbox of the local runner (auto, bwrap, none) or "
        "another trial runner (docker, plug-ins): skillci.runners.registry.",
    )
    image: str | None = Field(
        default=None, description="Docker runner: use this image instead of building the task's."
    )
    require_skill: bool = Field(
        default=False, description="Fail trials that never loaded the skill."
    )
    keep_workspace: bool = Field(default=False, description="Keep the workspace dir afterwards.")
    judge: JudgeSpec | None = Field(
        default=None, description="Judge of the task's rubric graders (default sim/judge)."
    )
    state_dir: Path = Field(description="skillci state root (.skillci): trials, caches, store.")

    @field_validator("sandbox")
    @classmethod
    def _registered_mode(cls, v: str) -> str:
        return check_mode(v)

    def cache_key(self, sandbox_kind: str) -> str:
        """Content hash of everything that determines this trial's outcome."""
        return key_of(self.key_data(sandbox_kind))

    def key_data(self, sandbox_kind: str) -> dict[str, object]:
        """What :meth:`cache_key` hashes (kept with a trial so a regrade can re-key it)."""
        data: dict[str, object] = {
            "runner": RUNNER_VERSION,
            "task": self.task.content_hash,
            "skill": self.skill.content_hash if self.skill else None,
            "agent": self.agent.identity(),
            "seed": self.seed,
            "repeat": self.repeat_index,
            "sandbox": sandbox_kind,
            "require_skill": self.require_skill,
        }
        if self.companion_skills:  # keys of single-skill trials stay as they were
            data["companions"] = sorted(c.content_hash for c in self.companion_skills)
        if self.task.graders is not None and self.task.graders.needs_judge:
            data["judge"] = self.effective_judge().identity()  # only tasks with rubrics
        if self.task.graders is not None:  # a plug-in kind's package and version (design 403)
            plugins = plugin_identities([a.kind for a in self.task.graders.assertion])
            if plugins:
                data["grader_kinds"] = plugins
        return data

    def effective_judge(self) -> JudgeSpec:
        """The judge named for this trial, else :data:`DEFAULT_JUDGE`."""
        return self.judge if self.judge is not None else judge_spec()


def key_of(data: dict[str, object]) -> str:
    """The trial cache key of :meth:`TrialSpec.key_data`."""
    return hashlib.sha256(json.dumps(data, sort_keys=True, default=str).encode()).hexdigest()


def sandbox_kind(spec: TrialSpec) -> str:
    """The sandbox *asked for* (``auto``, ``bwrap``, ``none``, ``docker[:image]``): part of
    the cache key. What ``auto`` gave on the machine that ran the trial (bwrap or none) is
    an annotation, recorded as ``runtime.sandbox``: a machine gaining or losing bubblewrap
    reuses its trials and flags them non-comparable instead of re-running them all
    (:func:`resolved_sandbox`; docs/design/233)."""
    if spec.image and not is_local_mode(spec.sandbox):  # a runner of images: docker:IMAGE
        return f"{spec.sandbox}:{spec.image}"
    return spec.sandbox


def resolved_sandbox(spec: TrialSpec) -> str:
    """What isolates ``spec``'s trial on this machine now: its mode, ``auto`` resolved to
    bwrap or none."""
    from skillci.runners.sandbox import bwrap_path

    if spec.sandbox != "auto":
        return spec.sandbox
    return "bwrap" if bwrap_path() is not None else "none"


def sandbox_note(spec: TrialSpec, record: RunRecord) -> str | None:
    """A warning when a reused trial ran under another sandbox than this machine gives."""
    now, then = resolved_sandbox(spec), record.runtime.sandbox
    if spec.sandbox != "auto" or then in (now, "not-run"):
        return None
    return (
        f"non-comparable: trial {record.run_id} ran under sandbox {then!r}, this machine "
        f"gives {now!r} (reused, not re-run; clear the trial cache to re-run it)"
    )


def builtin_agent(
    route_name: str,
    *,
    role: Role = "student",
    route: ModelRoute | None = None,
    max_steps: int | None = None,
    budget: Budget | None = None,
    cache_responses: bool = False,
) -> AgentSpec:
    """The built-in agent on the model route ``route_name`` (resolved from
    provider_routes.json unless ``route`` is given), with the role's default step budget
    unless ``max_steps`` is set. The one place an AgentSpec is built from a route."""
    return AgentSpec(
        kind="builtin",
        role=role,
        route_name=route_name,
        route=route if route is not None else resolve_route(route_name),
        max_steps=max_steps or DEFAULT_MAX_STEPS.get(role, 40),
        budget=budget if budget is not None else Budget(),
        cache_responses=cache_responses,
    )


def real_agent(
    name: str,
    route_name: str,
    *,
    version: str | None = None,
    role: Role = "student",
    budget: Budget | None = None,
    cache_responses: bool = False,
    local: bool = True,
) -> AgentSpec:
    """Real agent ``name`` (installed; ``version`` or the newest) on route ``route_name``
    through the gateway. Raises AgentNotInstalled (exit 4) when it is not installed.
    ``local=False``: the agent runs where a remote environment installs it (Harbor), so
    nothing is looked up here and the version is ``version`` as given."""
    if local:
        from skillci.agents.install import resolve

        version = resolve(name, version).version
    return AgentSpec(
        kind=name,
        role=role,
        route_name=route_name,
        route=resolve_route(route_name),
        agent_version=version,
        budget=budget if budget is not None else Budget(),
        cache_responses=cache_responses,
    )


def plan(
    tasks: list[Task],
    agent: AgentSpec,
    *,
    repeats: int,
    state_dir: Path,
    skill: RenderedSkill | None = None,
    skill_package_hash: str | None = None,
    seed: int = 0,
    suite: str | None = None,
    split: str | None = None,
    sandbox: SandboxMode = "auto",
    require_skill: bool = False,
    keep_workspace: bool = False,
    image: str | None = None,
    judge: JudgeSpec | None = None,
) -> list[TrialSpec]:
    """Every (task, repeat) trial, task-major. Repeat ``i`` uses seed ``seed + i``.

    More than :data:`~skillci.runners.pool.MAX_TRIALS` is a usage error (exit 2), raised
    before any spec is built. The sandbox policy (:mod:`skillci.runners.policy`) decides
    ``auto`` here, before anything runs: it may refuse the tasks (exit 4, with the fix)."""
    from skillci.runners.policy import sandbox_for

    check_trial_count(len(tasks), repeats)
    sandbox = sandbox_for(tasks, sandbox)
    return [
        TrialSpec(
            task=t,
            agent=agent,
            skill=skill,
            skill_package_hash=skill_package_hash,
            seed=seed + i,
            repeat_index=i,
            suite=suite,
            split=split,
            sandbox=sandbox,
            image=image,
            require_skill=require_skill,
            keep_workspace=keep_workspace,
            judge=judge,
            state_dir=state_dir,
        )
        for t in tasks
        for i in range(repeats)
    ]


@runtime_checkable
class Runner(Protocol):
    """A trial runner (:mod:`skillci.runners.registry`): runs one trial into ``trial_dir``
    and returns its run record; says up front whether it can honour a task."""

    name: str
    takes_image: bool
    """``--image`` means something to it (the cache key then holds ``NAME:IMAGE``)."""

    def preflight(self) -> None:
        """Raise (exit 4, with the fix) when it cannot run on this machine at all."""
        ...

    def run_trial(self, spec: TrialSpec, trial_dir: Path, key: str) -> RunRecord: ...

    def check(self, spec: TrialSpec) -> EnvCheck: ...


__all__ = [
    "DEFAULT_JUDGE",
    "DEFAULT_MAX_STEPS",
    "RUNNER_VERSION",
    "AgentSpec",
    "JudgeSpec",
    "Role",
    "Runner",
    "TrialSpec",
    "builtin_agent",
    "judge_spec",
    "key_of",
    "named_judge",
    "plan",
    "real_agent",
    "resolved_sandbox",
    "sandbox_kind",
    "sandbox_note",
]
