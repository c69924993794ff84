"""The shape of ``tests/graders.toml`` and of what grading a trial produced.

A grader is an **assertion** (a deterministic check of the final answer or a file the agent
wrote) or a **rubric** (criteria a judge model decides one by one). Each grader yields a
:class:`GraderResult` with a score in [0, 1] (an assertion: 0 or 1; a rubric: the fraction
of its criteria the judge passed); the task's reward follows :class:`RewardRule`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, Field, field_validator, model_validator

from skillci.basemodels import StrictModel
from skillci.graders.kinds import InvalidAssertion
from skillci.graders.registry import assertion_kind, check_kind

GRADERS_SCHEMA_VERSION = 1
#: Where a task keeps its graders: inside the verifier dir (the agent never sees it, and
#: the verifier hash — the trial's evaluator identity — covers it).
GRADERS_FILE = "graders.toml"

RuleName = Literal["all", "weighted", "threshold"]
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_target(v: str) -> str:
    """``answer`` or ``file:<relative path inside the workspace>``."""
    if v == "answer":
        return v
    if not v.startswith("file:") or not v[5:]:
        raise ValueError(f"target {v!r}: use 'answer' or 'file:<path in the workspace>'")
    path = v[5:]
    if path.startswith("/") or ".." in path.split("/"):
        raise ValueError(f"target {v!r}: the path must be relative and stay in the workspace")
    return v


class RewardRule(StrictModel):
    """``[reward]``: how grader scores make the task's reward."""

    rule: RuleName = Field(
        default="all",
        description="all: 1 when every grader passes, else 0; weighted: the weighted mean "
        "score (passes at 1.0 only); threshold: the weighted mean, passing at `threshold`.",
    )
    threshold: float | None = Field(
        default=None, ge=0.0, le=1.0, description="Pass mark of rule = 'threshold'."
    )
    verifier_weight: float = Field(
        default=1.0, gt=0, description="Weight of tests/test.sh's reward, when the task has one."
    )

    @model_validator(mode="after")
    def _threshold(self) -> RewardRule:
        if self.rule == "threshold" and self.threshold is None:
            raise ValueError("rule = 'threshold' needs threshold = <0..1>")
        if self.rule != "threshold" and self.threshold is not None:
            raise ValueError(
                f"threshold is only read by rule = 'threshold' (rule is {self.rule!r})"
            )
        return self

    @property
    def pass_mark(self) -> float:
        return self.threshold if self.threshold is not None else 1.0


class Assertion(StrictModel):
    """``[[assertion]]``: one deterministic check."""

    id: str | None = Field(default=None, description="Name in reports (default: kind-N).")
    kind: str = Field(
        description="A registered assertion kind: exact, contains, regex, json-schema, "
        "file-exists, command-exit, or a plug-in's (entry points 'skillci.graders')."
    )
    target: str = Field(
        default="answer", description="'answer' (the final answer) or 'file:<workspace path>'."
    )
    value: str | None = Field(default=None, description="exact/contains: text; regex: pattern.")
    json_schema: dict[str, Any] | None = Field(
        default=None, alias="schema", description="json-schema: the JSON Schema."
    )
    command: str | None = Field(
        default=None, description="command-exit: run in the verifier's sandbox, cwd the workspace."
    )
    expect_exit: int = Field(default=0, description="command-exit: the exit code that passes.")
    case_sensitive: bool = Field(default=True, description="exact/contains/regex.")
    negate: bool = Field(default=False, description="Pass when the check does NOT hold.")
    weight: float = Field(default=1.0, gt=0, description="Weight under weighted/threshold.")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Options of a plug-in kind, checked by that kind (skillci's own take none).",
    )

    @field_validator("kind")
    @classmethod
    def _registered_kind(cls, v: str) -> str:
        return check_kind(v)

    @field_validator("target")
    @classmethod
    def _target(cls, v: str) -> str:
        return check_target(v)

    @model_validator(mode="after")
    def _fields_of_kind(self) -> Assertion:
        """What the kind needs (its ``requires``, a ``file:`` target), then its own
        :meth:`~skillci.graders.kinds.AssertionKind.validate` (an
        :class:`~skillci.graders.kinds.InvalidAssertion` keeps its field for the line)."""
        kind = assertion_kind(self.kind)
        for key in kind.requires:
            if getattr(self, "json_schema" if key == "schema" else key) is None:
                raise InvalidAssertion(f"kind = {self.kind!r} needs {key} = ...", field=key)
        if kind.file_only and self.target == "answer":
            raise InvalidAssertion(
                f"kind = {self.kind!r} needs target = 'file:<path>'", field="target"
            )
        kind.validate(self)
        return self


class Rubric(StrictModel):
    """``[[rubric]]``: criteria a judge model decides, one verdict per criterion."""

    id: str | None = Field(default=None, description="Name in reports (default: rubric-N).")
    target: str = Field(default="answer", description="'answer' or 'file:<workspace path>'.")
    criteria: list[str] = Field(min_length=1, description="Statements the output must satisfy.")
    reference: str | None = Field(
        default=None, description="What a good output looks like (shown to the judge)."
    )
    min_score: float = Field(
        default=1.0, ge=0.0, le=1.0, description="Fraction of criteria needed to pass."
    )
    weight: float = Field(default=1.0, gt=0, description="Weight under weighted/threshold.")

    @field_validator("target")
    @classmethod
    def _target(cls, v: str) -> str:
        return check_target(v)

    @field_validator("criteria")
    @classmethod
    def _non_empty(cls, v: list[str]) -> list[str]:
        if any(not c.strip() for c in v):
            raise ValueError("a criterion is empty")
        return v


class GradersFile(StrictModel):
    """``tests/graders.toml``."""

    schema_version: int = Field(default=GRADERS_SCHEMA_VERSION, description="File version.")
    reward: RewardRule = Field(default_factory=RewardRule, description="[reward].")
    assertion: list[Assertion] = Field(default_factory=list, description="[[assertion]].")
    rubric: list[Rubric] = Field(default_factory=list, description="[[rubric]].")

    @model_validator(mode="after")
    def _ids(self) -> GradersFile:
        if not self.assertion and not self.rubric:
            raise ValueError("declare at least one [[assertion]] or [[rubric]]")
        for i, a in enumerate(self.assertion):
            if a.id is None:
                a.id = f"{a.kind}-{i + 1}"
        for i, r in enumerate(self.rubric):
            if r.id is None:
                r.id = f"rubric-{i + 1}"
        ids = [a.id for a in self.assertion] + [r.id for r in self.rubric]
        for gid in ids:
            if gid is None or not _ID.match(gid) or gid == "verifier":
                raise ValueError(f"grader id {gid!r}: letters, digits, . _ - (not 'verifier')")
        dups = sorted({g for g in ids if ids.count(g) > 1 and g is not None})
        if dups:
            raise ValueError(f"grader ids used twice: {', '.join(dups)}")
        return self

    @property
    def needs_judge(self) -> bool:
        return bool(self.rubric)


class CriterionVerdict(StrictModel):
    """The judge's verdict on one criterion of a rubric."""

    criterion: str = Field(description="The criterion's text.")
    passed: bool = Field(description="The judge says the output satisfies it.")
    reason: str = Field(default="", description="The judge's reason (untrusted model text).")


class GraderResult(StrictModel):
    """One grader's outcome in one trial."""

    id: str = Field(description="Grader id ('verifier' for tests/test.sh).")
    kind: str = Field(description="An assertion kind, 'rubric' or 'verifier'.")
    passed: bool = Field(description="This grader passed.")
    score: float = Field(ge=0.0, le=1.0, description="0/1 (assertion), fraction (rubric).")
    weight: float = Field(default=1.0, gt=0, description="Weight under weighted/threshold.")
    detail: str = Field(default="", description="Why (what was looked for, what was found).")
    criteria: list[CriterionVerdict] = Field(
        default_factory=list, description="Rubric: the judge's verdict per criterion."
    )


class JudgeUsage(StrictModel):
    """The judge's calls in one trial (the agent's own cost is the record's ``cost``)."""

    route: str = Field(description="The judge's model route.")
    model_calls: int = Field(default=0, ge=0, description="Calls made (cache hits too).")
    cached_calls: int = Field(default=0, ge=0, description="Calls served from the cache.")
    input_tokens: int = Field(default=0, ge=0, description="Prompt tokens.")
    output_tokens: int = Field(default=0, ge=0, description="Completion tokens.")
    usd: float = Field(default=0.0, ge=0, description="Dollars, when the route prices them.")


class GradeReport(StrictModel):
    """What the graders decided for one trial: ``evaluation.details['graders']``."""

    schema_version: int = Field(default=GRADERS_SCHEMA_VERSION, description="Shape version.")
    rule: RuleName = Field(description="The reward rule applied.")
    threshold: float = Field(description="Reward needed to pass.")
    reward: float = Field(description="The task's reward.")
    passed: bool = Field(description="reward >= threshold.")
    results: list[GraderResult] = Field(description="Every grader, in file order.")
    judge: JudgeUsage | None = Field(default=None, description="The judge's calls, if any.")


SAVED_MODELS: dict[str, type[BaseModel]] = {
    "graders-file": GradersFile,
    "grade-report": GradeReport,
}

__all__ = [
    "GRADERS_FILE",
    "GRADERS_SCHEMA_VERSION",
    "SAVED_MODELS",
    "Assertion",
    "CriterionVerdict",
    "GradeReport",
    "GraderResult",
    "GradersFile",
    "JudgeUsage",
    "RewardRule",
    "Rubric",
    "check_target",
]
