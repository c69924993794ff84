"""Model profiles: what a target student is (from config) and how it behaves (from runs).

A :class:`ModelProfile` describes one *compile target*: the route's context window,
quantization and family, the agent harness, and traits measured from the student's run
records — failure-class frequencies, average steps and tool calls, how often it skips
verification, how often it loads on-demand skill files when the bootstrap offers them,
and how its pass rate moves with the bootstrap's length. Static compile reads the profile
to decide which rewrites a skill needs for this student (see docs/design/100).

Profiles are data: YAML files ``profiles/<route slug>.yaml`` (``profile_slug``), with a
``schema_version`` and a ``revision`` (content hash), selected by ``--model``. Building a
profile is pure (route + records in, profile out); :func:`load_profile` /
:func:`save_profile` are the only file I/O.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import yaml
from pydantic import BaseModel, Field, ValidationError

from skillci.analyze.diagnose import diagnose
from skillci.analyze.taxonomy import FailureCategory, FailureClass, category_of
from skillci.analyze.trajectory import Trajectory
from skillci.basemodels import StrictModel
from skillci.errors import ConfigError, InvalidInputError
from skillci.fsutil import atomic_write_text
from skillci.providers.routes import ModelRoute
from skillci.trace.models import MessageEvent, RunRecord, SkillLoadEvent

PROFILE_SCHEMA_VERSION = 1
PROFILES_DIR = "profiles"
#: Share of the context window a bootstrap may take when the manifest allows more.
BOOTSTRAP_SHARE = 0.05
#: A trait counts as "shown" when at least this share of the runs shows it.
TRAIT_THRESHOLD = 0.2
#: Pass-rate change per 1000 bootstrap tokens below which the bootstrap budget is tightened.
SENSITIVITY_TIGHTEN = -0.05
_INDEX_RE = re.compile(r"^- `([^`]+)` — load when: ", re.MULTILINE)
_STOP_CLASSES = frozenset({FailureClass.loop_without_stop, FailureClass.repeated_identical_call})


class BootstrapPoint(StrictModel):
    """Pass rate of the runs whose bootstrap had (about) this many tokens."""

    tokens: int = Field(ge=0, description="Bootstrap tokens (rounded to 50).")
    runs: int = Field(ge=1, description="Runs with this bootstrap size.")
    pass_rate: float = Field(ge=0, le=1, description="Share of them that passed.")


class MeasuredTraits(StrictModel):
    """Behaviour measured from the student's run records (null: not measurable from them)."""

    runs: int = Field(default=0, ge=0, description="Run records the traits come from.")
    pass_rate: float | None = Field(default=None, description="Share of runs that passed.")
    avg_steps: float | None = Field(default=None, description="Mean model calls per run.")
    avg_tool_calls: float | None = Field(default=None, description="Mean tool calls per run.")
    failure_classes: dict[str, float] = Field(
        default_factory=dict,
        description="Failure class -> share of all runs diagnosed with it (failing runs only).",
    )
    verification_skip_rate: float | None = Field(
        default=None,
        description="Share of runs that edited something and finished without a passing "
        "check after the last edit (null: no run edited anything).",
    )
    on_demand_load_rate: float | None = Field(
        default=None,
        description="Share of runs that loaded an on-demand skill file, among runs whose "
        "bootstrap offered one (null: none was offered).",
    )
    bootstrap_points: list[BootstrapPoint] = Field(
        default_factory=list, description="Pass rate by bootstrap size."
    )
    bootstrap_sensitivity: float | None = Field(
        default=None,
        description="Least-squares slope of pass rate per 1000 bootstrap tokens (null: fewer "
        "than two bootstrap sizes).",
    )
    context_pressure: float | None = Field(
        default=None, description="Mean of (largest prompt of a run / context window)."
    )


class ModelProfile(StrictModel):
    """One compile target: configuration plus measured traits (``profiles/<slug>.yaml``)."""

    schema_version: int = Field(default=PROFILE_SCHEMA_VERSION, description="Profile schema.")
    route: str = Field(description="Route name, as --model names it.")
    model: str = Field(description="litellm model string of the route.")
    family: str | None = Field(default=None, description="Model family.")
    context_window: int | None = Field(default=None, description="Tokens the model accepts.")
    quantization: str | None = Field(default=None, description="e.g. int8, bf16.")
    harness: str = Field(description="Agent harness the traits were measured in.")
    tokenizer: str = Field(default="cl100k_base", description="Encoding used to count tokens.")
    source: Literal["config", "runs"] = Field(
        description="config: no runs measured; runs: traits come from run records."
    )
    traits: MeasuredTraits = Field(default_factory=MeasuredTraits)
    run_ids: list[str] = Field(
        default_factory=list,
        description="Run records measured: run ids or trial labels (first 50, sorted).",
    )

    # ------------------------------------------------------------------ identity

    @property
    def revision(self) -> str:
        """Content hash of the profile (what the pipeline's input identity records)."""
        data = self.model_dump(mode="json")
        canon = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canon.encode()).hexdigest()

    # ------------------------------------------------------------------ decisions

    @property
    def measured(self) -> bool:
        return self.source == "runs" and self.traits.runs > 0

    def class_share(self, pred: set[FailureClass] | frozenset[FailureClass]) -> float:
        return sum(v for k, v in self.traits.failure_classes.items() if FailureClass(k) in pred)

    @property
    def skips_verification(self) -> bool:
        """The runs show the student finishing without checking its work."""
        t = self.traits
        verification = {
            c
            for c in FailureClass
            if category_of(c) is FailureCategory.verification_stopping and c not in _STOP_CLASSES
        }
        return (t.verification_skip_rate or 0.0) >= TRAIT_THRESHOLD or self.class_share(
            verification
        ) >= TRAIT_THRESHOLD

    @property
    def misses_stop(self) -> bool:
        """The runs show the student looping or repeating failing calls."""
        return self.class_share(_STOP_CLASSES) >= TRAIT_THRESHOLD

    @property
    def loads_on_demand(self) -> bool | None:
        """Whether the student loads on-demand files when offered (None: unknown)."""
        rate = self.traits.on_demand_load_rate
        return None if rate is None else rate >= 0.5

    def bootstrap_budget(self, manifest_budget: int) -> int:
        """Tokens the bootstrap may take for this student: the manifest's budget, at most
        ``BOOTSTRAP_SHARE`` of the context window, a quarter less when longer bootstraps
        measurably lower the pass rate."""
        budget = manifest_budget
        if self.context_window:
            budget = min(budget, int(self.context_window * BOOTSTRAP_SHARE))
        sens = self.traits.bootstrap_sensitivity
        if sens is not None and sens <= SENSITIVITY_TIGHTEN:
            budget = int(budget * 0.75)
        return max(budget, 200)


# ---------------------------------------------------------------------------- building


def profile_slug(route: str) -> str:
    """File stem for a route: lowercase, runs of other characters as one dash
    (``siliconflow/Qwen/Qwen3.5-27B`` -> ``siliconflow-qwen-qwen3-5-27b``)."""
    slug = re.sub(r"[^a-z0-9]+", "-", route.lower()).strip("-")
    if not slug:
        raise InvalidInputError(f"route {route!r} has no usable characters for a file name")
    return slug


def config_profile(route_name: str, route: ModelRoute, harness: str) -> ModelProfile:
    """A profile from the route's configuration alone (no measured traits)."""
    return ModelProfile(
        route=route_name,
        model=route.model,
        family=route.family,
        context_window=route.context_window,
        quantization=route.quantization,
        harness=harness,
        source="config",
    )


def _mean(xs: Sequence[float]) -> float | None:
    return round(sum(xs) / len(xs), 4) if xs else None


def _bootstrap_tokens(rec: RunRecord) -> int | None:
    for ev in rec.events:
        if isinstance(ev, SkillLoadEvent) and not ev.on_demand:
            return ev.tokens
    return None


def _offered_on_demand(rec: RunRecord) -> bool:
    return any(
        isinstance(ev, MessageEvent) and ev.role == "system" and _INDEX_RE.search(ev.content)
        for ev in rec.events
    )


def _slope(points: list[BootstrapPoint]) -> float | None:
    if len({p.tokens for p in points}) < 2:
        return None
    n = sum(p.runs for p in points)
    mx = sum(p.tokens * p.runs for p in points) / n
    my = sum(p.pass_rate * p.runs for p in points) / n
    sxx = sum(p.runs * (p.tokens - mx) ** 2 for p in points)
    sxy = sum(p.runs * (p.tokens - mx) * (p.pass_rate - my) for p in points)
    return round(1000 * sxy / sxx, 4) if sxx else None


def measure_traits(records: Sequence[RunRecord]) -> MeasuredTraits:
    """Traits of the student from its run records (pure; see :class:`MeasuredTraits`)."""
    recs = [r for r in records if r.agent_role.value == "student"]
    if not recs:
        return MeasuredTraits()
    n = len(recs)
    classes: Counter[str] = Counter()
    for r in recs:
        if r.passed:
            continue
        try:
            classes[diagnose(r, None, None).failure_class.value] += 1
        except InvalidInputError:  # pragma: no cover - a failing run always diagnoses
            continue
    trajs = [Trajectory.from_record(r) for r in recs]
    edited = [t for t in trajs if t.milestones.last_edit is not None]
    skipped = [t for t in edited if t.milestones.verified is None and t.finished_voluntarily]
    offered = [(r, t) for r, t in zip(recs, trajs, strict=True) if _offered_on_demand(r)]
    loaded = [t for _, t in offered if any(p != "SKILL.md" for _, p in t.skill_loads)]
    by_size: dict[int, list[bool]] = {}
    for r in recs:
        tok = _bootstrap_tokens(r)
        if tok is not None:
            by_size.setdefault(50 * round(tok / 50), []).append(r.passed)
    points = [
        BootstrapPoint(tokens=k, runs=len(v), pass_rate=round(sum(v) / len(v), 4))
        for k, v in sorted(by_size.items())
    ]
    pressure = [
        t.max_input_tokens_seen / t.context_window
        for t in trajs
        if t.context_window and t.max_input_tokens_seen
    ]
    return MeasuredTraits(
        runs=n,
        pass_rate=round(sum(r.passed for r in recs) / n, 4),
        avg_steps=_mean([float(r.cost.model_calls) for r in recs]),
        avg_tool_calls=_mean([float(r.cost.tool_calls) for r in recs]),
        failure_classes={k: round(v / n, 4) for k, v in sorted(classes.items())},
        verification_skip_rate=round(len(skipped) / len(edited), 4) if edited else None,
        on_demand_load_rate=round(len(loaded) / len(offered), 4) if offered else None,
        bootstrap_points=points,
        bootstrap_sensitivity=_slope(points),
        context_pressure=_mean(pressure),
    )


def build_profile(
    route_name: str,
    route: ModelRoute,
    harness: str,
    records: Sequence[RunRecord],
    labels: Sequence[str] | None = None,
) -> ModelProfile:
    """The route's config profile plus the traits of ``records`` (its student runs).

    ``labels`` name the records in ``run_ids`` instead of their run ids (the pipeline uses
    run-dir-relative trial paths, so equal runs give byte-equal profiles)."""
    base = config_profile(route_name, route, harness)
    names = list(labels) if labels is not None else [r.run_id for r in records]
    mine = [(n, r) for n, r in zip(names, records, strict=True) if r.model.route == route_name]
    if not mine:
        return base
    return base.model_copy(
        update={
            "source": "runs",
            "traits": measure_traits([r for _, r in mine]),
            "run_ids": sorted(n for n, _ in mine)[:50],
        }
    )


# ---------------------------------------------------------------------------- files


def profile_path(root: Path, route_name: str) -> Path:
    return root / PROFILES_DIR / f"{profile_slug(route_name)}.yaml"


def dump_profile(profile: ModelProfile) -> str:
    data = profile.model_dump(mode="json")
    head = f"# Model profile for {profile.route} (skillci compile profile); revision {profile.revision[:12]}\n"
    return head + yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)


def save_profile(path: Path, profile: ModelProfile) -> None:
    atomic_write_text(path, dump_profile(profile))


def load_profile(path: Path) -> ModelProfile:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("profile not found", file=path) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"invalid YAML: {exc}", file=path) from None
    try:
        profile = ModelProfile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise ConfigError(
            f"{loc}: {err['msg']}", file=path, hint="regenerate it with `skillci compile profile`"
        ) from None
    if profile.schema_version != PROFILE_SCHEMA_VERSION:
        raise ConfigError(
            f"profile schema_version {profile.schema_version}; this skillci reads "
            f"{PROFILE_SCHEMA_VERSION}",
            file=path,
            hint="regenerate it with `skillci compile profile`",
        )
    return profile


def find_profile(route_name: str, roots: Sequence[Path]) -> Path | None:
    """The first ``profiles/<slug>.yaml`` under ``roots`` (in order), or None."""
    for root in roots:
        p = profile_path(root, route_name)
        if p.is_file():
            return p
    return None


SAVED_MODELS: dict[str, type[BaseModel]] = {"model-profile": ModelProfile}

__all__ = [
    "BOOTSTRAP_SHARE",
    "PROFILES_DIR",
    "PROFILE_SCHEMA_VERSION",
    "SAVED_MODELS",
    "BootstrapPoint",
    "MeasuredTraits",
    "ModelProfile",
    "build_profile",
    "config_profile",
    "dump_profile",
    "find_profile",
    "load_profile",
    "measure_traits",
    "profile_path",
    "profile_slug",
    "save_profile",
]
