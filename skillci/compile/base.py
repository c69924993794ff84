"""The compiler interface: a diagnosis (or a cluster) + the current package -> a bounded Patch.

Every compiler implements :class:`Compiler` (``name`` and ``compile``). Compilers only
*propose*; :func:`skillci.compile.patch_check.check_patch` then applies the patch in memory and
runs the manifest's limits, the guard and lint on the result. Nothing a compiler returns
is trusted more than a model's output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from skillci.analyze.cluster import Cluster
from skillci.analyze.modelio import ModelExchange
from skillci.analyze.models import Diagnosis
from skillci.patch.models import Patch
from skillci.skill.package import SkillPackage
from skillci.trace.models import RunRecord

COMPILE_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class CompileInput:
    """What a compiler works from."""

    diagnosis: Diagnosis
    """The diagnosis to fix (a cluster's representative when ``cluster`` is set)."""
    package: SkillPackage
    teacher: RunRecord | None = None
    """The teacher run the diagnosis compared against (for observed action shapes)."""
    students: Sequence[RunRecord] = field(default_factory=tuple)
    """The failing student runs (evidence for the LLM compiler's prompt)."""
    cluster: Cluster | None = None
    """Set when one patch should serve a whole cluster of tasks."""
    regression_task: str | None = None
    """When set, the patch also adds this task id to evals/regression.yaml."""
    instruction: str = ""
    """The task's instruction (the repository's text), for the LLM compiler's prompt."""
    checks: tuple[str, ...] = ()
    """Signatures of the task verifier's commands (``classify.verifier_checks``)."""

    @property
    def supporting_runs(self) -> list[str]:
        if self.cluster is not None:
            return self.cluster.supporting_runs
        runs = list(self.diagnosis.student_run_ids)
        if self.diagnosis.teacher_run_id:
            runs.append(self.diagnosis.teacher_run_id)
        return list(dict.fromkeys(runs))


class CompileOutput(BaseModel):
    """A compiler's proposal and how it was made (kept with the proposal record)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=COMPILE_SCHEMA_VERSION, description="Shape version.")
    compiler: str = Field(description="Compiler name: template or llm.")
    patch: Patch = Field(description="The proposed patch (id filled in).")
    exchange: ModelExchange | None = Field(
        default=None, description="Prompt and raw responses (LLM compiler only)."
    )
    notes: list[str] = Field(default_factory=list, description="What the compiler decided, ours.")


class Compiler(Protocol):
    """Diagnosis + package -> patch. Raises ``CompileError`` when there is nothing to
    compile, ``ModelOutputError`` when a model's answer stays invalid after a retry."""

    @property
    def name(self) -> str: ...

    def compile(self, request: CompileInput) -> CompileOutput: ...


__all__ = ["COMPILE_SCHEMA_VERSION", "CompileInput", "CompileOutput", "Compiler"]
