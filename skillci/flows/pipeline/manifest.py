"""``manifest.json`` of a pipeline run: input identity, stage states, result.

Written atomically after every state change; the next run with the same ``--run-dir``
reads it, checks that the inputs are the same (:class:`InputIdentity`), and resumes
from the first stage that is not ``done`` (or whose recorded outputs no longer hash to
what was written). See docs/design/104.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from skillci.basemodels import StrictModel
from skillci.compile.deep import RolloutStats
from skillci.errors import InvalidInputError
from skillci.fsutil import atomic_write_text

MANIFEST_SCHEMA_VERSION = 1
MANIFEST_FILE = "manifest.json"
StageName = Literal[
    "raw_eval", "static", "static_eval", "fast", "fast_eval", "deep", "final_eval", "publish"
]
STAGES: tuple[StageName, ...] = (
    "raw_eval",
    "static",
    "static_eval",
    "fast",
    "fast_eval",
    "deep",
    "final_eval",
    "publish",
)
Status = Literal["pending", "running", "done", "failed", "skipped"]


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


class RouteIdentity(StrictModel):
    route: str = Field(description="Route name.")
    fingerprint: str = Field(description="Hash of what can change the route's answers.")


class InputIdentity(StrictModel):
    """Everything that determines the run's outcome; a rerun must match it."""

    task: str = Field(description="Task id.")
    task_hash: str = Field(description="Content hash of the task dir.")
    skill: str = Field(description="Skill name.")
    skill_source: str = Field(description="The task's skill folder, relative to the root.")
    skill_hash: str = Field(description="Content hash of the imported input package.")
    student: RouteIdentity
    compiler: RouteIdentity
    harness: str
    profile_hash: str = Field(description="Revision of the student's input (config) profile.")
    skillci_version: str
    options: dict[str, Any] = Field(description="Options that change outcomes.")

    @property
    def digest(self) -> str:
        data = json.dumps(self.model_dump(mode="json"), sort_keys=True)
        return hashlib.sha256(data.encode()).hexdigest()


class StageState(StrictModel):
    """One stage."""

    name: StageName
    status: Status = "pending"
    started_at: str | None = None
    finished_at: str | None = None
    attempts: int = Field(default=0, ge=0, description="How many times the stage started.")
    error: str | None = Field(default=None, description="Why it failed (one line).")
    outputs: dict[str, str] = Field(
        default_factory=dict, description="Run-dir-relative artifact -> content hash."
    )
    stats: RolloutStats | None = Field(default=None, description="Eval stages: what they measured.")
    notes: list[str] = Field(default_factory=list, description="What the stage decided, ours.")


class PipelineResult(StrictModel):
    """The deliverable and the numbers next to each other."""

    final_skill: str = Field(description="Run-dir-relative path of S_final.")
    final_hash: str
    lint_errors: int
    lint_warnings: int
    evals: dict[str, RolloutStats] = Field(description="raw/static/fast/final eval stats.")
    branch: str | None = None
    pr: int | None = None


class RunManifest(StrictModel):
    """``manifest.json``."""

    schema_version: int = Field(default=MANIFEST_SCHEMA_VERSION)
    run_id: str
    created_at: str
    identity: InputIdentity
    identity_digest: str
    stages: list[StageState]
    result: PipelineResult | None = None

    def stage(self, name: StageName) -> StageState:
        return next(s for s in self.stages if s.name == name)

    def comparable(self) -> dict[str, Any]:
        """The manifest without what differs between equal runs (ids, times, attempts)."""
        data = self.model_dump(mode="json", exclude={"run_id", "created_at"})
        for s in data["stages"]:
            for k in ("started_at", "finished_at", "attempts"):
                s.pop(k, None)
        return data


def new_manifest(run_id: str, identity: InputIdentity) -> RunManifest:
    return RunManifest(
        run_id=run_id,
        created_at=now(),
        identity=identity,
        identity_digest=identity.digest,
        stages=[StageState(name=n) for n in STAGES],
    )


def save_manifest(run_dir: Path, m: RunManifest) -> None:
    atomic_write_text(run_dir / MANIFEST_FILE, m.model_dump_json(indent=1) + "\n")


def load_manifest(run_dir: Path) -> RunManifest | None:
    path = run_dir / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        m = RunManifest.model_validate_json(path.read_bytes())
    except ValueError as exc:
        raise InvalidInputError(
            f"manifest.json does not parse: {str(exc).splitlines()[0]}",
            file=path,
            hint="restore it, or start a new run with another --run-dir",
        ) from None
    if m.schema_version != MANIFEST_SCHEMA_VERSION:
        raise InvalidInputError(
            f"manifest schema_version {m.schema_version}; this skillci writes "
            f"{MANIFEST_SCHEMA_VERSION}",
            file=path,
            hint="start a new run with another --run-dir",
        )
    return m


SAVED_MODELS: dict[str, type[BaseModel]] = {"pipeline-manifest": RunManifest}

__all__ = [
    "MANIFEST_FILE",
    "MANIFEST_SCHEMA_VERSION",
    "SAVED_MODELS",
    "STAGES",
    "InputIdentity",
    "PipelineResult",
    "RouteIdentity",
    "RunManifest",
    "StageName",
    "StageState",
    "Status",
    "load_manifest",
    "new_manifest",
    "now",
    "save_manifest",
]
