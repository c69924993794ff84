"""Propose for a whole suite, clustered: one patch per cluster, validated on every member.

1. Baseline every task (``repeats`` student runs each, current package).
2. Pre-diagnose each failing task from its own runs (no teacher) and group the
   diagnoses into clusters (``skillci.analyze.cluster``).
3. Per cluster, in order of size: run the full loop (:func:`propose_task`) on its
   representative (highest-confidence member). A non-compilable or unsuccessful outcome
   is recorded for the cluster; with ``try_members`` the next member gets a go.
4. A cluster's accepted patches are validated on *all* its members: the student re-runs
   each member with the candidate package. Only then does the cluster count as fixed;
   the members' verdicts go into the record (the gate decides later, on held-out splits).

Environment failures (flaky verifier, context overflow) are routed per task and never
reach the teacher. Pure apart from the given callables.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic

from pydantic import BaseModel, ConfigDict, Field

from skillci.analyze.cluster import Cluster, cluster
from skillci.analyze.diagnose import diagnose
from skillci.analyze.models import Diagnosis
from skillci.analyze.taxonomy import FailureClass
from skillci.compile.base import Compiler
from skillci.compile.loop import (
    GENERIC_CLASS,
    NORMAL_LOOP,
    LoopBudget,
    LoopSwitches,
    TaskT,
    propose_task,
)
from skillci.compile.proposal import CostSummary, EvalSummary, Proposal
from skillci.patch.apply import apply
from skillci.patch.models import Patch
from skillci.skill.package import SkillPackage
from skillci.trace.models import RunRecord

SUITE_SCHEMA_VERSION = 1


class ClusterProposal(BaseModel):
    """One cluster's outcome: its patches and how every member did with them."""

    model_config = ConfigDict(extra="forbid")

    failure_class: FailureClass = Field(description="The cluster's failure class.")
    signature: str = Field(description="The cluster's normalized signature.")
    members: list[str] = Field(description="Task ids in the cluster.")
    representative: str | None = Field(
        default=None, description="Task the loop ran on (null when the class is not compilable)."
    )
    status: str = Field(description="Status of the representative's proposal, or a reason.")
    patches: list[Patch] = Field(default_factory=list, description="Patches, in commit order.")
    candidate_hash: str | None = Field(default=None, description="Package hash after them.")
    validation: dict[str, EvalSummary] = Field(
        default_factory=dict, description="Task id -> student runs with the candidate."
    )

    @property
    def validated(self) -> bool:
        """Every member passes with the candidate (and there is a candidate)."""
        return (
            bool(self.patches)
            and all(s.total > 0 and s.passed == s.total for s in self.validation.values())
            and set(self.validation) == set(self.members)
        )


class SuiteProposal(BaseModel):
    """The result of proposing for a set of tasks (``suite-proposal.json``)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=SUITE_SCHEMA_VERSION, description="Shape version.")
    skill_hash: str = Field(description="Package hash before any patch.")
    baseline: dict[str, EvalSummary] = Field(description="Task id -> baseline student runs.")
    pre_diagnoses: list[Diagnosis] = Field(
        default_factory=list, description="Teacher-free diagnoses of the failing tasks."
    )
    clusters: list[ClusterProposal] = Field(default_factory=list, description="Per cluster.")
    proposals: list[Proposal] = Field(
        default_factory=list, description="Full loop records of the representatives."
    )
    cost: CostSummary = Field(default_factory=CostSummary, description="Everything spent.")


@dataclass
class SuiteResult(Generic[TaskT]):
    suite: SuiteProposal
    candidates: dict[tuple[str, str], SkillPackage]
    """Cluster key -> candidate package (clusters with accepted patches only)."""
    runs: list[RunRecord]


def _merge_cost(total: CostSummary, part: CostSummary) -> None:
    for name in type(part).model_fields:
        setattr(total, name, getattr(total, name) + getattr(part, name))


def propose_suite(
    tasks: Sequence[TaskT],
    package: SkillPackage,
    *,
    run_student: Callable[[TaskT, SkillPackage], RunRecord],
    run_teacher: Callable[[TaskT], RunRecord],
    compiler: Compiler,
    budget: LoopBudget | None = None,
    fallback: Compiler | None = None,
    try_members: int = 1,
    switches: LoopSwitches = NORMAL_LOOP,
) -> SuiteResult[TaskT]:
    """Propose for ``tasks``, one patch per cluster (see the module docstring).

    ``try_members``: how many members of a cluster may run the full loop before the
    cluster is given up (the first that ends ``proposed`` wins). ``switches``: the bench
    ablations (:class:`~skillci.compile.loop.LoopSwitches`; default: none)."""
    b = budget or LoopBudget()
    runs: list[RunRecord] = []
    cost = CostSummary()
    by_id: dict[str, TaskT] = {}
    base_runs: dict[str, list[RunRecord]] = {}
    baseline: dict[str, EvalSummary] = {}
    for task in tasks:
        rs = [run_student(task, package) for _ in range(b.repeats)]
        for r in rs:
            cost.add_run(r)
        runs += rs
        tid = rs[0].task_id
        by_id[tid], base_runs[tid] = task, rs
        baseline[tid] = EvalSummary.of(rs, package.content_hash)
    generic = GENERIC_CLASS if not switches.taxonomy else None
    pre = [
        diagnose(rs, None, package, forced_class=generic)
        for rs in base_runs.values()
        if any(not r.passed for r in rs)
    ]
    suite = SuiteProposal(skill_hash=package.content_hash, baseline=baseline, pre_diagnoses=pre)
    candidates: dict[tuple[str, str], SkillPackage] = {}
    for cl in cluster(pre):
        cp = ClusterProposal(
            failure_class=cl.failure_class,
            signature=cl.signature,
            members=cl.task_ids,
            status="not_compilable",
        )
        suite.clusters.append(cp)
        if not cl.skill_compilable and cl.failure_class.value in (
            "flaky_environment",
            "context_overflow",
        ):
            cp.status = f"not_compilable: {cl.failure_class.value}"
            continue
        candidate = _run_cluster(
            cl,
            cp,
            by_id,
            base_runs,
            package,
            suite,
            runs,
            cost,
            run_student,
            run_teacher,
            compiler,
            b,
            fallback,
            try_members,
            switches,
        )
        if candidate is None:
            continue
        candidates[cl.key] = candidate
        for tid in cl.task_ids:
            if tid == cp.representative:
                rep = next(p for p in suite.proposals if p.task_id == tid)
                if rep.after is not None:
                    cp.validation[tid] = rep.after
                continue
            rs = [run_student(by_id[tid], candidate) for _ in range(b.repeats)]
            for r in rs:
                cost.add_run(r)
            runs += rs
            cp.validation[tid] = EvalSummary.of(rs, candidate.content_hash)
    suite.cost = cost
    return SuiteResult(suite, candidates, runs)


def _run_cluster(
    cl: Cluster,
    cp: ClusterProposal,
    by_id: dict[str, TaskT],
    baseline_runs: dict[str, list[RunRecord]],
    package: SkillPackage,
    suite: SuiteProposal,
    runs: list[RunRecord],
    cost: CostSummary,
    run_student: Callable[[TaskT, SkillPackage], RunRecord],
    run_teacher: Callable[[TaskT], RunRecord],
    compiler: Compiler,
    budget: LoopBudget,
    fallback: Compiler | None,
    try_members: int,
    switches: LoopSwitches,
) -> SkillPackage | None:
    for tid in cl.task_ids[: max(1, try_members)]:
        res = propose_task(
            by_id[tid],
            package,
            run_student=run_student,
            run_teacher=run_teacher,
            compiler=compiler,
            budget=budget,
            fallback=fallback,
            baseline=baseline_runs[tid],
            switches=switches,
        )
        suite.proposals.append(res.proposal)
        runs += res.runs
        _merge_cost(cost, res.proposal.cost)
        cp.representative = tid
        cp.status = res.proposal.status
        if res.proposal.ready and res.candidate is not None:
            cp.patches = list(res.proposal.patches)
            cp.candidate_hash = res.candidate.content_hash
            return res.candidate
    return None


def candidate_of(package: SkillPackage, patches: Sequence[Patch]) -> SkillPackage:
    """Re-create a cluster's candidate from the original package and its patches."""
    for p in patches:
        package = apply(package, p)
    return package


SAVED_MODELS: dict[str, type[BaseModel]] = {"suite-proposal": SuiteProposal}

__all__ = [
    "SAVED_MODELS",
    "SUITE_SCHEMA_VERSION",
    "ClusterProposal",
    "SuiteProposal",
    "SuiteResult",
    "candidate_of",
    "propose_suite",
]
