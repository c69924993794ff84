"""``skillci propose --target description``: optimise a skill's description for triggering.

The loop (skill-creator's, with skillci's fixed parts): the trigger suite's queries are split
60/40 into train and held-out by a hash of each id (skill/triggers.py); iteration 0 decides
both parts with the current description; each next candidate is written from the train
failures alone (compile/description.py); at most ``iterations`` candidates; the one that
holds the most held-out queries is kept (a tie goes to the earlier one, so the current
description wins unless a candidate is strictly better on held-out). A kept candidate becomes a bounded patch (one
``change_description`` op) that goes through the patch check (limits + guard) and is
committed on a candidate branch with a PR, like every other proposal.

Who decides (docs/design/404): the catalogue stand-in (:class:`~skillci.flows.triggers.Decider`,
the model names a skill from a rendered catalogue) for the built-in agent; a real agent
(:class:`~skillci.flows.agent_triggers.AgentDecider`) when ``--agent`` or the skill's
``target_runtime.agent`` names one — every query of every step, train and held-out, is then
a headless run of that agent with the candidate's whole skill installed beside the
repository's other skills, and a run it cannot decide stops the search (exit 4) before
anything is written.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillci.compile.description import next_description
from skillci.errors import InvalidInputError, UsageError
from skillci.flows.agent_triggers import AgentDecider, run_agent_queries
from skillci.flows.context import RepoContext
from skillci.flows.triggers import (
    Decider,
    entry_of,
    installed_entries,
    installed_skills,
    run_queries,
    skill_ref,
)
from skillci.forge.base import PullRequest
from skillci.gate.triggers import QueryOutcome, TriggerMetrics, metrics
from skillci.patch import Patch
from skillci.patch.apply import apply
from skillci.patch.check import check
from skillci.patch.models import Author, ChangeDescription
from skillci.skill.catalogue import CatalogueEntry, CatalogueHarness
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.skill.triggers import TriggerQuery, TriggerSuite, require_suite
from skillci.trace.models import SkillRef
from skillci.trace.store import TraceStore
from skillci.vcs.candidate import candidate_branch, commit_candidate

FAILURE_CLASS = "trigger_miss"
SEARCH_BLOB = "description-search"
MAX_ITERATIONS = 5
#: Who decides the search's queries: the catalogue stand-in or a real agent.
DecidedBy = Literal["catalogue", "agent"]


class SearchStep(BaseModel):
    """One candidate description and how it decided each part."""

    model_config = ConfigDict(extra="forbid")

    iteration: int = Field(description="0 = the current description.")
    description: str = Field(description="The candidate.")
    train: TriggerMetrics = Field(description="Metrics on the train queries.")
    held_out: TriggerMetrics = Field(description="Metrics on the held-out queries.")


class DescriptionSearch(BaseModel):
    """The whole search: every step and the one kept (best on held-out)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=2, description="Shape version (2: who decided).")
    skill: str = Field(description="Skill name.")
    model: str = Field(description="Route that decided.")
    decided_by: DecidedBy = Field(
        default="catalogue",
        description="catalogue: the model named a skill from a rendered catalogue (the "
        "built-in agent); agent: the real agent ``agent`` loaded it or not, with each "
        "candidate installed in its workspace.",
    )
    agent: str | None = Field(
        default=None, description="The real agent that decided (None: the catalogue)."
    )
    agent_version: str | None = Field(default=None, description="Its installed version.")
    steps: list[SearchStep] = Field(description="Iteration 0 is the current description.")
    best: int = Field(description="Index of the step kept.")
    rejected: list[str] = Field(
        default_factory=list,
        description="Candidates the patch check (limits + guard) rejected, with the reason; "
        "they were not evaluated and ended the search.",
    )

    @property
    def improved(self) -> bool:
        return self.best != 0


def _rank(step: SearchStep) -> tuple[float, int]:
    h = step.held_out
    return (h.queries_held / h.queries if h.queries else 0.0, -step.iteration)


def _decide(
    decider: Decider | AgentDecider,
    pkg: SkillPackage,
    desc: str,
    others: list[CatalogueEntry],
    queries: list[TriggerQuery],
    *,
    harness: CatalogueHarness,
    runs: int,
    ref: SkillRef,
) -> list[QueryOutcome]:
    """``queries`` decided with ``pkg`` (the candidate, its description ``desc``): by the
    real agent with the candidate's whole skill installed (its records name the
    candidate), or by the catalogue question (its records name ``ref``, the base, as
    before design 404)."""
    if isinstance(decider, AgentDecider):
        target = render(pkg, "folder")
        return run_agent_queries(decider, target, queries, runs=runs, ref=skill_ref(pkg))
    entry = CatalogueEntry(name=pkg.frontmatter.name, description=desc)
    return run_queries(decider, entry, others, queries, harness=harness, runs=runs, skill_ref=ref)


def search(
    decider: Decider | AgentDecider,
    pkg: SkillPackage,
    suite: TriggerSuite,
    others: list[CatalogueEntry],
    *,
    harness: CatalogueHarness = "builtin",
    runs: int | None = None,
    iterations: int = MAX_ITERATIONS,
) -> DescriptionSearch:
    """Run the optimisation loop for ``pkg`` (nothing is written but decision records).
    ``others`` is the catalogue stand-in's; an :class:`AgentDecider` installs its own
    distractors."""
    target = entry_of(pkg)
    ref = skill_ref(pkg)
    k = runs or suite.runs
    train, held = suite.part("train"), suite.part("held_out")
    if not train or not held:
        raise InvalidInputError(
            f"the trigger suite needs queries in both parts (train {len(train)}, "
            f"held-out {len(held)})",
            hint="add queries: the split is 60/40 by a hash of each id",
        )
    steps: list[SearchStep] = []
    rejected: list[str] = []
    desc: str | None = target.description
    for i in range(iterations + 1):
        if desc is None:
            break
        cand = pkg
        if i > 0:
            report, applied = check(pkg, candidate_patch(desc, f"candidate {i}"))
            if report.verdict == "reject" or applied is None:
                rejected.append(f"candidate {i}: " + "; ".join(report.reasons))
                break
            cand = applied.after
        tr = _decide(decider, cand, desc, others, train, harness=harness, runs=k, ref=ref)
        ho = _decide(decider, cand, desc, others, held, harness=harness, runs=k, ref=ref)
        steps.append(
            SearchStep(
                iteration=i,
                description=desc,
                train=metrics(target.name, tr),
                held_out=metrics(target.name, ho),
            )
        )
        desc = next_description(desc, target.name, tr)
    best = max(range(len(steps)), key=lambda i: _rank(steps[i]))
    real = decider if isinstance(decider, AgentDecider) else None
    return DescriptionSearch(
        skill=target.name,
        model=decider.route_name,
        decided_by="catalogue" if real is None else "agent",
        agent=None if real is None else real.agent,
        agent_version=None if real is None else real.version,
        steps=steps,
        best=best,
        rejected=rejected,
    )


def candidate_patch(description: str, rationale: str) -> Patch:
    """One candidate description as a bounded patch (one ``change_description`` op)."""
    return Patch(
        failure_class=FAILURE_CLASS,
        rationale=rationale,
        author=Author(compiler="template"),
        ops=[ChangeDescription(description=description, failure_class=FAILURE_CLASS)],
    )


def description_patch(search: DescriptionSearch) -> Patch:
    before, after = search.steps[0], search.steps[search.best]
    b, a = before.held_out, after.held_out
    return candidate_patch(
        after.description,
        f"held-out trigger queries held {b.queries_held}/{b.queries} -> "
        f"{a.queries_held}/{a.queries} (iteration {search.best} of {len(search.steps) - 1})",
    )


@dataclass
class DescribeOutcome:
    search: DescriptionSearch
    action: str
    message: str
    patch: Patch | None = None
    pr: PullRequest | None = None
    branch: str | None = None
    commits: list[str] = field(default_factory=list)


def _pr_body(search: DescriptionSearch, patch: Patch) -> str:
    lines = [
        f"<!-- skillci:patch-id={patch.pid} -->",
        f"Description optimised for triggering with `{search.model}`{_in_agent(search)} "
        "(train/held-out 60/40 by query id; kept: best on held-out).",
        "",
        "| iteration | train held | held-out held | held-out precision | held-out recall |",
        "|---|---|---|---|---|",
    ]
    for s in search.steps:
        h = s.held_out
        mark = " (kept)" if s.iteration == search.best else ""
        lines.append(
            f"| {s.iteration}{mark} | {s.train.queries_held}/{s.train.queries} | "
            f"{h.queries_held}/{h.queries} | {_pct(h.precision)} | {_pct(h.recall)} |"
        )
    lines += ["", "```json", json.dumps({"description": search.steps[search.best].description})]
    lines += ["```"]
    return "\n".join(lines) + "\n"


def _in_agent(search: DescriptionSearch) -> str:
    """`` in `codex@V` (its own skill loads decided)`` when a real agent decided, else ""."""
    if search.decided_by != "agent":
        return ""
    return f" in `{search.agent}@{search.agent_version}` (its own skill loads decided)"


def decider_agent(agent: str) -> str | None:
    """The real agent that decides the search, None for the catalogue stand-in
    (``builtin``); exit 2 for an agent that never loads a skill (oracle, noop) or is not
    registered."""
    from skillci.agents.registry import names, real_names

    if agent == "builtin":
        return None
    if agent in real_names():
        return agent
    what = "never loads a skill" if agent in names() else "is not a registered agent"
    raise UsageError(
        f"agent {agent!r} cannot decide trigger queries: it {what}",
        hint=f"use --agent builtin (the catalogue question) or a real agent: "
        f"{', '.join(real_names())} (skillci agents ls)",
    )


def _decider(
    ctx: RepoContext, skill_dir: str, model: str, agent: str, version: str | None
) -> Decider | AgentDecider:
    """The catalogue stand-in, or the real agent with the repository's other skills
    installed beside each candidate (raises AgentNotInstalled, exit 4, before any run)."""
    from skillci.agents.install import resolve

    real = decider_agent(agent)
    if real is None:
        return Decider(model, TraceStore(ctx.state_dir))
    resolve(real, version)  # not installed: exit 4 before the trace store is opened
    others = installed_skills(ctx.root, exclude=ctx.root / skill_dir)
    return AgentDecider(
        real, model, ctx.store, state_dir=ctx.state_dir, distractors=others, version=version
    )


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.0%}"


def propose_description(  # long: search, check, then commit and PR, each a few lines
    ctx: RepoContext,
    skill: str,
    *,
    model: str = "sim/student",
    harness: CatalogueHarness = "builtin",
    base: str = "main",
    iterations: int = MAX_ITERATIONS,
    agent: str | None = None,
    agent_version: str | None = None,
) -> DescribeOutcome:
    """Search a better description for ``skill`` and open a PR when one holds more held-out
    queries than the current description. ``agent`` decides the queries (None: the one the
    skill's ``target_runtime`` names on ``base``, as for ``--target tasks``; ``builtin``:
    the catalogue question)."""
    from skillci.flows.gate import target_agent

    base_sha = ctx.git.rev(base)
    if base_sha is None:
        raise InvalidInputError(f"base branch {base!r} does not exist", hint="pass --base")
    skill_dir = ctx.skill_dir(skill)
    pkg = ctx.package_at(base_sha, skill_dir, label=base)
    suite = require_suite(pkg)
    student, pinned = (agent, None) if agent else target_agent(ctx, skill, base)
    decider = _decider(ctx, skill_dir, model, student, agent_version or pinned)
    others = installed_entries(ctx.root, exclude=ctx.root / skill_dir)
    found = search(decider, pkg, suite, others, harness=harness, iterations=iterations)
    if not found.improved:
        return DescribeOutcome(found, "no_pr", "no candidate holds more held-out queries")
    patch = description_patch(found)
    report, _ = check(pkg, patch)
    if report.verdict == "reject":
        return DescribeOutcome(found, "no_pr", "patch rejected: " + "; ".join(report.reasons))
    branch = candidate_branch(pkg.manifest.name, FAILURE_CLASS, patch.pid)
    if ctx.dry_run:
        return DescribeOutcome(found, "dry_run", f"would open a PR on {branch}", patch)
    ctx.store.put_blob(SEARCH_BLOB, found, key=patch.pid, replace=True)
    after = apply(pkg, patch)
    changes: dict[str, bytes | None] = {
        rel: data for rel, data in after.files.items() if pkg.files.get(rel) != data
    }
    commit = commit_candidate(
        ctx.git,
        base=base_sha,
        branch=branch,
        skill_dir=skill_dir,
        changes=changes,
        subject=f"skill({pkg.manifest.name}): description for triggering",
        body=patch.rationale,
        trailers={"Skill-Patch-Id": patch.pid, "Failure-Class": FAILURE_CLASS, "Skill": skill_dir},
    )
    ctx.forge.push_candidate(ctx.git, branch, commit.sha, base_sha)
    labels = sorted(
        {"skillci", FAILURE_CLASS} | ({"needs-approval"} if report.verdict != "pass" else set())
    )
    pr, opened = ctx.forge.upsert_pr(
        patch_id=patch.pid,
        title=f"skill({pkg.manifest.name}): description for triggering",
        body=_pr_body(found, patch),
        base=base,
        head_branch=branch,
        labels=labels,
        skill=skill_dir,
    )
    verb = "opened" if opened else "updated"
    return DescribeOutcome(
        found, verb, f"{verb} PR #{pr.number} on {branch}", patch, pr, branch, [commit.sha]
    )


SAVED_MODELS: dict[str, type[BaseModel]] = {"description-search": DescriptionSearch}

__all__ = [
    "SAVED_MODELS",
    "DescribeOutcome",
    "DescriptionSearch",
    "SearchStep",
    "decider_agent",
    "description_patch",
    "propose_description",
    "search",
]
