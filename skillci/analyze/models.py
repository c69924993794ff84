"""The :class:`Diagnosis`: a structured, evidenced account of why the student failed.

Shaped like the seed essay's example (failure_class, student_behavior, teacher_behavior,
proposed_skill_change, confidence, skill_compilable) plus what a pipeline needs to act on
it: the category, evidence references into both run records, the upgrade path when the gap
is not compilable, the detector that decided, and a normalized signature for clustering.

Every string a diagnosis carries that names behaviour is one of our own snake_case names
(action names, rule ids, classes) — never text copied from a trajectory, which is untrusted.
The LLM diagnosis path is held to the same schema (``extra="forbid"``, snake_case fields).
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from skillci.analyze.taxonomy import (
    FailureCategory,
    FailureClass,
    UpgradePath,
    category_of,
    is_compilable,
)
from skillci.basemodels import StrictModel

DIAGNOSIS_SCHEMA_VERSION = 2

#: A behaviour name: snake_case words (digits allowed), like the bundled skill's steps.
SNAKE_RE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)*$")
MAX_NAME = 120


def _snake(v: str | None) -> str | None:
    if v is None:
        return v
    if len(v) > MAX_NAME or not SNAKE_RE.match(v):
        raise ValueError(f"{v[:60]!r} is not a snake_case behaviour name (<= {MAX_NAME} chars)")
    return v


class StudentBehavior(StrictModel):
    """What the student did and failed to do, as behaviour names."""

    last_action: str | None = Field(
        default=None, description="Name of the student's last relevant action, e.g. apply_patch."
    )
    missing_action: str | None = Field(
        default=None, description="What it should have done and did not, e.g. run_target_test."
    )
    incorrect_assumption: str | None = Field(
        default=None,
        description="The assumption its behaviour reveals, e.g. patch_applied_means_problem_fixed.",
    )

    _v = field_validator("last_action", "missing_action", "incorrect_assumption")(_snake)


class TeacherBehavior(StrictModel):
    """What the teacher did on the same task that the student did not."""

    relevant_actions: list[str] = Field(
        default_factory=list,
        max_length=12,
        description="Behaviour names of the teacher's decisive actions, in order.",
    )

    @field_validator("relevant_actions")
    @classmethod
    def _names(cls, v: list[str]) -> list[str]:
        for name in v:
            _snake(name)
        return v


Operation = Literal["add_rule", "replace_rule", "change_loading_scope", "none"]


class ProposedSkillChange(StrictModel):
    """The change the compiler should make (``operation: none`` when not compilable)."""

    operation: Operation = Field(
        description="add_rule (no rule covers the class), replace_rule (strengthen or restore "
        "the covering rule), change_loading_scope (the covering rule sits in a workflow file "
        "the student never loaded: move it to the bootstrap) or none."
    )
    target_rule_id: str | None = Field(
        default=None, description="Rule to replace, or id of the rule to add."
    )
    required_behavior: str | None = Field(
        default=None,
        description="What the student must do, as one snake_case phrase, e.g. "
        "success_may_only_be_reported_after_the_target_test_exits_0.",
    )

    _v = field_validator("required_behavior")(_snake)

    @field_validator("target_rule_id")
    @classmethod
    def _rule_id(cls, v: str | None) -> str | None:
        from skillci.skill.models import RULE_ID_RE

        if v is not None and not RULE_ID_RE.match(v):
            raise ValueError(f"{v!r} is not a rule id like finish.report-success")
        return v


class EvidenceRef(StrictModel):
    """A pointer to one event of one run record (the event itself stays in the store)."""

    run_id: str = Field(description="Run record id.")
    role: Literal["student", "teacher"] = Field(description="Whose trajectory.")
    step: int | None = Field(
        default=None, ge=0, description="Event step; null = the run as a whole (its verdict)."
    )
    note: str = Field(
        description="Our description of what the event shows, as a behaviour name.",
    )

    _v = field_validator("note")(_snake)


class Diagnosis(StrictModel):
    """Why the student failed, from observable events only (``diagnosis.json``)."""

    schema_version: int = Field(
        default=DIAGNOSIS_SCHEMA_VERSION, description="Diagnosis schema version."
    )
    task_id: str = Field(description="Task both runs attempted.")
    failure_class: FailureClass = Field(description="Subclass from the fixed taxonomy.")
    failure_category: FailureCategory = Field(description="Category of failure_class.")
    student_behavior: StudentBehavior = Field(default_factory=StudentBehavior)
    teacher_behavior: TeacherBehavior = Field(default_factory=TeacherBehavior)
    proposed_skill_change: ProposedSkillChange = Field(
        description="What to change in the skill (operation none when not compilable)."
    )
    evidence: list[EvidenceRef] = Field(
        default_factory=list, max_length=20, description="Event references into both records."
    )
    confidence: float = Field(ge=0.0, le=1.0, description="How sure the diagnosis is, 0..1.")
    skill_compilable: bool = Field(description="Whether a skill patch can carry the fix.")
    upgrade_path: UpgradePath | None = Field(
        default=None, description="Where a non-compilable gap goes instead (null if compilable)."
    )
    signature: str = Field(
        description="Normalized key for clustering: class plus behaviour names, no task data."
    )
    detector: str = Field(description="Which detector decided: a detector name, or llm.")
    rationale: str = Field(
        default="", max_length=500, description="One or two sentences for people, ours."
    )
    student_run_ids: list[str] = Field(
        default_factory=list, description="Student runs the diagnosis rests on."
    )
    teacher_run_id: str | None = Field(
        default=None, description="Teacher run compared against (null: none available)."
    )
    alternatives: list[FailureClass] = Field(
        default_factory=list, description="Other classes that also fired, ranked."
    )

    @model_validator(mode="after")
    def _consistent(self) -> Diagnosis:
        if self.failure_category is not category_of(self.failure_class):
            raise ValueError(
                f"failure_category {self.failure_category.value} does not match "
                f"{self.failure_class.value} (it is {category_of(self.failure_class).value})"
            )
        if self.skill_compilable:
            if not is_compilable(self.failure_class):
                raise ValueError(f"{self.failure_class.value} is never skill_compilable")
            if self.upgrade_path is not None:
                raise ValueError("a compilable diagnosis has no upgrade_path")
            if self.proposed_skill_change.operation == "none":
                raise ValueError("a compilable diagnosis proposes add_rule or replace_rule")
            if not self.proposed_skill_change.target_rule_id:
                raise ValueError("proposed_skill_change.target_rule_id is required")
        else:
            if self.upgrade_path is None:
                raise ValueError("a non-compilable diagnosis needs an upgrade_path")
            if self.proposed_skill_change.operation != "none":
                raise ValueError("a non-compilable diagnosis proposes operation none")
        return self

    @property
    def cluster_key(self) -> tuple[str, str]:
        return (self.failure_class.value, self.signature)


SAVED_MODELS: dict[str, type[BaseModel]] = {"diagnosis": Diagnosis}

__all__ = [
    "DIAGNOSIS_SCHEMA_VERSION",
    "SAVED_MODELS",
    "Diagnosis",
    "EvidenceRef",
    "ProposedSkillChange",
    "StudentBehavior",
    "TeacherBehavior",
]
