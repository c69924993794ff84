"""skill-creator's ``evals/evals.json`` <-> skillci task drafts (pure).

skill-creator (anthropics/skills, skills/skill-creator/references/schemas.md) keeps a
skill's cases as ``{"skill_name": ..., "evals": [{"id", "prompt", "expected_output",
"files", "expectations"}]}``; some skills keep the bare list. Each eval becomes a task:
the prompt is its instruction, its input files go to ``environment/`` at the same relative
path, its expectations become one rubric (``expected_output`` its reference; an eval with
no expectations gets ``expected_output`` as its one criterion). The original id and file
list are kept in task.toml's ``[metadata]`` so that export gives them back.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillci.graders.models import GradersFile, RewardRule, Rubric


class SkillCreatorEval(BaseModel):
    """One entry of ``evals``."""

    model_config = ConfigDict(extra="allow")

    id: int | str = Field(description="Unique id (an integer in skill-creator).")
    prompt: str = Field(min_length=1, description="The task to execute.")
    expected_output: str = Field(default="", description="Human-readable description of success.")
    files: list[str] = Field(default_factory=list, description="Input files, skill-relative.")
    expectations: list[str] = Field(default_factory=list, description="Verifiable statements.")


class SkillCreatorEvals(BaseModel):
    """``evals/evals.json``."""

    model_config = ConfigDict(extra="allow")

    skill_name: str | None = Field(default=None, description="The skill's name.")
    evals: list[SkillCreatorEval] = Field(min_length=1, description="The cases.")


class TaskDraft(BaseModel):
    """A task to write: what ``tasks import`` makes of one eval."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Task id (dir name).")
    instruction: str = Field(description="instruction.md.")
    files: list[str] = Field(description="Input files, relative to the skill root.")
    graders: GradersFile = Field(description="tests/graders.toml.")
    source_id: int | str = Field(description="The eval's id in evals.json.")


def parse_evals(data: Any) -> SkillCreatorEvals:
    """``data`` (parsed JSON): the object form or the bare list. Raises ValueError with
    the field that is wrong."""
    if isinstance(data, list):
        data = {"evals": data}
    try:
        parsed = SkillCreatorEvals.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        raise ValueError(f"field {loc!r}: {err['msg']}") from None
    ids = [str(e.id) for e in parsed.evals]
    dups = sorted({i for i in ids if ids.count(i) > 1})
    if dups:
        raise ValueError(f"eval ids used twice: {', '.join(dups)}")
    for e in parsed.evals:
        for f in e.files:
            if f.startswith("/") or ".." in f.split("/"):
                raise ValueError(f"eval {e.id}: file {f!r} must be relative to the skill root")
    return parsed


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:48] or "skill"


def drafts(evals: SkillCreatorEvals, *, prefix: str | None = None) -> list[TaskDraft]:
    """One :class:`TaskDraft` per eval, ids ``<prefix>-eval-<id>``."""
    base = _slug(prefix or evals.skill_name or "skill")
    out = []
    for e in evals.evals:
        criteria = [c for c in e.expectations if c.strip()] or (
            [e.expected_output] if e.expected_output.strip() else []
        )
        if not criteria:
            raise ValueError(f"eval {e.id}: no expectations and no expected_output to grade")
        rubric = Rubric(
            id="expectations",
            criteria=criteria,
            reference=e.expected_output.strip() or None,
        )
        instruction = e.prompt.strip() + "\n"
        if e.files:
            listed = "\n".join(f"- `{f}`" for f in e.files)
            instruction += f"\nInput files (in your working directory):\n{listed}\n"
        out.append(
            TaskDraft(
                id=f"{base}-eval-{_slug(str(e.id))}",
                instruction=instruction,
                files=list(e.files),
                graders=GradersFile(reward=RewardRule(rule="weighted"), rubric=[rubric]),
                source_id=e.id,
            )
        )
    return out


def to_eval(
    *, source_id: int | str, prompt: str, graders: GradersFile | None, files: list[str]
) -> tuple[SkillCreatorEval, list[str]]:
    """One task back as an eval, and what evals.json cannot hold (assertions, extra rubrics)."""
    lost: list[str] = []
    expectations: list[str] = []
    expected = ""
    if graders is not None:
        for i, r in enumerate(graders.rubric):
            expectations += r.criteria
            if i == 0 and r.reference:
                expected = r.reference
        if len(graders.rubric) > 1:
            lost.append("several rubrics merged into one list of expectations")
        lost += [f"assertion {a.id} ({a.kind}) has no evals.json form" for a in graders.assertion]
    if prompt.rstrip().endswith(tuple(f"- `{f}`" for f in files)) and files:
        prompt = prompt[: prompt.rfind("\nInput files (in your working directory):")]
    return (
        SkillCreatorEval(
            id=source_id,
            prompt=prompt.strip(),
            expected_output=expected,
            files=files,
            expectations=expectations,
        ),
        lost,
    )


__all__ = [
    "SkillCreatorEval",
    "SkillCreatorEvals",
    "TaskDraft",
    "drafts",
    "parse_evals",
    "to_eval",
]
