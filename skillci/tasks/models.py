"""Data shapes of evaluation tasks, suites and verifier rewards.

A *task* is a SkillsBench/Harbor task directory (``instruction.md``, ``task.toml``,
``environment/``, ``tests/test.sh``, ``solution/solve.sh``) or a BenchFlow-native one
(``task.md`` with YAML frontmatter, ``verifier/test.sh``, ``oracle/solve.sh``). Both load
into one :class:`Task`. Config sections keep unknown keys (``extra="allow"``): the
ecosystem adds fields faster than we do, and dropping them would silently change a task.

A *suite* (``evals/suites/<name>.yaml``) names the tasks of one split. The ``final`` split
is sealed: see :mod:`skillci.tasks.suites` and docs/tasks.md.

A *reward* is what a verifier wrote to ``$LOGS_DIR/verifier/reward.txt`` or
``reward.json``; :func:`skillci.tasks.reward.read_reward` turns it into :class:`Reward`,
whose ``state`` says explicitly when the file was missing or unreadable.
"""

from __future__ import annotations

import enum
from collections import Counter
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from skillci.basemodels import OpenModel
from skillci.graders.models import GradersFile

SCHEMA_VERSION = 1

#: Reward needed to pass (SkillsBench rewards are binary 0/1; partial credit does not pass).
DEFAULT_PASS_THRESHOLD = 1.0


# ---------------------------------------------------------------------------- task.toml


class TaskMetadata(OpenModel):
    """``[metadata]``: descriptive only; never changes how a trial runs.

    Harbor keeps it as a free dict, so a value of an unexpected type (``difficulty = 3``,
    ``tags = "x"``) is coerced to text here rather than rejected."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, coerce_numbers_to_str=True)

    author: str | None = Field(default=None, description="Author name (or author_name).")
    author_name: str | None = Field(default=None, description="Harbor spelling of author.")
    author_email: str | None = Field(default=None, description="Author e-mail.")
    difficulty: str | None = Field(default=None, description="easy, medium or hard.")
    category: str | None = Field(default=None, description="Domain, e.g. software-engineering.")
    family: str | None = Field(
        default=None, description="skillci: task family used to group results (e.g. repo-repair)."
    )
    tags: list[str] = Field(default_factory=list, description="Free-form tags.")

    @model_validator(mode="before")
    @classmethod
    def _lenient(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for key in ("author", "author_name", "author_email", "difficulty", "category", "family"):
            v = out.get(key)
            if v is not None and not isinstance(v, str | int | float):
                out[key] = str(v)
        tags = out.get("tags")
        if tags is not None and not isinstance(tags, list):
            out["tags"] = [tags]
        if isinstance(out.get("tags"), list):
            out["tags"] = [t if isinstance(t, str | int | float) else str(t) for t in out["tags"]]
        return out


NetworkMode = Literal["public", "no-network", "allowlist"]


class _NetworkPolicy(OpenModel):
    """Harbor's network policy keys (``[environment]``, ``[agent]``, ``[verifier]``)."""

    network_mode: NetworkMode | None = Field(
        default=None, description="public, no-network or allowlist (Harbor's network policy)."
    )
    allowed_hosts: list[str] | None = Field(
        default=None, description="Hosts reachable when network_mode is allowlist."
    )


class HealthcheckConfig(OpenModel):
    """``healthcheck``: a readiness command run after the environment starts (Harbor)."""

    command: str = Field(description="Shell command; exit 0 means healthy.")
    interval_sec: float = Field(default=5.0, description="Seconds between attempts.")
    timeout_sec: float = Field(default=30.0, description="Seconds one attempt may take.")
    start_period_sec: float = Field(default=0.0, description="Grace period after start.")
    start_interval_sec: float = Field(default=5.0, description="Interval during the grace.")
    retries: int = Field(default=3, description="Consecutive failures that fail the check.")


class TpuSpec(OpenModel):
    """``[environment.tpu]``: a TPU slice (Harbor on GKE)."""

    type: str = Field(description="TPU type alias or GKE label, e.g. v6e.")
    topology: str = Field(description="Topology NxM or NxMxK, e.g. 2x4.")


class McpServerConfig(OpenModel):
    """``[[environment.mcp_servers]]``: an MCP server offered to the agent (Harbor)."""

    name: str = Field(description="Server name.")
    transport: str = Field(default="sse", description="stdio, sse or streamable-http.")
    url: str | None = Field(default=None, description="URL (sse, streamable-http).")
    command: str | None = Field(default=None, description="Command (stdio).")
    args: list[str] = Field(default_factory=list, description="Arguments (stdio).")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers.")


class ArtifactConfig(OpenModel):
    """An ``artifacts`` entry written as a table: a path collected after the trial."""

    source: str = Field(description="Path in the container.")
    destination: str | None = Field(default=None, description="Relative host path.")
    exclude: list[str] = Field(default_factory=list, description="tar --exclude patterns.")
    service: str | None = Field(default=None, description="Compose service to collect from.")


class VerifierCollectConfig(OpenModel):
    """``[[verifier.collect]]``: a command run in a service before artifacts are taken."""

    command: str = Field(description="Shell command.")
    service: str = Field(default="main", description="Compose service.")
    timeout_sec: float = Field(default=60.0, description="Timeout, seconds.")
    user: str | int | None = Field(default=None, description="User or UID.")


def _size_mb(value: str, key: str) -> int:
    """Harbor's legacy size strings: '2G', '512M', '1024K' -> MiB."""
    s = value.strip().upper()
    units = {"G": 1024.0, "M": 1.0, "K": 1 / 1024}
    if not s or s[-1] not in units:
        raise ValueError(f"{key} = {value!r}: expected a size like '2G' or '512M'")
    try:
        return int(float(s[:-1]) * units[s[-1]])
    except ValueError:
        raise ValueError(f"{key} = {value!r}: expected a size like '2G' or '512M'") from None


class VerifierConfig(_NetworkPolicy):
    """``[verifier]``."""

    timeout_sec: float = Field(default=600.0, gt=0, description="Wall time for tests/test.sh.")
    env: dict[str, str] = Field(default_factory=dict, description="Verifier env variables.")
    user: str | int | None = Field(default=None, description="User or UID of the verifier.")
    environment_mode: str | None = Field(
        default=None, description="Harbor: shared (agent's environment) or separate."
    )
    environment: EnvironmentConfig | None = Field(
        default=None, description="Harbor: a separate verifier environment."
    )
    collect: list[VerifierCollectConfig] = Field(
        default_factory=list, description="Harbor: commands run before artifacts are taken."
    )


class AgentConfig(_NetworkPolicy):
    """``[agent]``."""

    timeout_sec: float = Field(default=600.0, gt=0, description="Wall time for the agent.")
    user: str | int | None = Field(default=None, description="User or UID of the agent.")


class SolutionConfig(OpenModel):
    """``[solution]``."""

    env: dict[str, str] = Field(default_factory=dict, description="Env for solution/solve.sh.")


class EnvironmentConfig(_NetworkPolicy):
    """``[environment]``: resources and image. Local runners honour the timeouts and
    ``allow_internet``; container runners honour all of it. Every key of Harbor's
    ``EnvironmentConfig`` is known (docs/design/150); the legacy ``memory``/``storage``
    size strings set ``memory_mb``/``storage_mb`` as Harbor does, and ``network_mode``
    sets ``allow_internet`` (only ``public`` opens the network)."""

    build_timeout_sec: float = Field(default=600.0, gt=0, description="Image build/setup time.")
    os: str = Field(default="linux", description="linux or windows (Harbor).")
    cpus: float = Field(default=1, gt=0, description="CPU cores.")
    memory_mb: int = Field(default=2048, gt=0, description="Memory limit, MiB.")
    storage_mb: int = Field(default=10240, gt=0, description="Disk limit, MiB.")
    memory: str | None = Field(
        default=None, description="Legacy size string ('2G'); sets memory_mb."
    )
    storage: str | None = Field(
        default=None, description="Legacy size string ('10G'); sets storage_mb."
    )
    gpus: int = Field(default=0, ge=0, description="GPUs requested (none on local runners).")
    gpu_types: list[str] | None = Field(default=None, description="Acceptable GPU types.")
    tpu: TpuSpec | None = Field(default=None, description="TPU slice requested.")
    allow_internet: bool = Field(
        default=False, description="Network access for the agent (skillci default: no)."
    )
    mcp_servers: list[McpServerConfig] = Field(
        default_factory=list, description="MCP servers offered to the agent."
    )
    env: dict[str, str] = Field(default_factory=dict, description="Task env variables.")
    skills_dir: str | None = Field(
        default=None, description="Where the harness expects skills inside the environment."
    )
    healthcheck: HealthcheckConfig | None = Field(
        default=None, description="Readiness check after the environment starts."
    )
    workdir: str | None = Field(default=None, description="Working directory for commands.")
    docker_image: str | None = Field(
        default=None, description="Prebuilt image; otherwise environment/Dockerfile is built."
    )

    @field_validator("os", mode="before")
    @classmethod
    def _os_lower(cls, v: Any) -> Any:
        return v.lower() if isinstance(v, str) else v

    @model_validator(mode="before")
    @classmethod
    def _legacy_sizes(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        out = dict(data)
        for legacy, key in (("memory", "memory_mb"), ("storage", "storage_mb")):
            raw = out.get(legacy)
            if not isinstance(raw, str):
                continue
            mb = _size_mb(raw, legacy)
            if key in out and out[key] != mb:
                raise ValueError(f"{legacy} = {raw!r} ({mb} MiB) conflicts with {key} = {out[key]}")
            out.setdefault(key, mb)
        if out.get("network_mode") is not None and "allow_internet" not in out:
            out["allow_internet"] = out["network_mode"] == "public"
        return out


VerifierConfig.model_rebuild()


class StepConfig(OpenModel):
    """``[[steps]]`` of a Harbor multi-step task (loaded, not run: docs/design/150)."""

    name: str = Field(description="Step directory name under steps/.")
    agent: AgentConfig = Field(default_factory=AgentConfig)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    min_reward: float | dict[str, float] | None = Field(
        default=None, description="Reward needed to go on to the next step."
    )
    healthcheck: HealthcheckConfig | None = Field(default=None, description="Per-step check.")
    artifacts: list[str | ArtifactConfig] = Field(
        default_factory=list, description="Artifacts of this step."
    )


class PackageInfo(OpenModel):
    """``[task]``: the task's registry package identity (Harbor)."""

    name: str = Field(description="org/name.")
    version: str | None = Field(default=None, description="Package version.")
    description: str = Field(default="", description="What the task is.")
    authors: list[dict[str, Any]] = Field(default_factory=list, description="name, email.")
    keywords: list[str] = Field(default_factory=list, description="Search keywords.")


class TaskConfig(OpenModel):
    """``task.toml`` (or the frontmatter of a BenchFlow ``task.md``). Knows every key of
    Harbor's ``TaskConfig`` (checked against the installed harbor package by
    tests/contract/test_harbor_tasks.py)."""

    version: str | None = Field(default=None, description="Task format version, e.g. '1.0'.")
    schema_version: str | int | None = Field(default=None, description="Alternative spelling.")
    task: PackageInfo | None = Field(default=None, description="Registry package identity.")
    metadata: TaskMetadata = Field(default_factory=TaskMetadata)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    solution: SolutionConfig = Field(default_factory=SolutionConfig)
    source: str | None = Field(default=None, description="Where the task comes from.")
    multi_step_reward_strategy: str | None = Field(
        default=None, description="mean or final (multi-step tasks)."
    )
    steps: list[StepConfig] | None = Field(default=None, description="Multi-step tasks.")
    artifacts: list[str | ArtifactConfig] = Field(
        default_factory=list, description="Paths collected after the trial."
    )

    @field_validator("version", mode="before")
    @classmethod
    def _version_str(cls, v: Any) -> Any:
        return str(v) if isinstance(v, int | float) else v


class Task(BaseModel):
    """A loaded task directory. Paths are absolute; optional parts are ``None`` when absent."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(description="Task id: the directory name.")
    root: Path = Field(description="Absolute path of the task directory.")
    format: Literal["harbor", "benchflow"] = Field(
        description="harbor: instruction.md + task.toml; benchflow: task.md."
    )
    instruction: str = Field(description="The prompt given to the agent.")
    instruction_path: Path = Field(description="instruction.md or task.md.")
    config_path: Path | None = Field(description="task.toml (harbor) or task.md (benchflow).")
    config: TaskConfig = Field(description="Parsed config; unknown keys kept.")
    environment_dir: Path | None = Field(description="environment/: the agent's starting files.")
    dockerfile: Path | None = Field(description="environment/Dockerfile, if present.")
    skills_dir: Path | None = Field(description="environment/skills/, if present.")
    verifier_dir: Path = Field(description="tests/ (harbor) or verifier/ (benchflow).")
    verifier_script: Path = Field(description="tests/test.sh or verifier/test.sh.")
    solution_dir: Path | None = Field(description="solution/ or oracle/.")
    solution_script: Path | None = Field(description="solution/solve.sh or oracle/solve.sh.")
    graders_file: Path | None = Field(
        default=None, description="tests/graders.toml (assertions and rubrics), if present."
    )
    graders: GradersFile | None = Field(
        default=None, description="The parsed graders file (docs/tasks.md 'Graders')."
    )
    content_hash: str = Field(description="sha256 tree hash of every file in the task dir.")
    verifier_hash: str = Field(description="sha256 tree hash of the verifier dir alone.")

    @property
    def has_verifier_script(self) -> bool:
        """Whether tests/test.sh exists (a task with graders may have none)."""
        return self.verifier_script.is_file()

    @property
    def family(self) -> str | None:
        """Task family: ``metadata.family``, else ``metadata.category``."""
        return self.config.metadata.family or self.config.metadata.category

    @property
    def agent_timeout_sec(self) -> float:
        return self.config.agent.timeout_sec

    @property
    def verifier_timeout_sec(self) -> float:
        return self.config.verifier.timeout_sec


# ---------------------------------------------------------------------------- suites


class Split(enum.StrEnum):
    """The dataset splits (the seed's six)."""

    discovery = "discovery"
    """Failures found here drive diagnosis and patches."""
    validation = "validation"
    """Held out from discovery; the gate's main before/after comparison."""
    regression = "regression"
    """Tasks that used to pass; a patch must not break them."""
    ood = "ood"
    """Out-of-distribution tasks: does a patch generalise?"""
    security = "security"
    """Prompt injection and secret-leak tasks."""
    final = "final"
    """SEALED. Only read for the final report, never by optimisation code."""


class Purpose(enum.StrEnum):
    """Why a caller loads a suite or task. Gate for the sealed final split."""

    optimize = "optimize"
    """Discovery, diagnosis, compile, patch, gate: anything that can steer the skill."""
    final_report = "final_report"
    """The one-shot held-out report (``skillci eval run --suite final``)."""
    inspect = "inspect"
    """Format checks and listings (``skillci tasks validate``): no outcome is produced."""


class Suite(BaseModel):
    """``evals/suites/<name>.yaml``: the tasks of one split."""

    model_config = ConfigDict(extra="allow")

    schema_version: int = Field(default=SCHEMA_VERSION, description="Suite schema version.")
    name: str = Field(description="Suite name (defaults to the file stem).")
    split: Split = Field(description="Which split these tasks belong to.")
    description: str | None = Field(default=None, description="What the suite is for.")
    tasks: list[str] = Field(description="Task ids (dir names under the tasks root).")
    repeats: int | None = Field(
        default=None, ge=1, description="Default repeats per task (the CLI flag overrides)."
    )

    @field_validator("tasks")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        dups = sorted(t for t, n in Counter(v).items() if n > 1)
        if dups:
            raise ValueError(f"task ids listed twice: {', '.join(dups)}")
        return v


# ---------------------------------------------------------------------------- rewards


class RewardState(enum.StrEnum):
    """Whether a usable reward was found. Anything but ``ok`` is neither pass nor fail."""

    ok = "ok"
    """A reward file was read and holds a finite number."""
    missing = "missing"
    """Neither reward.txt nor reward.json exists."""
    parse_error = "parse_error"
    """A reward file exists but does not hold a finite number (see ``error``)."""


class Reward(BaseModel):
    """What a verifier decided, read from its reward file."""

    model_config = ConfigDict(extra="forbid")

    state: RewardState = Field(description="ok, missing or parse_error.")
    value: float | None = Field(default=None, description="The reward; None unless state is ok.")
    threshold: float = Field(default=DEFAULT_PASS_THRESHOLD, description="Reward needed to pass.")
    source: Path | None = Field(default=None, description="The file read, if any.")
    error: str | None = Field(default=None, description="Why the reward is unusable.")
    details: dict[str, Any] = Field(
        default_factory=dict, description="Other keys of reward.json (per-check results...)."
    )

    @property
    def passed(self) -> bool | None:
        """True/False when the reward is usable; ``None`` when it is missing or unreadable."""
        if self.state is not RewardState.ok or self.value is None:
            return None
        return self.value >= self.threshold


#: Saved shapes of this package, exported as JSON Schemas (see skillci.schemas).
SAVED_MODELS: dict[str, type[BaseModel]] = {"suite": Suite}

__all__ = [
    "DEFAULT_PASS_THRESHOLD",
    "SAVED_MODELS",
    "SCHEMA_VERSION",
    "AgentConfig",
    "ArtifactConfig",
    "EnvironmentConfig",
    "HealthcheckConfig",
    "McpServerConfig",
    "PackageInfo",
    "Purpose",
    "Reward",
    "RewardState",
    "SolutionConfig",
    "Split",
    "StepConfig",
    "Suite",
    "Task",
    "TaskConfig",
    "TaskMetadata",
    "TpuSpec",
    "VerifierCollectConfig",
    "VerifierConfig",
]
