"""Trigger suites: queries that should, and should not, make a harness load a skill (pure).

A harness decides whether to load a skill from its name and description among every
installed skill's. ``skillci/evals/triggers.yaml`` (:data:`~skillci.skill.package.TRIGGERS`)
holds the queries that check that decision: each says whether it ``should_trigger`` the
skill, and a query that should not may carry a ``near_miss`` label (the neighbouring topic
it is close to). ``skillci eval triggers`` runs them (design 210).

The train/held-out split used by ``propose --target description`` is fixed by a hash of the
query id (60/40), so it never depends on the queries' text or on results.
"""

from __future__ import annotations

import hashlib
import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

import skillci.skill.yamlio as yamlio
from skillci.errors import SkillFormatError
from skillci.skill.package import TRIGGERS, SkillPackage

TRIGGERS_SCHEMA_VERSION = 1
QUERY_ID_RE = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
Split = Literal["train", "held_out"]
#: Share of queries in the train part (the rest is held out): 60/40.
TRAIN_SHARE = 0.6


class TriggerQuery(BaseModel):
    """One user request and whether it should load the skill under test."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Stable id (lowercase, digits, '-', '_'); fixes its split.")
    query: str = Field(min_length=1, description="The user's request, as the harness gets it.")
    should_trigger: bool = Field(description="Whether this request should load the skill.")
    near_miss: str | None = Field(
        default=None,
        description="For a query that should not trigger: the neighbouring topic it is close "
        "to (e.g. another skill's name). Reported with false triggers.",
    )

    @field_validator("id")
    @classmethod
    def _id(cls, v: str) -> str:
        if not QUERY_ID_RE.match(v):
            raise ValueError("must be lowercase letters, digits, '-' or '_' (at most 64)")
        return v

    @model_validator(mode="after")
    def _near_miss_only_negative(self) -> TriggerQuery:
        if self.near_miss is not None and self.should_trigger:
            raise ValueError("near_miss labels a query that should NOT trigger the skill")
        return self

    @property
    def split(self) -> Split:
        return split_of(self.id)


class TriggerSuite(BaseModel):
    """``skillci/evals/triggers.yaml``: the trigger queries of one skill."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=TRIGGERS_SCHEMA_VERSION, description="Shape version.")
    skill: str | None = Field(
        default=None, description="Name of the skill the queries are about (default: its own)."
    )
    runs: int = Field(default=3, ge=1, le=100, description="Decisions per query (k).")
    note: str | None = Field(default=None, description="Where the queries came from.")
    queries: list[TriggerQuery] = Field(default_factory=list, description="The queries.")

    @model_validator(mode="after")
    def _unique(self) -> TriggerSuite:
        seen: set[str] = set()
        for q in self.queries:
            if q.id in seen:
                raise ValueError(f"query id {q.id!r} appears twice")
            seen.add(q.id)
        return self

    def part(self, split: Split | None) -> list[TriggerQuery]:
        """The queries of one split (all when ``split`` is None)."""
        return [q for q in self.queries if split is None or q.split == split]


class QueryOutcome(BaseModel):
    """The k decisions for one query."""

    model_config = ConfigDict(extra="forbid")

    query_id: str = Field(description="Query id in the trigger suite.")
    query: str = Field(description="The request text.")
    should_trigger: bool = Field(description="Whether it should load the skill.")
    near_miss: str | None = Field(default=None, description="Near-miss label, if any.")
    split: str = Field(description="train or held_out (fixed by the query id).")
    choices: list[str | None] = Field(
        description="Skill loaded on each run (None = no skill), in run order."
    )
    run_ids: list[str] = Field(default_factory=list, description="Run record per decision.")
    cached: int = Field(default=0, ge=0, description="Decisions reused from the trace store.")

    def loaded(self, skill: str) -> int:
        return sum(1 for c in self.choices if c == skill)

    def holds(self, skill: str) -> bool:
        """Whether the majority of runs agrees with ``should_trigger``."""
        rate = self.loaded(skill) / len(self.choices) if self.choices else 0.0
        return rate > 0.5 if self.should_trigger else rate <= 0.5


def split_of(query_id: str) -> Split:
    """train (60%) or held_out (40%), from sha256 of the id alone."""
    h = int.from_bytes(hashlib.sha256(f"trigger-split:{query_id}".encode()).digest()[:4], "big")
    return "train" if (h % 100) < TRAIN_SHARE * 100 else "held_out"


def parse_suite(text: str, file: str) -> TriggerSuite:
    """A trigger suite from YAML text; errors name the file and line."""
    data, node = yamlio.load(text, file)
    if data is None:
        data = {}
    return yamlio.validate(TriggerSuite, data, node, file)


def package_suite(pkg: SkillPackage) -> TriggerSuite | None:
    """The package's trigger suite, or None when it has none."""
    if TRIGGERS not in pkg.files:
        return None
    return parse_suite(pkg.text(TRIGGERS), pkg.display_path(TRIGGERS))


def require_suite(pkg: SkillPackage) -> TriggerSuite:
    suite = package_suite(pkg)
    if suite is None:
        raise SkillFormatError(
            f"no trigger suite ({TRIGGERS})",
            file=pkg.display_path(TRIGGERS),
            hint="scaffold one: `skillci tasks new --triggers --skill DIR`",
        )
    if not suite.queries:
        raise SkillFormatError(
            "the trigger suite has no queries",
            file=pkg.display_path(TRIGGERS),
            hint="add queries with should_trigger true and false",
        )
    return suite


# ------------------------------------------------------------------ seeding from a description

_USE_WHEN = re.compile(
    r"\b(?:use (?:this skill |it )?(?:when|for|whenever|if)|should be used when|"
    r"use this when|best for)\b\s*(.+?)(?:[.;]|$)",
    re.IGNORECASE,
)
_NOT_FOR = re.compile(
    r"\b(?:not for|do not use (?:it |this skill )?(?:for|when)|don't use (?:it )?(?:for|when)"
    r")\b\s*(.+?)(?:[.;]|$)",
    re.IGNORECASE,
)


def _clauses(pattern: re.Pattern[str], text: str) -> list[str]:
    out: list[str] = []
    for m in pattern.finditer(text):
        clause = " ".join(m.group(1).split()).strip(" ,:-\"'")
        if len(clause.split()) >= 2 and clause.lower() not in (c.lower() for c in out):
            out.append(clause)
    return out


_NOT_INVOCABLE = "disable-model-invocation: true (only a person loads it, with /name)"


def seed_suite(
    name: str, description: str, *, runs: int = 3, model_invocable: bool = True
) -> TriggerSuite:
    """A starting suite from a description: one should-trigger query per "use when …"
    clause (the description's own words, which a reviewer must rewrite as real requests),
    one should-not query per "not for …" clause, and one off-topic query. Marked as seeded
    in ``note``: these are scaffolding, not an evaluation. A skill the model may not load
    (``model_invocable=False``: ``disable-model-invocation: true``) should trigger on
    nothing: its "use when" queries are seeded as should-not."""
    queries: list[TriggerQuery] = []
    for i, clause in enumerate(_clauses(_USE_WHEN, description)[:5]):
        queries.append(
            TriggerQuery(
                id=f"seed-use-{i + 1}",
                query=f"Help me: {clause}",
                should_trigger=model_invocable,
                near_miss=None if model_invocable else _NOT_INVOCABLE,
            )
        )
    for i, clause in enumerate(_clauses(_NOT_FOR, description)[:3]):
        queries.append(
            TriggerQuery(
                id=f"seed-not-{i + 1}",
                query=f"Help me: {clause}",
                should_trigger=False,
                near_miss="the description's own 'not for' clause",
            )
        )
    if not queries:
        first = description.split(".")[0].strip()
        if first:
            queries.append(
                TriggerQuery(
                    id="seed-use-1",
                    query=first,
                    should_trigger=model_invocable,
                    near_miss=None if model_invocable else _NOT_INVOCABLE,
                )
            )
    queries.append(
        TriggerQuery(
            id="seed-off-topic",
            query="What is the capital of France?",
            should_trigger=False,
            near_miss=None,
        )
    )
    return TriggerSuite(
        skill=name,
        runs=runs,
        note="seeded from the description by skillci: rewrite each query as a real user "
        "request, and add near misses (requests close to this skill that another skill or "
        "no skill should handle)",
        queries=queries,
    )


def suite_yaml(suite: TriggerSuite) -> str:
    """The suite as YAML text (what the scaffold and import write)."""
    import yaml

    data = suite.model_dump(mode="json", exclude_none=True)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=88)


SAVED_MODELS: dict[str, type[BaseModel]] = {"trigger-suite": TriggerSuite}

__all__ = [
    "SAVED_MODELS",
    "TRAIN_SHARE",
    "QueryOutcome",
    "TriggerQuery",
    "TriggerSuite",
    "package_suite",
    "parse_suite",
    "require_suite",
    "seed_suite",
    "split_of",
    "suite_yaml",
]
