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

from pydantic import BaseModel, ConfigDict, Field, field_validator

SCHEMA_VERSION = 1

#: Reward needed to pass (SkillsBench rewards are binary 0/1; partial credit does not pass).
DEFAULT_PASS_THRESHOLD = 1.0


class _Open(BaseModel):
    """Shapes read from files others write: unknown keys are kept, not rejected."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)


# ---------------------------------------------------------------------------- task.toml


class TaskMetadata(_Open):
    """``[metadata]``: descriptive only; never changes how a trial runs."""

    author: str | None = Field(default=None, description="Author name (or author_name).")
    author_name: str | None = Field(default=None, description="Harbor spelling of author.")
    author_email: str | None = Field(default=None, description="Author e-mail.")
    difficulty: str | None = Field(default=None, description="easy, medium or hard.")
    category: str | None = Field(default=None, description="Domain, e.g. software-engineering.")
    family: str | None = Field(
        default=None, description="skillci: task family used to group results (e.g. repo-repair)."
    )
    tags: list[str] = Field(default_factory=list, description="Free-form tags.")


class VerifierConfig(_Open):
    """``[verifier]``."""

    timeout_sec: float = Field(default=600.0, gt=0, description="Wall time for tests/test.sh.")


class AgentConfig(_Open):
    """``[agent]``."""

    timeout_sec: float = Field(default=600.0, gt=0, description="Wall time for the agent.")


class EnvironmentConfig(_Open):
    """``[environment]``: resources and image. Local runners honour the timeouts and
    ``allow_internet``; container runners honour all of it."""

    build_timeout_sec: float = Field(default=600.0, gt=0, description="Image build/setup time.")
    cpus: float = Field(default=1, gt=0, description="CPU cores.")
    memory_mb: int = Field(default=2048, gt=0, description="Memory limit, MiB.")
    storage_mb: int = Field(default=10240, gt=0, description="Disk limit, MiB.")
    allow_internet: bool = Field(
        default=False, description="Network access for the agent (skillci default: no)."
    )
    skills_dir: str | None = Field(
        default=None, description="Where the harness expects skills inside the environment."
    )
    docker_image: str | None = Field(
        default=None, description="Prebuilt image; otherwise environment/Dockerfile is built."
    )


class TaskConfig(_Open):
    """``task.toml`` (or the frontmatter of a BenchFlow ``task.md``)."""

    version: str | None = Field(default=None, description="Task format version, e.g. '1.0'.")
    schema_version: str | int | None = Field(default=None, description="Alternative spelling.")
    metadata: TaskMetadata = Field(default_factory=TaskMetadata)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)

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
    content_hash: str = Field(description="sha256 tree hash of every file in the task dir.")
    verifier_hash: str = Field(description="sha256 tree hash of the verifier dir alone.")

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
    "EnvironmentConfig",
    "Purpose",
    "Reward",
    "RewardState",
    "Split",
    "Suite",
    "Task",
    "TaskConfig",
    "TaskMetadata",
    "VerifierConfig",
]
