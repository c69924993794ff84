"""Data shapes of a Skill package: skillci.yaml, skillci/rules/*.yaml, SKILL.md frontmatter.

These models are *views* of the package files: the package itself is its files' bytes
(see ``skillci.skill.package``), so loading and saving an untouched package never changes
a byte. Unknown keys in the YAML are kept (``extra="allow"``) so that a newer skillci or a
human can add fields without this version dropping them.
"""

from __future__ import annotations

import enum
import re
from typing import Any, Literal

import semver
from pydantic import BaseModel, Field, field_validator, model_validator

from skillci.basemodels import OpenModel

SCHEMA_VERSION = 1

NAME_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
RULE_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]*(\.[a-z0-9][a-z0-9_-]*)*$")


class Lifecycle(enum.StrEnum):
    """Lifecycle of a rule or a package (the seed's five states)."""

    candidate = "candidate"
    active = "active"
    deprecated = "deprecated"
    retired = "retired"
    quarantined = "quarantined"

    @property
    def rendered(self) -> bool:
        """Whether rules in this state are shown to the student."""
        return self in (Lifecycle.candidate, Lifecycle.active, Lifecycle.deprecated)


# ---------------------------------------------------------------------------- manifest


class TargetRuntime(OpenModel):
    """The concrete runtime this skill is compiled for."""

    model_family: str = Field(description="Model family, e.g. open-weight-27b.")
    model: str | None = Field(default=None, description="Model route or name, e.g. sim/student.")
    quantization: str | None = Field(default=None, description="e.g. int8, bf16.")
    context_window: int | None = Field(default=None, gt=0, description="Tokens.")
    agent_harness: str = Field(description="Agent harness name and version, e.g. repo-agent-v3.")
    agent: str | None = Field(
        default=None,
        description="Registered agent the gate and review run as the student when no --agent "
        "is given: builtin or a real agent (claude-code, codex, opencode; skillci agents ls).",
    )
    agent_version: str | None = Field(
        default=None, description="That agent's version (None: the newest installed)."
    )
    tokenizer: str | None = Field(
        default=None,
        description="tiktoken encoding used to count this skill's tokens (default cl100k_base).",
    )


class Entrypoints(OpenModel):
    """Where the package's parts live, relative to the package root."""

    default: str = Field(default="SKILL.md", description="Bootstrap file.")
    workflows: str = Field(default="skillci/workflows/", description="On-demand workflow files.")
    tools: str = Field(default="skillci/tools/", description="On-demand tool notes.")
    recovery: str = Field(default="skillci/recovery/", description="On-demand recovery notes.")


class TokenBudget(OpenModel):
    """Token budgets counted with the skill's tokenizer."""

    bootstrap: int = Field(default=1800, gt=0, description="What always loads at start-up.")
    per_workflow: int = Field(default=1200, gt=0, description="Each on-demand file.")
    max_total: int = Field(default=4200, gt=0, description="Everything the student can load.")


class QuarantinedTask(OpenModel):
    """A task the gate does not count as a repair or regression (docs/design/224)."""

    task: str = Field(min_length=1, description="Task id.")
    reason: str = Field(min_length=1, description="Why: who decided, and the evidence or issue.")


class ReleaseGate(OpenModel):
    """Thresholds the release gate applies. Only humans change these."""

    min_validation_gain: float = Field(default=0.02, description="Pass-rate gain required.")
    max_regression_rate: float = Field(default=0.01, ge=0, le=1)
    require_security_suite: bool = Field(default=True)
    max_token_growth: float = Field(
        default=0.25, ge=0, description="Max relative growth of bootstrap tokens per release."
    )
    flaky_tasks: Literal["exclude", "count"] = Field(
        default="exclude",
        description="A task whose repeats disagree on the unchanged (base) side is flaky; "
        "exclude: it counts in pass rates and the paired test but not as a repair or "
        "regression; count: like any task (docs/design/224-flaky-tasks.md).",
    )
    quarantine: list[QuarantinedTask] = Field(
        default_factory=list,
        description="Tasks never counted as repairs or regressions, each with its reason.",
    )
    max_trigger_drop: float = Field(
        default=0.1,
        ge=0,
        le=1,
        description="Max drop of trigger precision or recall (absolute) when the name or "
        "description changes (skillci/evals/triggers.yaml).",
    )


class CompatEntry(OpenModel):
    """One row of the compatibility matrix."""

    model: str | None = None
    quantization: str | None = None
    harness: str | None = None
    score: float | None = None
    eval_id: str | None = None
    reason: str | None = None
    version: str | None = Field(
        default=None, description="Skill version the row was verified (or rolled back) at."
    )


class Compatibility(OpenModel):
    verified: list[CompatEntry] = Field(default_factory=list)
    unverified: list[CompatEntry] = Field(default_factory=list)
    incompatible: list[CompatEntry] = Field(default_factory=list)


class CanaryPolicy(OpenModel):
    """Thresholds ``skillci canary analyze`` applies to canary vs stable production traces."""

    max_success_drop: float = Field(
        default=0.05, ge=0, le=1, description="Max drop of the success rate (absolute)."
    )
    max_token_growth: float = Field(
        default=0.2, ge=0, description="Max relative growth of mean tokens per request."
    )
    max_latency_growth: float = Field(
        default=0.3, ge=0, description="Max relative growth of mean latency per request."
    )
    min_samples: int = Field(
        default=30, ge=1, description="Records needed on each side before deciding."
    )
    confidence: float | None = Field(
        default=None,
        gt=0.5,
        lt=1,
        description="Judge the success drop by its (Newcombe) interval at this two-sided "
        "level instead of the point estimate: fail only when the canary is worse beyond "
        "noise and by more than max_success_drop, pass only when the interval's upper end "
        "is within it, else keep waiting. None: compare point estimates.",
    )
    tracked_tasks: list[str] = Field(
        default_factory=list,
        description="Task ids that must not regress (pass on stable, fail on canary).",
    )
    min_task_samples: int = Field(
        default=3, ge=1, description="Records per side a tracked task needs to be judged."
    )


class PatchLimits(OpenModel):
    """Bounds on one patch (the seed's defaults)."""

    max_new_rules: int = Field(default=2, ge=0)
    max_files: int = Field(default=3, ge=1)
    max_added_tokens: int = Field(default=400, ge=0)


class Origin(OpenModel):
    """Where an imported skill came from; export gives these files back byte-exact."""

    format: Literal["anthropic", "skillsbench"] = Field(description="Source layout.")
    source: str | None = Field(default=None, description="Path it was imported from.")
    files: list[str] = Field(default_factory=list, description="The original files.")


class Manifest(OpenModel):
    """``skillci.yaml``: identity, target runtime, budgets, gates and compatibility."""

    schema_version: int = Field(default=SCHEMA_VERSION, description="manifest schema version")
    name: str = Field(description="Skill name: lowercase letters, digits, single hyphens.")
    version: str = Field(description="Semantic version of the skill.")
    status: Literal["candidate", "active", "deprecated"] = "candidate"
    description: str | None = None
    target_runtime: TargetRuntime
    entrypoints: Entrypoints = Field(default_factory=Entrypoints)
    token_budget: TokenBudget = Field(default_factory=TokenBudget)
    required_tools: list[str] = Field(default_factory=list)
    release_gate: ReleaseGate = Field(default_factory=ReleaseGate)
    compatibility: Compatibility = Field(default_factory=Compatibility)
    patch_limits: PatchLimits = Field(default_factory=PatchLimits)
    origin: Origin | None = Field(default=None, description="Set by `skillci skill import`.")
    canary: CanaryPolicy = Field(
        default_factory=CanaryPolicy, description="Canary analysis thresholds."
    )

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if len(v) > 64 or not NAME_RE.match(v):
            raise ValueError(
                "must be lowercase letters, digits and single hyphens, at most 64 chars"
            )
        return v

    @field_validator("version")
    @classmethod
    def _version(cls, v: str) -> str:
        try:
            semver.Version.parse(v)
        except ValueError:
            raise ValueError(f"{v!r} is not a semantic version like 0.7.1") from None
        return v


# ---------------------------------------------------------------------------- rules


class RuleScope(OpenModel):
    """Where a rule applies. ``workflow: null`` means the bootstrap (always loaded)."""

    workflow: str | None = Field(
        default=None, description="Workflow file stem this rule belongs to; null = bootstrap."
    )
    tools: list[str] = Field(default_factory=list, description="Tools the rule's steps use.")


class Trigger(OpenModel):
    """Conditions under which the rule applies: all of ``all`` and at least one of ``any``."""

    all: list[str] = Field(default_factory=list)
    any: list[str] = Field(default_factory=list)


class Instruction(OpenModel):
    steps: list[str] = Field(min_length=1, description="Executable steps, in order.")


class Validation(OpenModel):
    success: list[str] = Field(default_factory=list, description="Checks that prove success.")


class FailurePolicy(OpenModel):
    condition: str
    action: str


class Provenance(OpenModel):
    """Where a rule came from and when it was last proven to help."""

    introduced_by: str | None = Field(default=None, description="Patch id or 'human'.")
    supporting_runs: list[str] = Field(default_factory=list)
    last_verified_on: str | None = Field(default=None, description="Gate/eval id.")
    hit_count: int = Field(default=0, ge=0)
    last_hit: str | None = None


class Rule(OpenModel):
    """One executable rule (``skillci/rules/*.yaml``), in the seed's schema."""

    schema_version: int = Field(default=SCHEMA_VERSION)
    id: str = Field(description="Dotted id, e.g. test.run-smallest-first.")
    status: Lifecycle = Field(default=Lifecycle.candidate, description="Lifecycle state.")
    scope: RuleScope = Field(default_factory=RuleScope)
    trigger: Trigger = Field(default_factory=Trigger)
    instruction: Instruction
    validation: Validation = Field(default_factory=Validation)
    failure_policy: list[FailurePolicy] = Field(default_factory=list)
    anti_patterns: list[str] = Field(default_factory=list)
    provenance: Provenance | None = None
    references: list[str] = Field(
        default_factory=list, description="Other rule ids this rule relies on."
    )

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not RULE_ID_RE.match(v):
            raise ValueError("must be dotted lowercase words, e.g. test.run-smallest-first")
        return v


class RuleFile(OpenModel):
    """A skillci/rules/*.yaml file holds either one rule mapping or ``rules: [..]``."""

    rules: list[Rule]

    @model_validator(mode="before")
    @classmethod
    def _single(cls, data: Any) -> Any:
        if isinstance(data, dict) and "rules" not in data and "id" in data:
            return {"rules": [data]}
        return data


# ---------------------------------------------------------------------------- SKILL.md


class SkillFrontmatter(OpenModel):
    """SKILL.md YAML frontmatter, as real skills write it.

    Only what skillci needs is enforced (a non-empty name and a description string), so a
    published skill that breaks the Agent Skills spec imports; lint reports the spec's
    rules as its reference validator reads them (skillci.skill.spec, SK005-SK007).
    """

    name: str = Field(description="Spec: lowercase letters, digits, single hyphens; <= 64 chars.")
    description: str = Field(default="", description="Spec: required, 1-1024 chars.")
    license: str | None = None
    allowed_tools: list[str] | str | None = Field(default=None, alias="allowed-tools")
    metadata: dict[str, Any] | None = None
    compatibility: str | dict[str, Any] | list[Any] | None = None

    @field_validator("name", mode="before")
    @classmethod
    def _name(cls, v: Any) -> Any:
        if isinstance(v, int) and not isinstance(v, bool):
            return str(v)  # name: 123 is the text "123" to the spec's validator
        if isinstance(v, str) and not v.strip():
            raise ValueError("must not be empty")
        return v

    @property
    def model_invocable(self) -> bool:
        """False for ``disable-model-invocation: true`` (Claude Code): the model never loads
        the skill by itself; only a person does (``/name``)."""
        flag = (self.model_extra or {}).get("disable-model-invocation")
        return not (flag is True or (isinstance(flag, str) and flag.strip().lower() == "true"))


EVAL_LIST_FILES = ("smoke", "regression", "security")


class EvalList(OpenModel):
    """``evals/{smoke,regression,security}.yaml``: task ids the skill is checked against."""

    schema_version: int = Field(default=SCHEMA_VERSION)
    tasks: list[str] = Field(default_factory=list)


SAVED_MODELS: dict[str, type[BaseModel]] = {
    "manifest": Manifest,
    "rule": Rule,
    "skill-frontmatter": SkillFrontmatter,
    "eval-list": EvalList,
}
