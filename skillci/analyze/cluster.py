"""Cluster diagnoses across tasks so one patch serves (and is validated on) a whole cluster.

Key: (failure_class, signature). The signature holds only our behaviour names (missing
action, revealed assumption), so the same gap on different tasks — with different files,
tools and test ids — lands in one cluster. Non-compilable diagnoses cluster too (a report
of how many tasks need retrieval or fine-tuning is useful), but they never get a patch.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field

from skillci.analyze.models import Diagnosis
from skillci.analyze.taxonomy import FailureClass, UpgradePath

CLUSTER_SCHEMA_VERSION = 1


class Cluster(BaseModel):
    """Diagnoses that share a failure class and signature."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=CLUSTER_SCHEMA_VERSION, description="Cluster schema.")
    failure_class: FailureClass = Field(description="Shared failure class.")
    signature: str = Field(description="Shared normalized signature.")
    diagnoses: list[Diagnosis] = Field(description="Members, best (highest confidence) first.")

    @property
    def key(self) -> tuple[str, str]:
        return (self.failure_class.value, self.signature)

    @property
    def task_ids(self) -> list[str]:
        """Member tasks, in member order, without duplicates."""
        return list(dict.fromkeys(d.task_id for d in self.diagnoses))

    @property
    def representative(self) -> Diagnosis:
        """The member the compiler works from: highest confidence, then task id."""
        return self.diagnoses[0]

    @property
    def skill_compilable(self) -> bool:
        return self.representative.skill_compilable

    @property
    def upgrade_path(self) -> UpgradePath | None:
        return self.representative.upgrade_path

    @property
    def confidence(self) -> float:
        """Mean member confidence (a cluster is as sure as its members on average)."""
        return round(sum(d.confidence for d in self.diagnoses) / len(self.diagnoses), 3)

    @property
    def supporting_runs(self) -> list[str]:
        runs: list[str] = []
        for d in self.diagnoses:
            runs += d.student_run_ids
            if d.teacher_run_id:
                runs.append(d.teacher_run_id)
        return list(dict.fromkeys(runs))

    def explains(self, diagnosis: Diagnosis) -> bool:
        return diagnosis.cluster_key == self.key


def cluster(diagnoses: Iterable[Diagnosis]) -> list[Cluster]:
    """Group by (failure_class, signature); clusters ordered by size, then key.

    Within a cluster, members are ordered by confidence (desc) then task id, so the
    result does not depend on input order.
    """
    groups: dict[tuple[str, str], list[Diagnosis]] = {}
    for d in diagnoses:
        groups.setdefault(d.cluster_key, []).append(d)
    out = [
        Cluster(
            failure_class=FailureClass(k[0]),
            signature=k[1],
            diagnoses=sorted(ds, key=lambda d: (-d.confidence, d.task_id)),
        )
        for k, ds in groups.items()
    ]
    out.sort(key=lambda c: (-len(c.diagnoses), c.key))
    return out


def find_cluster(clusters: Sequence[Cluster], diagnosis: Diagnosis) -> Cluster | None:
    """The cluster that already explains ``diagnosis`` (same class and signature), if any."""
    return next((c for c in clusters if c.explains(diagnosis)), None)


SAVED_MODELS: dict[str, type[BaseModel]] = {"cluster": Cluster}

__all__ = ["CLUSTER_SCHEMA_VERSION", "SAVED_MODELS", "Cluster", "cluster", "find_cluster"]
