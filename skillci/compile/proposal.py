"""The :class:`Proposal`: everything one ``propose`` decided for one task, for the PR body.

It holds the evidence trail of the loop (``skillci.compile.loop``): the baseline student
runs, the teacher run, each round's diagnosis, compiler output (with the LLM prompt and
raw response), patch check (limits, guard, lint), and the student re-runs with the
candidate; then the final status, the patches to commit (one commit per patch, in order),
the upgrade path for non-compilable gaps, and the cost.

Texts in a proposal are ours except where a field says "untrusted" (the LLM exchange's
responses, a model diagnosis's rationale): render those quoted.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from skillci.analyze.modelio import ModelExchange
from skillci.analyze.models import Diagnosis
from skillci.analyze.taxonomy import UpgradePath
from skillci.basemodels import StrictModel
from skillci.compile.base import CompileOutput
from skillci.compile.patch_check import PatchCheck
from skillci.patch.models import Patch
from skillci.patch.second_opinion import GuardOpinion
from skillci.trace.models import RunRecord

PROPOSAL_SCHEMA_VERSION = 2

Status = Literal[
    "proposed",
    "no_failure",
    "not_reproducible",
    "not_compilable",
    "explained_by_cluster",
    "diagnosis_repeated",
    "no_improvement",
    "rejected_by_guard",
    "out_of_limits",
    "invalid_patch",
    "compiler_failed",
    "budget_exhausted",
]
"""Why the loop ended. Only ``proposed`` means: open (or update) a pull request."""


class EvalSummary(StrictModel):
    """Verdicts of a set of student repeats with one skill version."""

    skill_hash: str | None = Field(description="Content hash of the package the runs used.")
    run_ids: list[str] = Field(description="Run record ids, in order.")
    states: list[str] = Field(description="Evaluation state of each run.")
    rewards: list[float | None] = Field(description="Reward of each run.")
    passed: int = Field(ge=0, description="How many runs passed.")
    total: int = Field(ge=0, description="How many runs there were.")

    @property
    def pass_rate(self) -> float:
        return self.passed / self.total if self.total else 0.0

    @classmethod
    def of(cls, runs: list[RunRecord], skill_hash: str | None) -> EvalSummary:
        return cls(
            skill_hash=skill_hash,
            run_ids=[r.run_id for r in runs],
            states=[r.evaluation.state.value for r in runs],
            rewards=[r.evaluation.reward for r in runs],
            passed=sum(r.passed for r in runs),
            total=len(runs),
        )


class CostSummary(StrictModel):
    """What the loop spent (runs' own costs plus compiler/diagnosis model calls)."""

    student_runs: int = Field(default=0, ge=0, description="Student trials executed.")
    teacher_runs: int = Field(default=0, ge=0, description="Teacher trials executed.")
    compiler_calls: int = Field(default=0, ge=0, description="Model calls of LLM compilers.")
    input_tokens: int = Field(default=0, ge=0, description="Prompt tokens over everything.")
    output_tokens: int = Field(default=0, ge=0, description="Completion tokens.")
    usd: float = Field(default=0.0, ge=0, description="Dollars (0 where prices are unknown).")
    wall_time_sec: float = Field(default=0.0, ge=0, description="Summed trial wall time.")

    def add_run(self, run: RunRecord) -> None:
        if run.agent_role.value == "teacher":
            self.teacher_runs += 1
        else:
            self.student_runs += 1
        self.input_tokens += run.cost.input_tokens or 0  # skillci's own runs: always known
        self.output_tokens += run.cost.output_tokens or 0
        self.usd += run.cost.usd or 0.0
        self.wall_time_sec += run.cost.wall_time_sec


class Round(StrictModel):
    """One diagnose -> compile -> check -> re-run round."""

    index: int = Field(ge=1, description="1-based round number.")
    diagnosis: Diagnosis = Field(description="Diagnosis this round compiled from.")
    diagnosis_exchange: ModelExchange | None = Field(
        default=None, description="LLM second opinion (prompt, raw answers), when one was asked."
    )
    compile: CompileOutput | None = Field(
        default=None, description="Compiler output, incl. the LLM prompt/responses."
    )
    compiler_error: str | None = Field(
        default=None, description="Why the compiler produced no patch (ours)."
    )
    compiler_exchange: ModelExchange | None = Field(
        default=None,
        description="The failed compiler's prompt, raw answers (capped), finish reasons and "
        "rejection kinds, when the configured compiler gave no valid patch.",
    )
    fallback: str | None = Field(
        default=None,
        description="The compiler that produced this round's patch after the configured one "
        "failed (propose --fallback); null: no fallback was used.",
    )
    check: PatchCheck | None = Field(default=None, description="Limits, guard and lint results.")
    after: EvalSummary | None = Field(
        default=None, description="Student re-runs with the candidate (same instance)."
    )
    outcome: Literal["passed", "still_failing", "stopped"] = Field(
        description="passed: the re-runs passed; still_failing: next round; stopped: see status."
    )


class Proposal(StrictModel):
    """The result of proposing for one task (``proposal.json``)."""

    schema_version: int = Field(default=PROPOSAL_SCHEMA_VERSION, description="Shape version.")
    task_id: str = Field(description="The task proposed for.")
    skill_name: str = Field(description="Skill package name.")
    skill_version: str = Field(description="Version of the package proposed against.")
    skill_hash: str = Field(description="Content hash of the package before any patch.")
    candidate_hash: str | None = Field(
        default=None, description="Content hash after every patch (null when none applied)."
    )
    status: Status = Field(description="Why the loop ended; only 'proposed' opens a PR.")
    reason: str = Field(description="One line saying why, ours.")
    compiler: str = Field(description="Compiler name used (template or llm).")
    diagnosis: Diagnosis | None = Field(
        default=None, description="The first diagnosis (the PR's headline)."
    )
    patches: list[Patch] = Field(
        default_factory=list, description="Patches to commit, in order (one commit each)."
    )
    rounds: list[Round] = Field(default_factory=list, description="Every round, in order.")
    guard_opinions: list[GuardOpinion] = Field(
        default_factory=list,
        description="The guard classifiers' second opinions, per route then per patch "
        "(--guard-model, repeatable; designs 407, 458): any caution marks the PR "
        "needs-approval, none undoes a rejection.",
    )
    before: EvalSummary | None = Field(
        default=None, description="Baseline student runs with the unpatched skill."
    )
    after: EvalSummary | None = Field(
        default=None, description="Student runs with the final candidate."
    )
    teacher_run_id: str | None = Field(default=None, description="Teacher run, if one was run.")
    upgrade_path: UpgradePath | None = Field(
        default=None, description="Where a non-compilable gap goes instead."
    )
    cluster_key: list[str] | None = Field(
        default=None, description="[failure_class, signature] when explained by a cluster."
    )
    cost: CostSummary = Field(default_factory=CostSummary, description="What was spent.")

    @property
    def ready(self) -> bool:
        """Whether the lead should open or update a pull request."""
        return self.status == "proposed" and bool(self.patches)

    @property
    def fallback_used(self) -> str | None:
        """The fallback compiler of the first round that used one (None: none did)."""
        return next((r.fallback for r in self.rounds if r.fallback), None)

    @property
    def compiler_failures(self) -> list[str]:
        """Every compiler failure, ours, one line each (round, kinds, reason)."""
        out = []
        for r in self.rounds:
            if r.compiler_error:
                kinds = (
                    ", ".join(dict.fromkeys(r.compiler_exchange.failures))
                    if r.compiler_exchange
                    else ""
                )
                out.append(
                    f"round {r.index}: {r.compiler_error}"
                    + (f" [{kinds}]" if kinds and kinds not in r.compiler_error else "")
                )
        return out

    @property
    def needs_approval(self) -> bool:
        return any(r.check is not None and r.check.needs_approval for r in self.rounds) or any(
            o.verdict == "needs-approval" for o in self.guard_opinions
        )

    @property
    def failure_class(self) -> str | None:
        return self.diagnosis.failure_class.value if self.diagnosis is not None else None

    @property
    def supporting_runs(self) -> list[str]:
        runs: list[str] = []
        for p in self.patches:
            runs += p.supporting_runs
        return list(dict.fromkeys(runs))


SAVED_MODELS: dict[str, type[BaseModel]] = {"proposal": Proposal}

__all__ = [
    "PROPOSAL_SCHEMA_VERSION",
    "SAVED_MODELS",
    "CostSummary",
    "EvalSummary",
    "Proposal",
    "Round",
    "Status",
]
