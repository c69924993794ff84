"""``skillci init``: make an existing repository a skillci repository. Idempotent.

Load: the work tree's files (skipping VCS, caches and the local store), the skill folders
among them (any ``SKILL.md``, :mod:`skillci.skill.discover`). Decide, per target file,
create or keep (never overwrite): each skill's skillci metadata exactly as
``skillci skill import`` would add it (:func:`skillci.skill.porting.import_plain`; the
skill's own files are not touched), the ``evals/`` skeleton with the suites the default
gate needs, ``provider_routes.json``, the ``.gitignore`` entry of the local store, the
pre-commit hook, and the workflow callers. Act: atomic writes (``--dry-run``: none).
A second run finds everything in place and writes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

import skillci.flows.init_files as init_files
from skillci import __version__
from skillci.errors import SkillciError
from skillci.fsutil import atomic_write_bytes
from skillci.providers.routes import ROUTES_FILE
from skillci.skill.discover import SKIPPED_DIRS, skill_dirs
from skillci.skill.models import ReleaseGate
from skillci.skill.package import MANIFEST, read_executables, read_tree
from skillci.skill.porting import import_plain, manifest_text

Action = Literal["create", "update", "keep", "skip"]

#: The release gate ``skillci init`` writes into each new manifest, chosen from
#: ``benchmarks/gate_power.py`` (docs/design/225-init-gate-defaults.md): flaky tasks are
#: not counted as regressions, and up to 10% of the passing tasks may flip. At 20-50 tasks
#: x 3-5 repeats it detects +0.8 log-odds improvements with 76-97% power where the
#: 1%-allowance gate has 56-91% (50 x 3: 90% vs 56%), with the same false-accept rate of
#: real regressions (0-3%). Under 10 passing tasks one regression is over 10% anyway.
INIT_GATE = ReleaseGate(max_regression_rate=0.1)


class InitItem(BaseModel):
    """One file ``skillci init`` considered."""

    path: str = Field(description="Repository-relative path.")
    action: Action = Field(
        description="create (new file), update (appended to), keep (already there), "
        "skip (could not be done; see reason)."
    )
    reason: str = Field(description="Why, in one line.")


class InitResult(BaseModel):
    """What ``skillci init`` did (or, under --dry-run, would do)."""

    root: str = Field(description="Repository root.")
    skills: list[str] = Field(description="Skill folders found (repository-relative).")
    items: list[InitItem] = Field(description="Every file considered, in write order.")
    dry_run: bool = Field(default=False, description="Nothing was written.")

    @property
    def written(self) -> list[str]:
        return [i.path for i in self.items if i.action in ("create", "update")]


def _walk(root: Path) -> list[str]:
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in SKIPPED_DIRS)
        rel = Path(dirpath).relative_to(root)
        out += [(rel / f).as_posix() for f in filenames]
    return out


def _skill_metadata(root: Path, sdir: str) -> tuple[dict[str, bytes], InitItem | None]:
    """The metadata files to add to one skill folder, or why not."""
    folder = root / sdir
    if sdir == ".":
        return {}, InitItem(
            path="SKILL.md",
            action="skip",
            reason="a skill at the repository root is not supported yet (its evals and "
            "workflows would become part of it): move it into a folder, e.g. skills/<name>/",
        )
    if (folder / MANIFEST).is_file():
        return {}, InitItem(path=f"{sdir}/{MANIFEST}", action="keep", reason="already managed")
    try:
        files = read_tree(folder)
        pkg = import_plain(files, executable=read_executables(folder), source=sdir)
    except SkillciError as err:
        return {}, InitItem(path=sdir, action="skip", reason=err.one_line())
    added = {rel: data for rel, data in pkg.files.items() if rel not in files}
    added[MANIFEST] = manifest_text(pkg.manifest.model_copy(update={"release_gate": INIT_GATE}))
    return {f"{sdir}/{rel}": data for rel, data in sorted(added.items())}, None


def _direct_url() -> str | None:
    """The ``direct_url.json`` pip wrote for this skillci (None: installed otherwise)."""
    import importlib.metadata

    try:
        return importlib.metadata.distribution("skillci").read_text("direct_url.json")
    except importlib.metadata.PackageNotFoundError:
        return None


def plan_init(
    root: Path, source: str | None = None
) -> tuple[list[str], list[InitItem], dict[str, bytes]]:
    """(skill folders, items, {path: bytes to write}) — decides, writes nothing."""
    skills = skill_dirs(_walk(root))
    usable = [d for d in skills if d != "."]
    items: list[InitItem] = []
    writes: dict[str, bytes] = {}

    def want(path: str, data: str | bytes, reason: str) -> None:
        if (root / path).exists():
            items.append(InitItem(path=path, action="keep", reason="exists; left as it is"))
            return
        writes[path] = data.encode() if isinstance(data, str) else data
        items.append(InitItem(path=path, action="create", reason=reason))

    for sdir in skills:
        meta, note = _skill_metadata(root, sdir)
        if note is not None:
            items.append(note)
        for path, data in meta.items():
            want(path, data, "skillci metadata (as `skillci skill import` writes it)")
    for name in init_files.SUITES:
        why = "suite proposals learn from" if name == "discovery" else "suite the gate needs"
        want(f"evals/suites/{name}.yaml", init_files.suite_yaml(name), why)
    want("evals/tasks/.gitkeep", "", "tasks live here (`skillci tasks new NAME`)")
    want(ROUTES_FILE, init_files.routes_json(), "sim models + a commented real route")
    gi = root / ".gitignore"
    old = gi.read_text(encoding="utf-8") if gi.is_file() else ""
    if any(ln.strip() in (".skillci", ".skillci/", "/.skillci/") for ln in old.splitlines()):
        items.append(InitItem(path=".gitignore", action="keep", reason=".skillci/ is ignored"))
    else:
        sep = "" if not old or old.endswith("\n") else "\n"
        writes[".gitignore"] = (
            old + sep + "# skillci's local store\n" + init_files.STORE_IGNORE + "\n"
        ).encode()
        items.append(
            InitItem(
                path=".gitignore",
                action="update" if old else "create",
                reason="ignore the local store (.skillci/)",
            )
        )
    pc = root / init_files.PRE_COMMIT_FILE
    if pc.is_file() and init_files.HOOK_ID not in pc.read_text(encoding="utf-8"):
        items.append(
            InitItem(
                path=init_files.PRE_COMMIT_FILE,
                action="skip",
                reason=f"exists without the {init_files.HOOK_ID} hook: add it by hand "
                "(entry: skillci skill lint, language: system)",
            )
        )
    elif usable:
        want(init_files.PRE_COMMIT_FILE, init_files.pre_commit_yaml(usable), "lint on commit")
    src = source or init_files.default_source(__version__, _direct_url())
    for path, text in init_files.workflows(usable, src).items():
        want(path, text, f"caller of skillci's reusable workflow ({src})")
    return skills, items, writes


def init_repo(root: Path, *, dry_run: bool = False, source: str | None = None) -> InitResult:
    skills, items, writes = plan_init(root, source)
    if not dry_run:
        for path, data in writes.items():
            atomic_write_bytes(root / path, data)
    return InitResult(root=str(root), skills=skills, items=items, dry_run=dry_run)
