"""``skillci eval triggers``: does the harness load the skill for the right requests?

For each query of the skill's trigger suite the student sees the harness's skill catalogue
(every installed skill's name and description: the skill under test plus the other skills
of the repository as distractors, :mod:`skillci.skill.catalogue`) and names the skill it
would load, or none; k runs per query. Each decision is one model call and one run record
in the trace store (``task_id = trigger/<query id>``, the catalogue as system message, the
answer as final output, ``metadata.trigger`` holding the choice). A decision whose record
is already stored (same route, catalogue, query and seed: ``trial_cache_key``) is reused,
so an interrupted run resumes where it stopped. Metrics: :mod:`skillci.gate.triggers`.

With ``agent`` set to a real agent (``--agent claude-code|codex|opencode``) the decision is
the agent's own instead: :mod:`skillci.flows.agent_triggers` installs the skills in its
workspace, runs it headless on each query and reads what it loaded (docs/design/373).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillci.flows.agent_triggers import DEFAULT_TIMEOUT_SEC, AgentDecider, run_agent_queries
from skillci.gate.triggers import TriggerCheck, TriggerMetrics, check, metrics
from skillci.providers.client import ModelClient
from skillci.providers.routes import ModelRoute, resolve_route
from skillci.skill.catalogue import (
    CatalogueEntry,
    CatalogueHarness,
    parse_choice,
    render_catalogue,
)
from skillci.skill.discover import SKIPPED_DIRS, skill_dirs
from skillci.skill.package import MANIFEST, SKILL_MD, SkillPackage
from skillci.skill.render import RenderedFile, RenderedSkill, render
from skillci.skill.triggers import (
    QueryOutcome,
    Split,
    TriggerQuery,
    TriggerSuite,
    package_suite,
    require_suite,
)
from skillci.trace.models import (
    AgentRole,
    Cost,
    EvalState,
    Evaluation,
    MessageEvent,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillRef,
)
from skillci.trace.store import TraceStore

TRIGGER_RESULT_SCHEMA_VERSION = 1
DECISION_VERSION = "skillci-trigger-1"
TASK_PREFIX = "trigger/"
Progress = Callable[[QueryOutcome], None]


class TriggerEvalResult(BaseModel):
    """What ``skillci eval triggers`` prints (and ``--json`` emits)."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=TRIGGER_RESULT_SCHEMA_VERSION, description="Version.")
    skill: str = Field(description="Skill under test.")
    model: str = Field(description="Model route that decided.")
    harness: str = Field(description="Catalogue presentation (builtin, folder).")
    catalogue: list[str] = Field(description="Every skill name in the catalogue.")
    runs: int = Field(description="Decisions per query (k).")
    split: str = Field(description="all, train or held_out.")
    metrics: TriggerMetrics = Field(description="Over every query run.")
    outcomes: list[QueryOutcome] = Field(description="Per query.")
    cached: int = Field(description="Decisions reused from the trace store.")
    ran: int = Field(description="Decisions made now.")
    agent: str | None = Field(
        default=None, description="Real agent that decided (None: the catalogue question)."
    )
    agent_version: str | None = Field(default=None, description="Its installed version.")


# ------------------------------------------------------------------ the catalogue


def _skill_md_paths(root: Path) -> list[str]:
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        if SKILL_MD in filenames:
            out.append((Path(dirpath) / SKILL_MD).relative_to(root).as_posix())
        if "task.toml" in filenames:
            out.append((Path(dirpath) / "task.toml").relative_to(root).as_posix())
    return out


def entry_of(pkg: SkillPackage) -> CatalogueEntry:
    fm = pkg.frontmatter
    return CatalogueEntry(name=fm.name, description=fm.description)


def installed_entries(root: Path, exclude: Path | None = None) -> list[CatalogueEntry]:
    """Name + description of every skill under ``root`` (a repository or a skills folder)
    other than ``exclude``. Reads only each SKILL.md."""
    out = []
    for rel in skill_dirs(_skill_md_paths(root)):
        d = (root / rel).resolve()
        if exclude is not None and d == exclude.resolve():
            continue
        pkg = SkillPackage({SKILL_MD: (d / SKILL_MD).read_bytes()}, root=str(d))
        out.append(entry_of(pkg))
    return out


def installed_skills(root: Path, exclude: Path | None = None) -> list[RenderedSkill]:
    """Every skill under ``root`` other than ``exclude`` as an agent would have it
    installed (whole folders, the distractors a real agent gets beside the skill under
    test): a skillci package rendered as a folder, a plain skill's files as they are."""
    out = []
    for rel in skill_dirs(_skill_md_paths(root)):
        d = (root / rel).resolve()
        if exclude is not None and d == exclude.resolve():
            continue
        if (d / MANIFEST).is_file():
            out.append(render(SkillPackage.from_dir(d), "folder"))
            continue
        files = {}
        for dirpath, dirnames, filenames in os.walk(d):
            dirnames[:] = sorted(x for x in dirnames if x not in SKIPPED_DIRS)
            for name in filenames:
                full = Path(dirpath) / name
                if full.is_file() and not full.is_symlink():
                    files[full.relative_to(d).as_posix()] = full.read_bytes()
        pkg = SkillPackage({SKILL_MD: files[SKILL_MD]}, root=str(d))
        out.append(
            RenderedSkill(
                name=pkg.frontmatter.name,
                version="0.0.0",
                harness="folder",
                package_hash=hashlib.sha256(json.dumps(sorted(files)).encode()).hexdigest(),
                files=[
                    RenderedFile(
                        path=p,
                        kind="bootstrap" if p == SKILL_MD else "bundled",
                        content=b,
                        tokens=0,
                    )
                    for p, b in sorted(files.items())
                ],
            )
        )
    return out


def catalogue(target: CatalogueEntry, others: list[CatalogueEntry]) -> list[CatalogueEntry]:
    """The target plus every distractor with another name."""
    return [target, *(e for e in others if e.name != target.name)]


# ------------------------------------------------------------------ decisions


class Decider:
    """Makes (or reuses) trigger decisions through one model route."""

    def __init__(
        self,
        route_name: str,
        store: TraceStore,
        *,
        route: ModelRoute | None = None,
        seed: int = 0,
    ) -> None:
        self.route_name = route_name
        self.route = route or resolve_route(route_name)
        self.client = ModelClient(route_name, self.route)
        self.store = store
        self.seed = seed

    def key(self, prompt: str, query: str, seed: int) -> str:
        blob = json.dumps(
            {
                "v": DECISION_VERSION,
                "route": self.route.fingerprint(),
                "prompt": prompt,
                "query": query,
                "seed": seed,
            },
            sort_keys=True,
        )
        return hashlib.sha256(blob.encode("utf-8")).hexdigest()

    def outcome(
        self,
        q: TriggerQuery,
        entries: list[CatalogueEntry],
        harness: CatalogueHarness,
        runs: int,
        skill_ref: SkillRef | None,
    ) -> QueryOutcome:
        prompt = render_catalogue(entries, harness)
        names = [e.name for e in entries]
        choices: list[str | None] = []
        run_ids: list[str] = []
        cached = 0
        for i in range(runs):
            key = self.key(prompt, q.query, self.seed + i)
            hit = self.store.records(trial_cache_key=key, limit=1)
            if hit:
                rec = hit[0]
                cached += 1
            else:
                rec = self._decide(q, prompt, names, harness, key, i, skill_ref)
                self.store.put(rec)
            chosen = rec.metadata.get("trigger", {}).get("chosen")
            choices.append(chosen if isinstance(chosen, str) and chosen in names else None)
            run_ids.append(rec.run_id)
        return QueryOutcome(
            query_id=q.id,
            query=q.query,
            should_trigger=q.should_trigger,
            near_miss=q.near_miss,
            split=q.split,
            choices=choices,
            run_ids=run_ids,
            cached=cached,
        )

    def _decide(
        self,
        q: TriggerQuery,
        prompt: str,
        names: list[str],
        harness: CatalogueHarness,
        key: str,
        index: int,
        skill_ref: SkillRef | None,
    ) -> RunRecord:
        messages = [{"role": "system", "content": prompt}, {"role": "user", "content": q.query}]
        seed = self.seed + index
        comp = self.client.complete(messages, seed=seed)
        chosen = parse_choice(comp.content, names)
        target = skill_ref.name if skill_ref else None
        right = (chosen == target) == q.should_trigger
        state = EvalState.passed if right else EvalState.failed
        return RunRecord(
            run_id=f"trigger-{key[:24]}",
            task_id=f"{TASK_PREFIX}{q.id}",
            agent_role=AgentRole.student,
            model=ModelInfo(
                route=self.route_name,
                name=self.route.model_id,
                revision=self.route.revision,
                quantization=self.route.quantization,
                context_window=self.route.context_window,
                params=self.route.sampling_params(),
            ),
            runtime=RuntimeInfo(
                harness=f"catalogue:{harness}",
                harness_version=DECISION_VERSION,
                runner="trigger",
                seed=seed,
                skill=skill_ref,
                system_prompt_hash=hashlib.sha256(prompt.encode("utf-8")).hexdigest(),
            ),
            events=[
                MessageEvent(step=0, role="system", content=prompt, untrusted=False),
                MessageEvent(step=1, role="user", content=q.query, untrusted=False),
                MessageEvent(
                    step=2,
                    role="assistant",
                    content=comp.content or "",
                    input_tokens=comp.input_tokens,
                    output_tokens=comp.output_tokens,
                ),
            ],
            final_output=comp.content or "",
            stop_reason="final_answer",
            evaluation=Evaluation(
                state=state, reward=1.0 if right else 0.0, passed=right, reward_source="trigger"
            ),
            cost=Cost(
                input_tokens=comp.input_tokens,
                output_tokens=comp.output_tokens,
                model_calls=1,
                cached_model_calls=int(comp.cached),
                usd=comp.usd,
            ),
            suite="triggers",
            split=q.split,
            repeat_index=index,
            trial_cache_key=key,
            metadata={
                "trigger": {
                    "query_id": q.id,
                    "should_trigger": q.should_trigger,
                    "near_miss": q.near_miss,
                    "chosen": chosen,
                    "target": target,
                    "catalogue": names,
                }
            },
        )


def run_queries(
    decider: Decider,
    target: CatalogueEntry,
    others: list[CatalogueEntry],
    queries: list[TriggerQuery],
    *,
    harness: CatalogueHarness,
    runs: int,
    skill_ref: SkillRef | None,
    progress: Progress | None = None,
) -> list[QueryOutcome]:
    """Decide every query ``runs`` times with ``target`` among ``others``."""
    entries = catalogue(target, others)
    ref = skill_ref or SkillRef(name=target.name, version="0.0.0", content_hash="")
    out = []
    for q in queries:
        o = decider.outcome(q, entries, harness, runs, ref)
        if progress is not None:
            progress(o)
        out.append(o)
    return out


# ------------------------------------------------------------------ the command


class TriggerEvalRequest(BaseModel):
    """What ``skillci eval triggers`` runs."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    skill: Path = Field(description="Skill package dir (holding skillci/evals/triggers.yaml).")
    installed: Path | None = Field(
        default=None,
        description="Where the other installed skills are (a repository or a skills folder); "
        "default: the repository root.",
    )
    model: str = Field(default="sim/student", description="Model route that decides.")
    harness: CatalogueHarness = Field(default="builtin", description="Catalogue presentation.")
    runs: int | None = Field(default=None, ge=1, description="k; default: the suite's runs.")
    seed: int = Field(default=0, description="Seed of run 0 (run i uses seed + i).")
    split: Literal["all", "train", "held_out"] = Field(default="all", description="Queries.")
    home: Path = Field(description="State dir (.skillci): the trace store.")
    agent: str | None = Field(
        default=None,
        description="A real agent that decides by loading skills (None or builtin: the "
        "catalogue question).",
    )
    agent_version: str | None = Field(default=None, description="Its version (newest).")
    agent_timeout: float = Field(
        default=DEFAULT_TIMEOUT_SEC, gt=0, description="Seconds per agent run."
    )
    sandbox: Literal["auto", "bwrap", "none"] = Field(
        default="auto", description="The agent's sandbox."
    )

    @property
    def real_agent(self) -> str | None:
        return None if self.agent in (None, "builtin") else self.agent


def skill_ref(pkg: SkillPackage) -> SkillRef:
    try:
        version = pkg.manifest.version
    except Exception:
        version = "0.0.0"
    return SkillRef(name=pkg.frontmatter.name, version=version, content_hash=pkg.content_hash)


def eval_triggers(
    req: TriggerEvalRequest,
    root: Path,
    *,
    suite: TriggerSuite | None = None,
    progress: Progress | None = None,
) -> TriggerEvalResult:
    """Run the skill's trigger suite (``suite`` overrides the package's)."""
    pkg = SkillPackage.from_dir(req.skill)
    suite = suite or require_suite(pkg)
    split: Split | None = None if req.split == "all" else req.split
    target = entry_of(pkg)
    others = installed_entries(req.installed or root, exclude=req.skill)
    runs = req.runs or suite.runs
    if req.real_agent is not None:
        return _agent_eval(req, root, pkg, suite, split, runs, progress)
    decider = Decider(req.model, TraceStore(req.home), seed=req.seed)
    outcomes = run_queries(
        decider,
        target,
        others,
        suite.part(split),
        harness=req.harness,
        runs=runs,
        skill_ref=skill_ref(pkg),
        progress=progress,
    )
    cached = sum(o.cached for o in outcomes)
    return TriggerEvalResult(
        skill=target.name,
        model=req.model,
        harness=req.harness,
        catalogue=sorted(e.name for e in catalogue(target, others)),
        runs=runs,
        split=req.split,
        metrics=metrics(target.name, outcomes),
        outcomes=outcomes,
        cached=cached,
        ran=sum(len(o.choices) for o in outcomes) - cached,
    )


def _agent_eval(
    req: TriggerEvalRequest,
    root: Path,
    pkg: SkillPackage,
    suite: TriggerSuite,
    split: Split | None,
    runs: int,
    progress: Progress | None,
) -> TriggerEvalResult:
    """:func:`eval_triggers` decided by the real agent ``req.agent``."""
    from skillci.agents.install import resolve
    from skillci.agents.registry import adapter

    assert req.real_agent is not None
    adapter(req.real_agent)  # not a real agent: exit 2
    resolve(req.real_agent, req.agent_version)  # not installed: exit 4, before any store
    others = installed_skills(req.installed or root, req.skill)
    decider = AgentDecider(
        req.real_agent,
        req.model,
        TraceStore(req.home),
        state_dir=req.home,
        distractors=others,
        version=req.agent_version,
        seed=req.seed,
        sandbox=req.sandbox,
        timeout_sec=req.agent_timeout,
    )
    target = render(pkg, "folder")
    outcomes = run_agent_queries(
        decider, target, suite.part(split), runs=runs, ref=skill_ref(pkg), progress=progress
    )
    cached = sum(o.cached for o in outcomes)
    return TriggerEvalResult(
        skill=target.name,
        model=req.model,
        harness=f"{decider.agent}@{decider.version}",
        catalogue=sorted(s.name for s in decider.skills(target)),
        runs=runs,
        split=req.split,
        metrics=metrics(target.name, outcomes),
        outcomes=outcomes,
        cached=cached,
        ran=sum(len(o.choices) for o in outcomes) - cached,
        agent=decider.agent,
        agent_version=decider.version,
    )


def dry_run_plan(
    req: TriggerEvalRequest, root: Path
) -> tuple[str, list[str], list[TriggerQuery], int]:
    """What ``eval triggers --dry-run`` lists: the skill's catalogue name, the catalogue's
    names, the queries of the split and the runs per query."""
    pkg = SkillPackage.from_dir(req.skill)
    suite = require_suite(pkg)
    split = None if req.split == "all" else req.split
    target = entry_of(pkg)
    names = sorted(
        e.name for e in catalogue(target, installed_entries(req.installed or root, req.skill))
    )
    return target.name, names, suite.part(split), req.runs or suite.runs


__all__ = [
    "Decider",
    "QueryOutcome",
    "TriggerEvalRequest",
    "TriggerEvalResult",
    "catalogue",
    "dry_run_plan",
    "entry_of",
    "eval_triggers",
    "installed_entries",
    "installed_skills",
    "run_queries",
    "skill_ref",
    "trigger_gate",
]


# ------------------------------------------------------------------ the gate's trigger check

TriggerMode = Literal["auto", "always", "never"]


def identity_changed(base: SkillPackage, head: SkillPackage) -> bool:
    """The frontmatter name or description differs (what a catalogue shows)."""
    b, h = base.frontmatter, head.frontmatter
    return (b.name, b.description) != (h.name, h.description)


def trigger_gate(
    base: SkillPackage,
    head: SkillPackage,
    others: list[CatalogueEntry],
    *,
    model: str,
    home: Path,
    mode: TriggerMode = "auto",
    harness: CatalogueHarness = "builtin",
    agent: AgentDecider | None = None,
) -> TriggerCheck | None:
    """The trigger check of the gate: the head's trigger suite decided with the base's and
    the head's catalogue entry. Runs when ``mode`` is ``always``, or ``auto`` and the name or
    description changed; None when it does not run or no suite exists. The threshold is the
    base's ``release_gate.max_trigger_drop`` (a PR cannot loosen its own gate). With
    ``agent`` the real agent decides each side with that side's whole skill installed
    beside the decider's distractors (``others`` is then unused)."""
    if mode == "never" or (mode == "auto" and not identity_changed(base, head)):
        return None
    suite = package_suite(head) or package_suite(base)
    if suite is None or not suite.queries:
        return None
    decider = Decider(model, TraceStore(home))
    sides = []
    for pkg in (base, head):
        if agent is not None:
            target = render(pkg, "folder")
            runs = suite.runs
            sides.append(
                run_agent_queries(agent, target, suite.queries, runs=runs, ref=skill_ref(pkg))
            )
            continue
        sides.append(
            run_queries(
                decider,
                entry_of(pkg),
                others,
                suite.queries,
                harness=harness,
                runs=suite.runs,
                skill_ref=skill_ref(pkg),
            )
        )
    return check(
        base.frontmatter.name,
        head.frontmatter.name,
        sides[0],
        sides[1],
        max_drop=base.manifest.release_gate.max_trigger_drop,
    )
