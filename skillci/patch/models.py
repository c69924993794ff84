"""The bounded patch language: a :class:`Patch` is metadata plus a short list of typed ops.

A patch file (``PATCH.yaml``) is the YAML form of :class:`Patch`. Its ``id`` is a content
hash of everything except ``id`` and ``created_at``, so the same change compiled twice has
the same id, and an edited patch cannot keep its old id (``load_patch`` refuses a stale id).

Ops (the seed essay's eight, discriminated on ``op``):

- ``add_rule``: a new rule, in ``skillci/rules/<id-with-dots-as-dashes>.yaml`` unless ``file`` names
  an existing ``rules: [...]`` file.
- ``replace_rule``: new content for a rule, written where the rule lives.
- ``delete_rule``: remove a rule (its file goes when it held only that rule).
- ``split_rule``: one rule becomes several, at the same place in the same file.
- ``merge_rules``: several rules become one, at the place of the first.
- ``change_loading_scope``: move a rule (``rule_id``) or a markdown section (``section``)
  between the bootstrap ``SKILL.md`` and an on-demand workflow/tool/recovery file.
- ``add_example``: append one JSON object to ``skillci/examples/*.jsonl``.
- ``add_regression_test``: add a task id to ``evals/regression.yaml``.

See docs/design/010-patch-language.md.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import datetime
from typing import Annotated, Any, Literal

import yaml
from pydantic import Field, ValidationError, field_validator, model_validator

from skillci.basemodels import StrictModel
from skillci.errors import PatchError
from skillci.skill import yamlio
from skillci.skill.models import RULE_ID_RE, Rule, RuleScope

PATCH_SCHEMA_VERSION = 1
ID_PREFIX = "patch-"
TASK_ID_MAX = 200
#: Strict id shapes (docs/design/161-guard-layers.md): ids never carry free text.
TASK_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$")
#: ``/`` is allowed: the pipeline labels its trials ``<stage>/<trial>`` (e.g. ``static/test-000``).
RUN_ID_RE = re.compile(r"^(?!.*\.\.)[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$")
MODEL_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+/-]{0,199}$")
LABEL_RE = re.compile(r"^[a-z][a-z0-9_.-]{0,79}$")


def _strict(pattern: re.Pattern[str], what: str, example: str) -> Any:
    def check(v: str) -> str:
        if not pattern.match(v):
            raise ValueError(f"{v[:60]!r} is not a {what} like {example}")
        return v

    return check


_task_id = _strict(TASK_ID_RE, "task id (letters, digits, . _ -)", "fix-cache-expiry")
_run_id = _strict(RUN_ID_RE, "run id", "run-20260101-120000-ab12cd34")
_model_id = _strict(MODEL_ID_RE, "model route", "openai/gpt-4o-mini")
_label = _strict(LABEL_RE, "label (lowercase, digits, _ . -)", "verification_missing")


class _OpBase(StrictModel):
    reason: str | None = Field(
        default=None, description="Why this op; carried into the change list and changelog."
    )
    failure_class: str | None = Field(
        default=None,
        description="Failure class this op addresses; must equal the patch's (one per patch).",
    )

    @field_validator("failure_class")
    @classmethod
    def _class(cls, v: str | None) -> str | None:
        return None if v is None else str(_label(v))


def _check_rule_id(v: str) -> str:
    if not RULE_ID_RE.match(v):
        raise ValueError(f"{v!r} is not a rule id like test.run-smallest-first")
    return v


class AddRule(_OpBase):
    """Add a new rule (lifecycle ``candidate``, provenance from the patch)."""

    op: Literal["add_rule"] = "add_rule"
    rule: Rule = Field(description="The rule to add; status and provenance are set by apply.")
    file: str | None = Field(
        default=None,
        description="An existing skillci/rules/*.yaml holding `rules: [...]` to append to; "
        "default: a new skillci/rules/<id with dots as dashes>.yaml.",
    )


class ReplaceRule(_OpBase):
    """Replace a rule's content where it lives (the id may change if the new one is free)."""

    op: Literal["replace_rule"] = "replace_rule"
    rule_id: str = Field(description="Id of the rule to replace.")
    rule: Rule = Field(description="New content; status and provenance are set by apply.")

    _v = field_validator("rule_id")(_check_rule_id)


class DeleteRule(_OpBase):
    """Remove a rule from its file."""

    op: Literal["delete_rule"] = "delete_rule"
    rule_id: str = Field(description="Id of the rule to remove.")

    _v = field_validator("rule_id")(_check_rule_id)


class SplitRule(_OpBase):
    """Replace one rule by several, in its place; they carry its provenance."""

    op: Literal["split_rule"] = "split_rule"
    rule_id: str = Field(description="Id of the rule to split.")
    into: list[Rule] = Field(min_length=2, description="The rules that replace it, in order.")

    _v = field_validator("rule_id")(_check_rule_id)


class MergeRules(_OpBase):
    """Replace several rules by one, at the first one's place; it carries their provenance."""

    op: Literal["merge_rules"] = "merge_rules"
    rule_ids: list[str] = Field(min_length=2, description="Ids of the rules to merge.")
    into: Rule = Field(description="The merged rule.")
    target_scope: RuleScope | None = Field(
        default=None,
        description="Scope of the merged rule; required when the sources' scopes differ.",
    )

    @field_validator("rule_ids")
    @classmethod
    def _ids(cls, v: list[str]) -> list[str]:
        for rid in v:
            _check_rule_id(rid)
        if len(set(v)) != len(v):
            raise ValueError("lists a rule id twice")
        return v


class ChangeLoadingScope(_OpBase):
    """Move a rule or a markdown section between SKILL.md and an on-demand file.

    With ``rule_id``: ``to`` is ``SKILL.md`` (bootstrap) or a workflow file
    (``workflows/<stem>.md``); the rule's ``scope.workflow`` changes. With ``section``
    (a heading's text) and ``from``: the section moves from one file to the other; one
    side must be ``SKILL.md``.
    """

    op: Literal["change_loading_scope"] = "change_loading_scope"
    rule_id: str | None = Field(default=None, description="Rule to move.")
    section: str | None = Field(default=None, description="Heading text of the section to move.")
    from_file: str | None = Field(
        default=None, alias="from", description="File the section is in (sections only)."
    )
    to: str = Field(description="SKILL.md or an on-demand file path.")

    @model_validator(mode="after")
    def _one_subject(self) -> ChangeLoadingScope:
        if (self.rule_id is None) == (self.section is None):
            raise ValueError("give exactly one of rule_id and section")
        if self.section is not None and self.from_file is None:
            raise ValueError("a section move needs `from`")
        if self.rule_id is not None:
            _check_rule_id(self.rule_id)
            if self.from_file is not None:
                raise ValueError("`from` is only for sections; a rule's file is known")
        return self


class AddExample(_OpBase):
    """Append one example (a JSON object) to a skillci/examples/*.jsonl file."""

    op: Literal["add_example"] = "add_example"
    file: str = Field(description="skillci/examples/<name>.jsonl (created when missing).")
    example: dict[str, Any] = Field(description="One JSON object, written as one line.")


class AddRegressionTest(_OpBase):
    """Add a task id to the skill's regression eval list (evals/regression.yaml)."""

    op: Literal["add_regression_test"] = "add_regression_test"
    task_id: str = Field(min_length=1, max_length=TASK_ID_MAX, description="Task id to add.")

    _v = field_validator("task_id")(_task_id)


class ChangeDescription(_OpBase):
    """Replace the description in SKILL.md's frontmatter: what a harness's catalogue shows
    and the model decides from whether to load the skill (``propose --target description``)."""

    op: Literal["change_description"] = "change_description"
    description: str = Field(
        min_length=1, max_length=1024, description="The new description (spec: <= 1024 chars)."
    )

    @field_validator("description")
    @classmethod
    def _plain(cls, v: str) -> str:
        if "<" in v or ">" in v:
            raise ValueError("must not contain angle brackets (Agent Skills spec)")
        if "\n" in v or "\r" in v or not v.strip():
            raise ValueError("must be one non-empty line")
        return v


Op = Annotated[
    AddRule
    | ReplaceRule
    | DeleteRule
    | SplitRule
    | MergeRules
    | ChangeLoadingScope
    | AddExample
    | AddRegressionTest
    | ChangeDescription,
    Field(discriminator="op"),
]

OP_NAMES = (
    "add_rule",
    "replace_rule",
    "delete_rule",
    "split_rule",
    "merge_rules",
    "change_loading_scope",
    "add_example",
    "add_regression_test",
    "change_description",
)


class Author(StrictModel):
    """Who compiled the patch."""

    compiler: str = Field(description="Compiler name, e.g. template, llm, human.")
    model: str | None = Field(default=None, description="Model route when a model wrote it.")

    @field_validator("compiler")
    @classmethod
    def _compiler(cls, v: str) -> str:
        return str(_label(v))

    @field_validator("model")
    @classmethod
    def _model(cls, v: str | None) -> str | None:
        return None if v is None else str(_model_id(v))


class Patch(StrictModel):
    """A bounded patch: metadata plus a short list of typed ops (``PATCH.yaml``)."""

    schema_version: int = Field(default=PATCH_SCHEMA_VERSION, description="patch schema version")
    id: str | None = Field(
        default=None,
        description="patch-<hash>: content hash of everything except id and created_at. "
        "Filled in by load_patch when absent.",
    )
    failure_class: str | list[str] = Field(
        description="The one primary failure class this patch addresses (a list is accepted "
        "so that the limit check can reject more than one)."
    )
    rationale: str = Field(default="", description="Why the patch should help, in a sentence.")
    supporting_runs: list[str] = Field(
        default_factory=list, description="Run ids whose trajectories motivated the patch."
    )
    author: Author = Field(description="Compiler name and model.")
    created_at: datetime | None = Field(default=None, description="When it was compiled.")
    ops: list[Op] = Field(min_length=1, description="The edit operations, applied in order.")

    @field_validator("failure_class")
    @classmethod
    def _classes(cls, v: str | list[str]) -> str | list[str]:
        for name in [v] if isinstance(v, str) else v:
            _label(name)
        return v

    @field_validator("supporting_runs")
    @classmethod
    def _runs(cls, v: list[str]) -> list[str]:
        for rid in v:
            _run_id(rid)
        return v

    @field_validator("schema_version")
    @classmethod
    def _schema(cls, v: int) -> int:
        if v != PATCH_SCHEMA_VERSION:
            raise ValueError(f"unsupported patch schema_version {v}; this skillci reads 1")
        return v

    @property
    def failure_classes(self) -> list[str]:
        """Distinct failure classes named by the patch and its ops, in order of appearance."""
        names = [self.failure_class] if isinstance(self.failure_class, str) else self.failure_class
        names = names + [op.failure_class for op in self.ops if op.failure_class]
        return list(dict.fromkeys(n for n in names if n))

    @property
    def primary_failure_class(self) -> str:
        classes = self.failure_classes
        return classes[0] if classes else ""

    def content_id(self) -> str:
        """``patch-`` + the first 16 hex digits of the sha256 of the canonical content."""
        data = self.model_dump(mode="json", by_alias=True, exclude={"id", "created_at"})
        canon = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return ID_PREFIX + hashlib.sha256(canon.encode()).hexdigest()[:16]

    def behaviour_id(self) -> str:
        """Identity of what the patch *changes*: failure class and ops, without provenance,
        reasons, supporting run ids, rationale, author or time.

        ``content_id`` names one compiled artifact (two compilations from different runs
        differ); ``behaviour_id`` names the change, so two machines proposing the same edit
        get the same id and a patch that was rejected (its PR closed) is recognised wherever
        it is proposed again. PRs are keyed by it; commit trailers carry the content id."""
        data = {
            "failure_class": self.failure_class,
            "ops": _without_provenance([op.model_dump(mode="json") for op in self.ops]),
        }
        canon = json.dumps(data, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
        return ID_PREFIX + hashlib.sha256(canon.encode()).hexdigest()[:16]

    def with_id(self) -> Patch:
        return self.model_copy(update={"id": self.content_id()})

    @property
    def pid(self) -> str:
        """The patch id (computed when the model was built without one)."""
        return self.id or self.content_id()


def _without_provenance(data: object) -> object:
    """Drop what varies between machines and runs but not the change itself."""
    if isinstance(data, dict):
        return {
            k: _without_provenance(v)
            for k, v in data.items()
            if k not in ("provenance", "reason", "supporting_runs")
        }
    if isinstance(data, list):
        return [_without_provenance(v) for v in data]
    return data


def load_patch(text: str, file: str = "PATCH.yaml") -> Patch:
    """Parse and validate a patch file; fills ``id``, refuses a stale one."""
    data, node = yamlio.load(text, file)
    if not isinstance(data, dict):
        raise PatchError("a patch file must be a YAML mapping", file=file, line=1)
    try:
        patch = Patch.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors(include_url=False)
        loc = [
            p for p in errors[0]["loc"] if not (isinstance(p, str) and p.startswith("function-"))
        ]
        if len(loc) >= 3 and loc[0] == "ops" and loc[2] in OP_NAMES:
            del loc[2]  # the discriminator tag is not a key in the YAML
        line, col = yamlio.locate(node, loc)
        msg = errors[0]["msg"].removeprefix("Value error, ")
        more = len(errors) - 1
        raise PatchError(
            f"{'.'.join(str(p) for p in loc) or '(document)'}: {msg}"
            + (f" (+{more} more)" if more else ""),
            file=file,
            line=line + 1,
            col=col + 1,
            hint="compare with docs/design/010-patch-language.md",
        ) from None
    computed = patch.content_id()
    if patch.id is not None and patch.id != computed:
        line, col = yamlio.locate(node, ["id"])
        raise PatchError(
            f"id {patch.id} does not match the content (it hashes to {computed})",
            file=file,
            line=line + 1,
            col=col + 1,
            hint="the patch was edited after it was compiled; delete the id line to re-hash",
        )
    return patch.model_copy(update={"id": computed})


def dump_patch(patch: Patch) -> str:
    """The YAML text of a patch (with its id filled in)."""
    data = patch.with_id().model_dump(mode="json", by_alias=True, exclude_none=True)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


__all__ = [
    "OP_NAMES",
    "PATCH_SCHEMA_VERSION",
    "AddExample",
    "AddRegressionTest",
    "AddRule",
    "Author",
    "ChangeLoadingScope",
    "DeleteRule",
    "MergeRules",
    "Op",
    "Patch",
    "ReplaceRule",
    "SplitRule",
    "dump_patch",
    "load_patch",
]
