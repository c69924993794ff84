"""``skillci compile deep run|resume``: local edits, validated and re-executed, one at a time.

A Deep run is a small state machine kept in ``<output>/state.json`` (written atomically
after every transition), so ``resume --run DIR`` continues exactly where a run stopped:

1. make sure the *current* package has a complete batch of rollouts (the given traces
   when they ran this very package, else ``rollouts/batch-NNN/test-*``);
2. with an edit pending, finish its rollouts (complete trial dirs are kept) and decide:
   commit when nothing regressed at runtime (``skillci.compile.deep.regressions``), else
   reject;
3. otherwise score the current SKILL.md (rubric), take the weakest unit's weakest
   dimension not tried yet, generate one edit, validate it, re-score: an edit that is
   invalid or does not raise its target dimension and the unit's mean is recorded and
   the next target is tried; a valid one is snapshotted under ``packages/<hash>/`` and
   becomes the pending edit;
4. after ``rounds`` edits were executed (or nothing is left to try): publish
   ``S_final/`` atomically and the report.

The last complete batch is always the current package's: Deep's rollouts are reused
(e.g. as the pipeline's final eval) only when their skill's content hash and SKILL.md
hash equal ``S_final``'s.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from skillci.analyze.modelio import ModelCall, ModelExchange
from skillci.basemodels import StrictModel
from skillci.compile.deep import (
    DIMENSIONS,
    Dimension,
    EditProposal,
    RolloutStats,
    Unit,
    UnitScore,
    curated_edit,
    model_edit,
    model_scores,
    regressions,
    score_text,
    score_unit,
    units,
    validate_edit,
)
from skillci.errors import InvalidInputError
from skillci.flows.pipeline.fsio import publish_package, tree_matches
from skillci.flows.pipeline.reports import stats_table
from skillci.fsutil import atomic_write_text, sha256_bytes
from skillci.runners.slots import Progress
from skillci.skill.package import SKILL_MD, SkillPackage
from skillci.trace.models import RunRecord

DEEP_STATE_VERSION = 1
STATE_FILE = "state.json"
EditStatus = Literal["pending", "committed", "rejected", "invalid", "no_gain"]


class DeepConfig(StrictModel):
    """What a Deep run was started with (resume reads it back)."""

    task_dir: str = Field(description="Absolute path of the task the rollouts run.")
    task_hash: str = Field(description="Content hash of the task dir at start.")
    student: str = Field(description="Student route of the rollouts.")
    compiler: str = Field(description="Compiler route ('curated' edits for simulators).")
    repeat: int = Field(ge=1, description="Rollouts per batch.")
    rounds: int = Field(ge=0, description="Edits executed at most.")
    budget: int = Field(gt=0, description="Bootstrap tokens allowed.")
    max_added_tokens: int = Field(ge=0, description="Token growth allowed per edit.")
    tolerance: float = Field(ge=0, description="Runtime regression tolerance (relative).")
    max_parallel: int = Field(default=1, ge=1, description="Rollouts at once.")
    input_hash: str = Field(description="Content hash of the input package.")
    scorer: Literal["rubric", "model"] = Field(
        default="rubric", description="Who scores units: the deterministic rubric or the model."
    )


class DeepBatch(StrictModel):
    """Rollouts of one package."""

    name: str
    skill_hash: str = Field(description="Package content hash.")
    skill_md_hash: str = Field(description="sha256 of its SKILL.md.")
    source: Literal["traces", "rollouts"]
    labels: list[str] = Field(default_factory=list, description="Trial dirs or run labels.")
    stats: RolloutStats | None = None
    complete: bool = False


class DeepEdit(StrictModel):
    """One proposed edit and what became of it."""

    index: int
    unit: str
    title: str
    dimension: Dimension
    editor: Literal["curated", "model"] | None = None
    before: UnitScore
    after: UnitScore | None = None
    status: EditStatus
    reasons: list[str] = Field(default_factory=list)
    candidate_hash: str | None = None
    batch: str | None = None
    note: str = ""


class DeepState(StrictModel):
    """``state.json``."""

    schema_version: int = Field(default=DEEP_STATE_VERSION)
    config: DeepConfig
    current_hash: str
    batches: list[DeepBatch] = Field(default_factory=list)
    edits: list[DeepEdit] = Field(default_factory=list)
    tried: list[str] = Field(default_factory=list, description="unit:dimension pairs tried.")
    scores_before: list[UnitScore] = Field(default_factory=list)
    scores_after: list[UnitScore] = Field(default_factory=list)
    done: bool = False
    final_hash: str | None = None

    def batch_for(self, skill_hash: str) -> DeepBatch | None:
        found = [b for b in self.batches if b.skill_hash == skill_hash and b.complete]
        return found[-1] if found else None

    @property
    def executed(self) -> int:
        return sum(e.status in ("pending", "committed", "rejected") for e in self.edits)

    @property
    def last_valid_batch(self) -> DeepBatch | None:
        return self.batch_for(self.current_hash)


@dataclass
class DeepContext:
    """The live parts a Deep run needs (rebuilt on resume)."""

    output: Path
    run_rollouts: Callable[[SkillPackage, Path], list[RunRecord]]
    call: ModelCall | None = None
    progress: Progress | None = None
    score_call: ModelCall | None = None
    """Set when units are scored by the model instead of the rubric."""
    model: str | None = None

    def score(self, us: list[Unit], pkg: SkillPackage) -> list[UnitScore]:
        """Scores of ``us``: the model's when a scoring call is set (rubric on failure)."""
        if self.score_call is not None and us:
            try:
                got, ex = model_scores(self.score_call, self.model, us)
            except ValueError:
                got, ex = [], None
            if ex is not None:
                n = len(list((self.output / "exchanges").glob("score-*.json")))
                atomic_write_text(
                    self.output / "exchanges" / f"score-{n:03d}.json",
                    ex.model_dump_json(indent=1) + "\n",
                )
            if got:
                return got
        return [score_unit(u, pkg.tokens) for u in us]


def _save(output: Path, state: DeepState) -> None:
    atomic_write_text(output / STATE_FILE, state.model_dump_json(indent=1) + "\n")


def load_state(output: Path) -> DeepState:
    path = output / STATE_FILE
    if not path.is_file():
        raise InvalidInputError(
            "no Deep run here (state.json missing)",
            file=path,
            hint="start one with `skillci compile deep run`",
        )
    return DeepState.model_validate_json(path.read_bytes())


def _pkg_dir(output: Path, h: str) -> Path:
    return output / "packages" / h[:16]


def _snapshot(output: Path, pkg: SkillPackage) -> None:
    d = _pkg_dir(output, pkg.content_hash)
    if not tree_matches(d, pkg.content_hash):
        publish_package(d, pkg)


def _load(output: Path, h: str) -> SkillPackage:
    d = _pkg_dir(output, h)
    if not tree_matches(d, h):
        raise InvalidInputError(
            f"package snapshot {h[:12]} is missing or changed", file=d, hint="start a new Deep run"
        )
    return SkillPackage.from_dir(d)


def init_state(
    output: Path,
    config: DeepConfig,
    pkg: SkillPackage,
    baseline: list[tuple[str, RunRecord]] | None,
) -> DeepState:
    """A fresh state (or the existing one when it was started with the same config)."""
    if (output / STATE_FILE).is_file():
        state = load_state(output)
        if state.config != config:
            raise InvalidInputError(
                "this Deep output dir was started with another configuration",
                file=output / STATE_FILE,
                hint="use `skillci compile deep resume --run DIR` or a new --output",
            )
        return state
    _snapshot(output, pkg)
    state = DeepState(
        config=config,
        current_hash=pkg.content_hash,
        scores_before=score_text(pkg.text(SKILL_MD), pkg.tokens),
    )
    if baseline:
        recs = [r for _, r in baseline]
        from skillci.agents.loop import HARNESS

        # a baseline only counts when it ran like the rollouts will: same skill, the
        # built-in harness, the same student (imported BenchFlow runs do not compare)
        if all(
            r.skill_hash == pkg.content_hash
            and r.runtime.harness == HARNESS
            and r.model.route == config.student
            for r in recs
        ):
            state.batches.append(
                DeepBatch(
                    name="baseline",
                    skill_hash=pkg.content_hash,
                    skill_md_hash=sha256_bytes(pkg.files[SKILL_MD]),
                    source="traces",
                    labels=[lab for lab, _ in baseline],
                    stats=RolloutStats.of(recs),
                    complete=True,
                )
            )
    _save(output, state)
    return state


def _rollouts(ctx: DeepContext, state: DeepState, pkg: SkillPackage, name: str) -> DeepBatch:
    existing = next((b for b in state.batches if b.name == name), None)
    if existing is None:
        existing = DeepBatch(
            name=name,
            skill_hash=pkg.content_hash,
            skill_md_hash=sha256_bytes(pkg.files[SKILL_MD]),
            source="rollouts",
        )
        state.batches.append(existing)
        _save(ctx.output, state)
    dest = ctx.output / "rollouts" / name
    records = ctx.run_rollouts(pkg, dest)
    existing.labels = [f"rollouts/{name}/test-{i:03d}" for i in range(len(records))]
    existing.stats = RolloutStats.of(records)
    existing.complete = True
    _save(ctx.output, state)
    return existing


def _next_batch_name(state: DeepState) -> str:
    return f"batch-{sum(b.source == 'rollouts' for b in state.batches):03d}"


def _targets(
    ctx: DeepContext, text: str, pkg: SkillPackage, tried: set[str]
) -> list[tuple[Unit, Dimension, UnitScore]]:
    us = units(text, pkg.tokens)
    scored = list(zip(us, ctx.score(us, pkg), strict=True))
    scored.sort(key=lambda x: (x[1].overall, us.index(x[0])))
    out: list[tuple[Unit, Dimension, UnitScore]] = []
    for u, s in scored:
        for d in sorted(DIMENSIONS, key=lambda d: (s.get(d), DIMENSIONS.index(d))):
            if s.get(d) < 1.0 and f"{u.id}:{d}" not in tried:
                out.append((u, d, s))
    return out


def _propose(ctx: DeepContext, state: DeepState, pkg: SkillPackage) -> bool:
    """Record the next edit; True when one became pending, False when none is left."""
    text = pkg.text(SKILL_MD)
    cfg = state.config
    for unit, dim, before in _targets(ctx, text, pkg, set(state.tried)):
        state.tried.append(f"{unit.id}:{dim}")
        edit = DeepEdit(
            index=len(state.edits),
            unit=unit.id,
            title=unit.title,
            dimension=dim,
            before=before,
            status="invalid",
        )
        prop: EditProposal | None
        exchange: ModelExchange | None = None
        if ctx.call is not None:
            prop, exchange = model_edit(ctx.call, cfg.compiler, text, unit, dim)
        else:
            prop = curated_edit(text, unit, dim)
        if prop is None:
            edit.reasons = ["no edit available for this dimension"]
            state.edits.append(edit)
            continue
        edit.editor = prop.editor
        edit.note = prop.note
        if exchange is not None:
            atomic_write_text(
                ctx.output / "exchanges" / f"edit-{edit.index:03d}.json",
                exchange.model_dump_json(indent=1) + "\n",
            )
        reasons = validate_edit(
            pkg, prop.text, unit, budget=cfg.budget, max_added_tokens=cfg.max_added_tokens
        )
        if reasons:
            edit.reasons = reasons
            state.edits.append(edit)
            continue
        cand = pkg.with_files({SKILL_MD: prop.text.encode("utf-8")})
        same = [u for u in units(prop.text, cand.tokens) if u.id == unit.id]
        after = ctx.score(same, cand)[0] if same else None
        edit.after = after
        if after is None or after.get(dim) <= before.get(dim) or after.overall <= before.overall:
            edit.status = "no_gain"
            edit.reasons = [f"{dim} did not improve"]
            state.edits.append(edit)
            continue
        _snapshot(ctx.output, cand)
        edit.status = "pending"
        edit.candidate_hash = cand.content_hash
        edit.batch = _next_batch_name(state)
        state.edits.append(edit)
        _save(ctx.output, state)
        return True
    _save(ctx.output, state)
    return False


def _decide(ctx: DeepContext, state: DeepState, edit: DeepEdit) -> None:
    assert edit.candidate_hash is not None and edit.batch is not None
    cand = _load(ctx.output, edit.candidate_hash)
    batch = _rollouts(ctx, state, cand, edit.batch)
    base = state.batch_for(state.current_hash)
    assert base is not None and base.stats is not None and batch.stats is not None
    why = regressions(base.stats, batch.stats, state.config.tolerance)
    if why:
        edit.status = "rejected"
        edit.reasons = why
    else:
        edit.status = "committed"
        state.current_hash = edit.candidate_hash
    _save(ctx.output, state)


def step(ctx: DeepContext, state: DeepState) -> bool:
    """One transition; False when the run is done."""
    if state.done:
        return False
    current = _load(ctx.output, state.current_hash)
    if state.batch_for(state.current_hash) is None:
        open_batch = next(
            (b for b in state.batches if b.skill_hash == state.current_hash and not b.complete),
            None,
        )
        _rollouts(ctx, state, current, open_batch.name if open_batch else _next_batch_name(state))
        return True
    pending = next((e for e in state.edits if e.status == "pending"), None)
    if pending is not None:
        _decide(ctx, state, pending)
        return True
    if state.executed >= state.config.rounds or not _propose(ctx, state, current):
        finish(ctx, state)
        return False
    return True


def finish(ctx: DeepContext, state: DeepState) -> SkillPackage:
    final = _load(ctx.output, state.current_hash)
    if not tree_matches(ctx.output / "S_final", final.content_hash):
        publish_package(ctx.output / "S_final", final)
    state.scores_after = score_text(final.text(SKILL_MD), final.tokens)
    state.final_hash = final.content_hash
    state.done = True
    atomic_write_text(ctx.output / "deep-report.md", deep_markdown(state))
    _save(ctx.output, state)
    return final


def run_deep(ctx: DeepContext, state: DeepState) -> SkillPackage:
    """Run (or resume) to the end; returns S_final."""
    while step(ctx, state):
        pass
    if not tree_matches(ctx.output / "S_final", state.current_hash):
        return finish(ctx, state)
    return SkillPackage.from_dir(ctx.output / "S_final")


def deep_markdown(state: DeepState) -> str:
    before = {s.unit: s for s in state.scores_before}
    lines = [
        "# Deep optimization",
        "",
        f"- input `{state.config.input_hash[:12]}` -> final `{state.current_hash[:12]}`",
        f"- edits executed: {state.executed} of at most {state.config.rounds}",
        "",
        "## Unit scores (mean of the five dimensions)",
        "",
        "| unit | section | before | after |",
        "|---|---|---|---|",
    ]
    for s in state.scores_after:
        b = before.get(s.unit)
        lines.append(
            f"| {s.unit} | {s.title or '(preamble)'} | {b.overall if b else '-'} | {s.overall} |"
        )
    lines += [
        "",
        "## Edits",
        "",
        "| # | unit | dimension | editor | status | why |",
        "|---|---|---|---|---|---|",
    ]
    for e in state.edits:
        lines.append(
            f"| {e.index} | {e.unit} | {e.dimension} | {e.editor or '-'} | {e.status} | "
            f"{'; '.join(e.reasons) or e.note} |"
        )
    lines += ["", "## Rollouts", ""]
    lines.append(stats_table([(f"{b.name} ({b.skill_hash[:8]})", b.stats) for b in state.batches]))
    return "\n".join(lines)


def write_report_json(output: Path, state: DeepState) -> None:
    atomic_write_text(
        output / "deep-report.json", json.dumps(state.model_dump(mode="json"), indent=1) + "\n"
    )


SAVED_MODELS: dict[str, type[BaseModel]] = {"deep-state": DeepState}

__all__ = [
    "DEEP_STATE_VERSION",
    "SAVED_MODELS",
    "STATE_FILE",
    "DeepBatch",
    "DeepConfig",
    "DeepContext",
    "DeepEdit",
    "DeepState",
    "deep_markdown",
    "finish",
    "init_state",
    "load_state",
    "run_deep",
    "step",
    "write_report_json",
]
