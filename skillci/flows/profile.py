"""``skillci compile profile``: the student's route config plus traits measured from its
runs in the trace store (docs/design/100); ``--profile`` files for ``compile static``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillci.compile.profile import (
    ModelProfile,
    build_profile,
    dump_profile,
    load_profile,
    profile_path,
    save_profile,
)
from skillci.providers.routes import resolve_route


@dataclass(frozen=True)
class ProfileBuilt:
    path: Path
    profile: ModelProfile
    written: bool


def build_student_profile(
    model: str,
    harness: str,
    *,
    root: Path,
    from_store: bool = False,
    home: Path | None = None,
    out: Path | None = None,
    dry_run: bool = False,
) -> ProfileBuilt:
    """Build the profile of route ``model`` (traits from the store's student runs with
    ``from_store``) and save it at ``out`` or ``profiles/<route slug>.yaml`` under ``root``."""
    route = resolve_route(model)
    records = []
    if from_store:
        from skillci.trace.store import TraceStore

        records = TraceStore(home).records(model_route=model, agent_role="student")
    prof = build_profile(model, route, harness, records)
    path = out or profile_path(root, model)
    if not dry_run:
        save_profile(path, prof)
    return ProfileBuilt(path, prof, not dry_run)


__all__ = ["ProfileBuilt", "build_student_profile", "dump_profile", "load_profile"]
