"""``skillci compile fast``: load the batch, score it (reward model or pre-scores), run the
Fast computation (``skillci.compile.fast``) and publish the candidate atomically.

Layout written under ``--output``::

    candidate/<name>/    the candidate package (published atomically)
    fast-report.json     FastReport    fast-report.md   the same, for people
    patch.yaml           the bounded patch (absent when nothing new was learned)
    scores.json          per-trajectory scores (or --score-output)
    exchanges.json       the compiler model's prompts and answers (when one was asked)
    .fast-cache.json     cache key + artifact hashes

The cache is reused only when the key — record contents, their labels, the skill's
content hash, the compiler route's fingerprint, the reward-model setting, skillci's and
the prompt's versions — matches *and* every artifact still hashes to what was written.
``--force`` ignores it.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillci import __version__
from skillci.analyze.modelio import ModelCall
from skillci.compile.fast import (
    FAST_PROMPT_VERSION,
    FAST_SCHEMA_VERSION,
    FastReport,
    check_batch,
    run_fast,
)
from skillci.flows.pipeline.fsio import load_records, load_skill_input, publish_package
from skillci.flows.pipeline.reports import fast_markdown
from skillci.fsutil import atomic_write_text, sha256_bytes, tree_hash
from skillci.patch.models import dump_patch
from skillci.providers.reward_model import DEFAULT_RM_URL, RewardModelClient
from skillci.skill.package import SkillPackage, read_tree
from skillci.trace.models import RunRecord, SkillRef
from skillci.trace.store import canonical_json

CACHE_FILE = ".fast-cache.json"


@dataclass
class FastRequest:
    """What ``compile fast`` was asked."""

    traces: str | Path
    skill: Path
    model: str
    output: Path
    rm_url: str = DEFAULT_RM_URL
    no_rm: bool = False
    score_output: Path | None = None
    max_parallel: int = 1
    force: bool = False
    state_dir: Path | None = None
    records: list[tuple[str, RunRecord]] | None = None
    """Pre-loaded (label, record) pairs (the pipeline passes its trial dirs)."""


@dataclass
class FastOutcome:
    report: FastReport
    package: SkillPackage
    candidate_dir: Path
    cached: bool


class FastCache(BaseModel):
    """``.fast-cache.json``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=1)
    key: str = Field(description="Hash of inputs, config and versions.")
    artifacts: dict[str, str] = Field(description="Artifact path -> content hash.")


def _hash_path(p: Path) -> str | None:
    if p.is_file():
        return sha256_bytes(p.read_bytes())
    if p.is_dir():
        return tree_hash(read_tree(p).items())
    return None


def cache_key(req: FastRequest, pairs: list[tuple[str, RunRecord]], pkg: SkillPackage) -> str:
    from skillci.providers.routes import resolve_route

    route = resolve_route(req.model)
    data = {
        "schema": FAST_SCHEMA_VERSION,
        "skillci": __version__,
        "prompt": FAST_PROMPT_VERSION,
        "records": [
            [label, sha256_bytes(canonical_json(r.model_dump(mode="json")))] for label, r in pairs
        ],
        "skill": pkg.content_hash,
        "compiler": [req.model, route.fingerprint()],
        "rm": None if req.no_rm else req.rm_url.rstrip("/"),
    }
    return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def _compiler(req: FastRequest) -> tuple[ModelCall | None, str, str | None]:
    from skillci.providers.routes import resolve_route

    route = resolve_route(req.model)
    if route.is_sim:
        return (
            None,
            "observed",
            f"{req.model} is a simulator: lessons from the observed-behaviour table",
        )
    from skillci.providers.cache import ResponseCache
    from skillci.providers.client import ModelClient

    client = ModelClient(
        req.model,
        route,
        cache=ResponseCache(req.state_dir / "cache" / "responses") if req.state_dir else None,
        use_cache=req.state_dir is not None,
    )
    return client.complete, req.model, None


def _scores_path(req: FastRequest) -> Path:
    return req.score_output or req.output / "scores.json"


def _artifacts(req: FastRequest, name: str) -> list[Path]:
    return [
        req.output / "candidate" / name,
        req.output / "fast-report.json",
        _scores_path(req),
    ]


def _rel(req: FastRequest, p: Path) -> str:
    return os.path.relpath(p, req.output)


def _reuse(req: FastRequest, key: str, name: str) -> FastOutcome | None:
    path = req.output / CACHE_FILE
    if req.force or not path.is_file():
        return None
    try:
        cache = FastCache.model_validate_json(path.read_bytes())
    except ValueError:
        return None
    if cache.key != key:
        return None
    for p in _artifacts(req, name):
        want = cache.artifacts.get(_rel(req, p))
        if want is None or _hash_path(p) != want:
            return None
    report = FastReport.model_validate_json((req.output / "fast-report.json").read_bytes())
    cand = req.output / "candidate" / name
    return FastOutcome(report, SkillPackage.from_dir(cand), cand, cached=True)


def run_fast_stage(req: FastRequest) -> FastOutcome:
    pkg, _plain = load_skill_input(req.skill)
    ident = SkillRef(
        name=pkg.manifest.name, version=pkg.manifest.version, content_hash=pkg.content_hash
    )
    pairs = req.records if req.records is not None else load_records(req.traces, skill=ident)
    records = [r for _, r in pairs]
    check_batch(records, pkg.content_hash)
    name = pkg.manifest.name
    key = cache_key(req, pairs, pkg)
    hit = _reuse(req, key, name)
    if hit is not None:
        return hit
    rm_scores: list[float] | None = None
    rm_note: str | None = None
    if req.no_rm:
        rm_note = "--no-rm: ranked by the deterministic pre-scores alone"
    else:
        with RewardModelClient(req.rm_url) as rm:
            rm_scores = rm.score(records, records[0].task_id, [lab for lab, _ in pairs])
    call, compiler, note = _compiler(req)
    labels = [lab for lab, _ in pairs]
    result = run_fast(
        records,
        pkg,
        rm_scores=rm_scores,
        reward_model=None if req.no_rm else req.rm_url,
        rm_note=rm_note,
        call=call,
        compiler=compiler,
        label=lambda i, _r: labels[i],
        max_parallel=req.max_parallel,
    )
    report = result.report
    if note:
        report = report.model_copy(update={"notes": [note, *report.notes]})
    cand = req.output / "candidate" / name
    publish_package(cand, result.package)
    if report.patch is not None:
        atomic_write_text(req.output / "patch.yaml", dump_patch(report.patch))
    elif (req.output / "patch.yaml").exists():
        (req.output / "patch.yaml").unlink()
    scores = [s.model_dump(mode="json") for s in report.scores]
    atomic_write_text(_scores_path(req), json.dumps(scores, indent=1) + "\n")
    if result.exchanges:
        atomic_write_text(
            req.output / "exchanges.json",
            json.dumps([e.model_dump(mode="json") for e in result.exchanges], indent=1) + "\n",
        )
    atomic_write_text(req.output / "fast-report.md", fast_markdown(report))
    atomic_write_text(
        req.output / "fast-report.json",
        json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False) + "\n",
    )
    hashes = {_rel(req, p): _hash_path(p) for p in _artifacts(req, name)}
    cache = FastCache(key=key, artifacts={k: v for k, v in hashes.items() if v is not None})
    atomic_write_text(req.output / CACHE_FILE, cache.model_dump_json(indent=1) + "\n")
    return FastOutcome(report, result.package, cand, cached=False)


__all__ = ["CACHE_FILE", "FastCache", "FastOutcome", "FastRequest", "cache_key", "run_fast_stage"]
