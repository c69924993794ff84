"""Data shapes of one trial: the immutable :class:`RunRecord` and its parts.

A run record is the evidence every later decision rests on (diagnosis, patch, gate,
release). It pins everything that can change a trial's outcome: the model (route, revision,
quantization, context window), the runtime (harness, sandbox, seed, skill content hash,
system prompt hash, tool schema version, timeouts, budgets, evaluator version), the ordered
events, the final output, the evaluation and the cost.

Trust: every payload produced by a model or a tool is marked ``untrusted: true``. For tool
calls and tool results the flag is a ``Literal[True]`` so no code can record them as
trusted; for messages it is forced true for ``assistant`` and ``tool`` roles. Untrusted text
is data: it is never executed and never copied into a skill without ``patch/guard``.

Records are saved by :mod:`skillci.trace.store` after :mod:`skillci.trace.redact` removed
secrets. Changing a field's meaning or removing one means bumping ``SCHEMA_VERSION``.
"""

from __future__ import annotations

import secrets
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, model_validator

from skillci.basemodels import StrictModel
from skillci.trace.atif import AtifTrace
from skillci.trace.enums import AgentRole, EvalState

#: 2: ``Cost.input_tokens``/``output_tokens`` may be null (unknown: an imported trial whose
#: source did not report them); version-1 records read unchanged (design 389).
SCHEMA_VERSION = 2


# ---------------------------------------------------------------------------- provenance


class ModelInfo(StrictModel):
    """The model that acted, pinned as precisely as is known."""

    route: str = Field(description="Route name in provider_routes.json, e.g. sim/student.")
    name: str | None = Field(
        default=None, description="Provider model id, e.g. Qwen/Qwen3.5-27B; null for oracle."
    )
    revision: str | None = Field(default=None, description="Model revision/snapshot if known.")
    quantization: str | None = Field(default=None, description="e.g. int8, bf16, Q4_K_M.")
    context_window: int | None = Field(default=None, gt=0, description="Tokens.")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Sampling parameters sent with every call (temperature, max_tokens, ...).",
    )


class SkillRef(StrictModel):
    """The skill the agent was given."""

    name: str = Field(description="Skill package name, e.g. repo-debugger.")
    version: str = Field(description="Semantic version from skillci.yaml.")
    content_hash: str = Field(description="sha256 tree hash of the package files as given.")
    rendered_hash: str | None = Field(
        default=None, description="sha256 tree hash of the rendered files the agent could load."
    )


class Timeouts(StrictModel):
    """Time limits in force, in seconds (null = none)."""

    agent_sec: float | None = Field(default=None, description="Wall time for the agent.")
    verifier_sec: float | None = Field(default=None, description="Wall time for the verifier.")
    tool_sec: float | None = Field(default=None, description="Per tool/shell command.")
    build_sec: float | None = Field(default=None, description="Environment build/setup.")


class Budgets(StrictModel):
    """Budgets in force for the trial (null = unlimited)."""

    max_steps: int | None = Field(default=None, ge=0, description="Agent loop iterations.")
    max_input_tokens: int | None = Field(default=None, ge=0, description="Prompt tokens summed.")
    max_output_tokens: int | None = Field(default=None, ge=0, description="Completion tokens.")
    max_model_calls: int | None = Field(default=None, ge=0, description="Model calls.")
    max_usd: float | None = Field(default=None, ge=0, description="Dollars.")


class RuntimeInfo(StrictModel):
    """Everything besides the model that can change a trial's outcome."""

    harness: str = Field(description="Agent harness name, e.g. skillci-agent or benchflow.")
    harness_version: str | None = Field(default=None, description="Harness version.")
    runner: str | None = Field(default=None, description="Runner: local, docker, benchflow.")
    environment_image: str | None = Field(
        default=None, description="Container image (docker runners) if any."
    )
    sandbox: str | None = Field(
        default=None, description="Sandbox used: bwrap, docker, none (no isolation)."
    )
    seed: int | None = Field(default=None, description="Random seed given to model and tools.")
    skill: SkillRef | None = Field(default=None, description="The skill, or null for none.")
    system_prompt_hash: str | None = Field(default=None, description="sha256 of system prompt.")
    tool_schema_version: str | None = Field(
        default=None, description="Version of the tool schemas offered to the agent."
    )
    tool_schema_hash: str | None = Field(default=None, description="sha256 of the tool schemas.")
    timeouts: Timeouts = Field(default_factory=Timeouts)
    budgets: Budgets = Field(default_factory=Budgets)
    evaluator_version: str | None = Field(
        default=None, description="Verifier identity: task verifier hash and/or evaluator version."
    )
    task_hash: str | None = Field(default=None, description="Content hash of the task dir.")


# ---------------------------------------------------------------------------- events


class _Event(StrictModel):
    step: int = Field(ge=0, description="0-based position in the events list (ordering key).")
    t: float | None = Field(default=None, ge=0, description="Seconds since the trial started.")


class MessageEvent(_Event):
    """A chat message. ``assistant`` and ``tool`` messages are always untrusted."""

    kind: Literal["message"] = "message"
    role: Literal["system", "user", "assistant", "tool"] = Field(description="Chat role.")
    content: str = Field(description="Message text (tool calls are separate events).")
    untrusted: bool = Field(default=True, description="Produced by a model or a tool.")
    input_tokens: int | None = Field(default=None, ge=0, description="Prompt tokens of the call.")
    output_tokens: int | None = Field(default=None, ge=0, description="Completion tokens.")

    @model_validator(mode="after")
    def _force_untrusted(self) -> MessageEvent:
        if self.role in ("assistant", "tool") and not self.untrusted:
            raise ValueError(f"{self.role} messages are model/tool output and must be untrusted")
        return self


class ToolCallEvent(_Event):
    """The model asked to call a tool. Arguments come from the model: untrusted."""

    kind: Literal["tool_call"] = "tool_call"
    tool: str = Field(description="Tool name, e.g. run, read_file, load_skill_file.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="Parsed arguments.")
    call_id: str = Field(description="Id pairing the call with its result.")
    untrusted: Literal[True] = True


class ToolResultEvent(_Event):
    """What a tool returned. Output comes from the environment: untrusted."""

    kind: Literal["tool_result"] = "tool_result"
    call_id: str = Field(description="Id of the tool_call this answers.")
    tool: str | None = Field(default=None, description="Tool name (repeated for convenience).")
    exit_code: int | None = Field(default=None, description="Shell exit code, if a command ran.")
    output: str = Field(default="", description="Output shown to the model (maybe truncated).")
    truncated: bool = Field(default=False, description="Output was cut before the model saw it.")
    error: str | None = Field(default=None, description="Tool-level error (bad args, timeout).")
    untrusted: Literal[True] = True


class SkillLoadEvent(_Event):
    """A skill file entered the agent's context (bootstrap or on demand)."""

    kind: Literal["skill_load"] = "skill_load"
    path: str = Field(description="Path relative to the rendered skill root.")
    on_demand: bool = Field(default=True, description="Loaded by the agent, not at start-up.")
    tokens: int | None = Field(default=None, ge=0, description="Tokens the file added.")
    content_hash: str | None = Field(default=None, description="sha256 of the file loaded.")
    untrusted: bool = Field(default=False, description="Skill text is ours.")


class ErrorEvent(_Event):
    """Something failed during the trial (model call, tool infrastructure, budget stop)."""

    kind: Literal["error"] = "error"
    error_type: str = Field(description="Short class, e.g. ModelError, BudgetExceeded, Timeout.")
    message: str = Field(description="One-line description.")
    untrusted: bool = Field(default=False, description="True when the text quotes model/tool data.")


Event = Annotated[
    MessageEvent | ToolCallEvent | ToolResultEvent | SkillLoadEvent | ErrorEvent,
    Field(discriminator="kind"),
]
"""One entry of ``RunRecord.events`` (discriminated by ``kind``)."""


# ---------------------------------------------------------------------------- outcome


class Evaluation(StrictModel):
    """What the verifier decided. ``passed`` is true exactly when ``state`` is ``passed``."""

    state: EvalState = Field(description="How the trial ended for the verifier.")
    reward: float | None = Field(default=None, description="Reward the verifier wrote, if any.")
    passed: bool = Field(default=False, description="Convenience: state == passed.")
    threshold: float = Field(default=1.0, description="Reward needed to pass.")
    reward_source: str | None = Field(
        default=None, description="File the reward came from (reward.txt / reward.json)."
    )
    verifier_exit_code: int | None = Field(default=None, description="Exit code of test.sh.")
    verifier_output: str = Field(
        default="", description="Tail of the verifier's output (summary, untrusted)."
    )
    failure_class: str | None = Field(
        default=None, description="Failure class from the analyze taxonomy, when known."
    )
    details: dict[str, Any] = Field(
        default_factory=dict, description="Extra keys of reward.json, per-check results."
    )

    @model_validator(mode="after")
    def _consistent(self) -> Evaluation:
        if self.passed != (self.state is EvalState.passed):
            raise ValueError(f"passed={self.passed} contradicts state={self.state.value}")
        return self


class Cost(StrictModel):
    """Resources the trial used."""

    input_tokens: int | None = Field(
        default=0,
        ge=0,
        description="Prompt tokens over all model calls; null: unknown (an imported trial whose "
        "source did not report them for every call), never read as 0.",
    )
    output_tokens: int | None = Field(
        default=0, ge=0, description="Completion tokens; null: unknown, as input_tokens."
    )
    model_calls: int = Field(default=0, ge=0, description="Model calls made (cache hits too).")
    cached_model_calls: int = Field(default=0, ge=0, description="Calls served from cache.")
    tool_calls: int = Field(default=0, ge=0, description="Tool calls executed.")
    wall_time_sec: float = Field(default=0.0, ge=0, description="Wall time of the whole trial.")
    usd: float | None = Field(default=None, ge=0, description="Dollars, when prices are known.")

    @property
    def tokens(self) -> int | None:
        """Input + output tokens; None when either is unknown (never counted as 0)."""
        if self.input_tokens is None or self.output_tokens is None:
            return None
        return self.input_tokens + self.output_tokens


def new_run_id(now: datetime | None = None) -> str:
    """A fresh, sortable run id: ``run-YYYYMMDD-HHMMSS-<8 hex>``."""
    now = now or datetime.now(UTC)
    return f"run-{now:%Y%m%d-%H%M%S}-{secrets.token_hex(4)}"


def _utcnow() -> datetime:
    return datetime.now(UTC)


class RunRecord(StrictModel):
    """Immutable record of one trial (one agent on one task, one repeat)."""

    schema_version: int = Field(
        default=SCHEMA_VERSION,
        ge=1,
        le=SCHEMA_VERSION,
        description="RunRecord schema version (1: token counts always numbers; 2: may be null).",
    )
    run_id: str = Field(
        min_length=1,
        max_length=200,
        pattern=r"^[A-Za-z0-9][A-Za-z0-9._:@+-]*$",
        description="Unique id of this trial (see new_run_id).",
    )
    task_id: str = Field(description="Task id (the task dir name).")
    agent_role: AgentRole = Field(description="student, teacher, oracle or production.")
    model: ModelInfo = Field(description="The model that acted.")
    runtime: RuntimeInfo = Field(description="Harness, sandbox, seed, skill, budgets...")
    events: list[Event] = Field(default_factory=list, description="Ordered trajectory.")
    final_output: str | None = Field(
        default=None, description="The agent's final answer (untrusted)."
    )
    stop_reason: str | None = Field(
        default=None, description="Why the agent stopped: final_answer, max_steps, budget, ..."
    )
    evaluation: Evaluation = Field(description="Verifier outcome.")
    cost: Cost = Field(default_factory=Cost, description="Tokens, calls, time, dollars.")
    split: str | None = Field(default=None, description="Suite split the task was run for.")
    suite: str | None = Field(default=None, description="Suite name, if run as part of one.")
    repeat_index: int = Field(default=0, ge=0, description="Which repeat of the task (0-based).")
    trial_cache_key: str | None = Field(
        default=None, description="Content hash of everything that determines the trial."
    )
    created_at: datetime = Field(default_factory=_utcnow, description="UTC time of the record.")
    warnings: list[str] = Field(
        default_factory=list, description="Loud caveats, e.g. 'no sandbox: bwrap not found'."
    )
    reward_hack_evidence: list[str] = Field(
        default_factory=list,
        description=(
            "Tool calls that touched verifier or test files (tests/, test.sh, verifier, reward "
            "files), one 'step N: tool (write|read) -> paths' each; a write means the reward "
            "may be forged."
        ),
    )
    metadata: dict[str, Any] = Field(
        default_factory=dict, description="Free-form extras (importer fields, runner details)."
    )
    atif: AtifTrace | None = Field(
        default=None,
        description=(
            "For a trial imported from an ATIF trajectory: every field the events do not carry "
            "(step times, models, metrics, extra, root fields), so export gives it back whole."
        ),
    )

    @model_validator(mode="after")
    def _ordered(self) -> RunRecord:
        for i, ev in enumerate(self.events):
            if ev.step != i:
                raise ValueError(f"events[{i}].step is {ev.step}; events must be numbered 0..n-1")
        if self.created_at.tzinfo is None:
            raise ValueError("created_at must carry a timezone (use UTC)")
        return self

    @property
    def passed(self) -> bool:
        return self.evaluation.passed

    @property
    def skill_hash(self) -> str | None:
        return self.runtime.skill.content_hash if self.runtime.skill else None

    @property
    def verifier_writes(self) -> list[str]:
        """The reward-hack evidence items where the agent *changed* verifier/test files."""
        return [e for e in self.reward_hack_evidence if " (write) -> " in e]

    @property
    def forged_pass(self) -> bool:
        """Passed after writing verifier/test files: the gate counts it as failed and the
        diagnosis explains it (``missed_constraint``); reads alone only warn."""
        return self.evaluation.passed and bool(self.verifier_writes)


#: Saved shapes of this package, exported as JSON Schemas (see skillci.schemas).
SAVED_MODELS: dict[str, type[BaseModel]] = {"run-record": RunRecord}

__all__ = [
    "SAVED_MODELS",
    "SCHEMA_VERSION",
    "AgentRole",
    "Budgets",
    "Cost",
    "ErrorEvent",
    "EvalState",
    "Evaluation",
    "Event",
    "MessageEvent",
    "ModelInfo",
    "RunRecord",
    "RuntimeInfo",
    "SkillLoadEvent",
    "SkillRef",
    "Timeouts",
    "ToolCallEvent",
    "ToolResultEvent",
    "new_run_id",
]
