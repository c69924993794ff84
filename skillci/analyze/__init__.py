"""Contrastive analysis: student vs teacher trajectories -> a structured :class:`Diagnosis`.

Pure: no I/O, no model calls (the optional LLM diagnosis in :mod:`skillci.analyze.llm`
receives its model as a callable). Only observable events are used — tool calls, tool
results, skill loads, errors, the stop reason and the final answer.

Public API::

    diagnose(student, teacher, package, *, history=(), targets=()) -> Diagnosis
    cluster(diagnoses) -> list[Cluster];  find_cluster(clusters, diagnosis) -> Cluster | None
    Trajectory.from_record(record), align(student, teacher) -> Alignment
    DETECTORS / run_detectors(ctx) -> list[Hit]
    llm_diagnose(...)  (see skillci.analyze.llm)

See docs/design/050-failure-taxonomy.md, 051-detectors-and-compileability.md, 052-llm-paths.md.

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.skill``, ``skillci.trace``
(docs/architecture.md; checked by tests/unit/test_architecture.py).
"""

from __future__ import annotations

from skillci.analyze.align import Alignment, align
from skillci.analyze.cluster import Cluster, cluster, find_cluster
from skillci.analyze.detectors import DETECTORS, DetectContext, Hit, run_detectors
from skillci.analyze.diagnose import diagnose, rank, signature
from skillci.analyze.models import (
    DIAGNOSIS_SCHEMA_VERSION,
    Diagnosis,
    EvidenceRef,
    ProposedSkillChange,
    StudentBehavior,
    TeacherBehavior,
)
from skillci.analyze.taxonomy import (
    TAXONOMY,
    FailureCategory,
    FailureClass,
    UpgradePath,
    category_of,
    is_compilable,
)
from skillci.analyze.trajectory import Action, ActionKind, Trajectory

__all__ = [
    "DETECTORS",
    "DIAGNOSIS_SCHEMA_VERSION",
    "TAXONOMY",
    "Action",
    "ActionKind",
    "Alignment",
    "Cluster",
    "DetectContext",
    "Diagnosis",
    "EvidenceRef",
    "FailureCategory",
    "FailureClass",
    "Hit",
    "ProposedSkillChange",
    "StudentBehavior",
    "TeacherBehavior",
    "Trajectory",
    "UpgradePath",
    "align",
    "category_of",
    "cluster",
    "diagnose",
    "find_cluster",
    "is_compilable",
    "rank",
    "run_detectors",
    "signature",
]
