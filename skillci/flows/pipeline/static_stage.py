"""``skillci compile static``: load the skill and the profile, plan (hybrid: one model
call), compile (pure), write the package and the report.

Layout written (nothing with ``--dry-run``)::

    <out>/skills/<name>/     the compiled package (published atomically)
    <out>/report.json        StaticReport      <out>/report.md   the same, for people
    <out>/profile.yaml       the profile used  <out>/plan.json   the plan executed
    <out>/exchange.json      the planning call (hybrid, when a model was asked)

``<out>`` is ``--out-root/<student slug>`` for the command, ``artifacts/static`` in a
pipeline run.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from skillci.analyze.modelio import ModelExchange
from skillci.compile.planner import request_plan
from skillci.compile.profile import (
    ModelProfile,
    config_profile,
    dump_profile,
    find_profile,
    load_profile,
    profile_slug,
)
from skillci.compile.static import (
    Mode,
    StaticPlan,
    StaticReport,
    compile_static,
    deterministic_plan,
)
from skillci.errors import ModelOutputError, UsageError
from skillci.flows.pipeline.fsio import find_skill_folder, load_skill_input, publish_package
from skillci.flows.pipeline.repo import propose_static
from skillci.flows.pipeline.reports import static_markdown
from skillci.fsutil import atomic_write_text
from skillci.skill.package import MANIFEST, SKILL_MD, SkillPackage
from skillci.skill.render import render


@dataclass
class StaticRequest:
    """What ``compile static`` was asked."""

    model: str
    input: Path
    out: Path
    mode: Mode = "deterministic"
    external_model: str | None = None
    dry_run: bool = False
    harness: str = "skillci-builtin"
    profile: ModelProfile | None = None
    profile_source: str = "given"
    """How a given profile was made (reported)."""
    profile_roots: list[Path] = field(default_factory=list)
    state_dir: Path | None = None
    propose: bool = False
    """In a git repository, commit the change on a candidate branch and open a PR."""
    base: str = "main"


@dataclass
class StaticOutcome:
    """What it did."""

    report: StaticReport
    package: SkillPackage
    source: SkillPackage
    plan: StaticPlan
    profile: ModelProfile
    out: Path
    skill_dir: Path
    written: bool
    exchange: ModelExchange | None = None
    pr_notes: list[str] = field(default_factory=list)


def default_out(out_root: Path, model: str) -> Path:
    return out_root / profile_slug(model)


def resolve_profile(req: StaticRequest) -> tuple[ModelProfile, str]:
    """The given profile, a profiles/<slug>.yaml found under the roots, or the route's
    configuration alone; with where it came from."""
    if req.profile is not None:
        return req.profile, req.profile_source
    found = find_profile(req.model, req.profile_roots)
    if found is not None:
        return load_profile(found), str(found)
    from skillci.providers.routes import resolve_route

    return config_profile(req.model, resolve_route(req.model), req.harness), "route config"


def _plan(
    req: StaticRequest, pkg: SkillPackage, profile: ModelProfile, notes: list[str]
) -> tuple[StaticPlan | None, ModelExchange | None]:
    if req.mode == "deterministic":
        return None, None
    if not req.external_model:
        raise UsageError(
            "--mode hybrid needs --external-model ROUTE (the planning model)",
            hint="--model is always the target student; name the planner with --external-model",
        )
    from skillci.providers.routes import resolve_route

    route = resolve_route(req.external_model)
    text = pkg.text(SKILL_MD)
    if req.dry_run:
        notes.append(f"dry run: would ask {req.external_model} for one plan; none was asked")
        return None, None
    if route.is_sim:
        notes.append(
            f"{req.external_model} is a simulator and cannot plan; the deterministic plan was used"
        )
        return None, None
    from skillci.providers.cache import ResponseCache
    from skillci.providers.client import ModelClient

    client = ModelClient(
        req.external_model,
        route,
        cache=ResponseCache(req.state_dir / "cache" / "responses") if req.state_dir else None,
        use_cache=req.state_dir is not None,
    )
    budget = profile.bootstrap_budget(pkg.manifest.token_budget.bootstrap)
    try:
        return request_plan(
            client.complete,
            text,
            budget=budget,
            bootstrap=render(pkg).bootstrap_tokens,
            model=req.external_model,
        )
    except ModelOutputError as exc:
        notes.append(f"planning answer invalid ({exc.message}); the deterministic plan was used")
        ex = exc.exchange if isinstance(exc.exchange, ModelExchange) else None
        return None, ex


def run_static(req: StaticRequest) -> StaticOutcome:
    pkg, plain = load_skill_input(req.input, model=req.model, harness=req.harness)
    profile, where = resolve_profile(req)
    notes = [f"profile: {where}" + ("" if profile.measured else " (no measured runs)")]
    if plain:
        notes.append(f"input is a plain skill: imported (files byte-exact + {MANIFEST})")
    plan, exchange = _plan(req, pkg, profile, notes)
    result = compile_static(
        pkg, profile, mode=req.mode, plan=plan, planner=req.external_model, notes=notes
    )
    used = plan if plan is not None else deterministic_plan(pkg.text(SKILL_MD))
    skill_dir = req.out / "skills" / pkg.manifest.name
    if not req.dry_run:
        publish_package(skill_dir, result.package)
        atomic_write_text(req.out / "profile.yaml", dump_profile(profile))
        atomic_write_text(req.out / "plan.json", used.model_dump_json(indent=1) + "\n")
        if exchange is not None:
            atomic_write_text(req.out / "exchange.json", exchange.model_dump_json(indent=1) + "\n")
        atomic_write_text(req.out / "report.md", static_markdown(result.report))
        atomic_write_text(
            req.out / "report.json",
            json.dumps(result.report.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n",
        )
    pr_notes: list[str] = []
    if req.propose and not req.dry_run:
        pr_notes = propose_static(
            find_skill_folder(req.input),
            pkg,
            result.package,
            static_markdown(result.report),
            base=req.base,
            student=req.model,
            planner=req.external_model if req.mode == "hybrid" else None,
        )
    return StaticOutcome(
        pr_notes=pr_notes,
        report=result.report,
        package=result.package,
        source=pkg,
        plan=used,
        profile=profile,
        out=req.out,
        skill_dir=skill_dir,
        written=not req.dry_run,
        exchange=exchange,
    )


__all__ = ["StaticOutcome", "StaticRequest", "default_out", "resolve_profile", "run_static"]
