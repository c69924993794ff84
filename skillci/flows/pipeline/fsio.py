"""File-system helpers of the compile stages: skill inputs, atomic directory publish,
run-record loading.

- :func:`load_skill_input` takes a package dir, a plain skill folder, or a folder holding
  exactly one skill (a task's ``environment/skills``) and gives a package (plain skills
  are imported byte-exact, see ``skillci.skill.porting``).
- :func:`publish_tree` replaces a directory with new contents all at once: write a
  stage dir beside it, then exchange the two (``renameat2``) or, where that is
  unavailable, rename the old away and the new in. Readers see the old tree or the new
  one; leftovers of a crash are removed by the next publish.
- :func:`load_records` reads run records from a directory (``record.json`` of trial dirs,
  any ``*.json`` that is a RunRecord, else BenchFlow rollouts or Harbor trials through
  ``skillci.trace.importers``), or from the trace store with
  ``store:task=<id>[,skill=<hash>][,model=<route>]``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Mapping
from pathlib import Path

from pydantic import ValidationError

from skillci.errors import InvalidInputError, SkillFormatError
from skillci.fsutil import fsync_dir
from skillci.patch.transaction import exchange
from skillci.skill.package import MANIFEST, SKILL_MD, SkillPackage, read_executables, read_tree
from skillci.skill.porting import import_plain
from skillci.trace.models import RunRecord, SkillRef

STORE_PREFIX = "store:"


def find_skill_folder(path: Path) -> Path:
    """The one skill folder at ``path``: itself, or its single child holding SKILL.md."""
    if not path.is_dir():
        raise InvalidInputError("not a directory", file=path, hint="pass a skill or package dir")
    if (path / SKILL_MD).is_file() or (path / MANIFEST).is_file():
        return path
    kids = sorted(d for d in path.iterdir() if d.is_dir() and (d / SKILL_MD).is_file())
    if len(kids) == 1:
        return kids[0]
    if not kids:
        raise SkillFormatError(
            "no SKILL.md here or in a subfolder",
            file=path,
            hint="point at a skill folder, a package, or a task's environment/skills",
        )
    raise SkillFormatError(
        f"{len(kids)} skills found ({', '.join(k.name for k in kids)}); expected exactly one",
        file=path,
        hint=f"pass {path}/<name>",
    )


def load_skill_input(
    path: Path, *, model: str | None = None, harness: str = "any", source: str | None = None
) -> tuple[SkillPackage, bool]:
    """(package, was_plain). A plain skill is imported (files byte-exact + a manifest)."""
    folder = find_skill_folder(path)
    if (folder / MANIFEST).is_file():
        return SkillPackage.from_dir(folder), False
    fmt = (
        "skillsbench"
        if folder.parent.name == "skills" and folder.parent.parent.name == "environment"
        else "anthropic"
    )
    pkg = import_plain(
        read_tree(folder),
        executable=read_executables(folder),
        source=source or str(folder),
        fmt=fmt,
        model=model,
        harness=harness,
    )
    return pkg, True


def clean_leftovers(dest: Path) -> None:
    if not dest.parent.is_dir():
        return
    for p in dest.parent.iterdir():
        if p.name.startswith((f".{dest.name}.stage-", f".{dest.name}.old-")) and p.is_dir():
            shutil.rmtree(p, ignore_errors=True)


def publish_tree(
    dest: Path, files: Mapping[str, bytes], executable: frozenset[str] = frozenset()
) -> None:
    """Make ``dest`` hold exactly ``files``, atomically (see the module docstring)."""
    dest = Path(os.path.abspath(dest))
    dest.parent.mkdir(parents=True, exist_ok=True)
    clean_leftovers(dest)
    stage = Path(tempfile.mkdtemp(prefix=f".{dest.name}.stage-", dir=dest.parent))
    for rel, data in sorted(files.items()):
        target = stage / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        with open(target, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        if rel in executable:
            target.chmod(target.stat().st_mode | 0o111)
    fsync_dir(stage)
    if not dest.exists():
        os.rename(stage, dest)
    elif exchange(stage, dest):
        shutil.rmtree(stage, ignore_errors=True)
    else:
        old = dest.parent / stage.name.replace(".stage-", ".old-")
        os.rename(dest, old)
        os.rename(stage, dest)
        shutil.rmtree(old, ignore_errors=True)
    fsync_dir(dest.parent)


def publish_package(dest: Path, pkg: SkillPackage) -> None:
    publish_tree(dest, dict(pkg.files), pkg.executable)


def tree_matches(dest: Path, content_hash: str) -> bool:
    """Whether ``dest`` holds a package with this content hash."""
    if not (dest / MANIFEST).is_file():
        return False
    try:
        return SkillPackage.from_dir(dest).content_hash == content_hash
    except SkillFormatError:
        return False


def _parse_store_query(spec: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for part in spec[len(STORE_PREFIX) :].split(","):
        if not part.strip():
            continue
        key, sep, value = part.partition("=")
        if not sep or key not in ("task", "skill", "model"):
            raise InvalidInputError(
                f"bad trace-store query part {part!r}",
                hint="use store:task=<id>[,skill=<hash>][,model=<route>]",
            )
        out[key] = value
    if "task" not in out:
        raise InvalidInputError("a trace-store query needs task=<id>", hint="store:task=<id>")
    return out


def _import_jobs(root: Path, skill: SkillRef | None) -> list[tuple[str, RunRecord]]:
    """BenchFlow rollouts, else Harbor trials, under ``root`` (their importers)."""
    from skillci.trace.importers import benchflow, harbor

    rollouts = benchflow.find_rollouts(root)
    if rollouts:
        return [
            (d.relative_to(root).as_posix() or d.name, benchflow.import_rollout(d, skill=skill))
            for d in rollouts
        ]
    trials = harbor.find_trials(root)
    return [
        (d.relative_to(root).as_posix() or d.name, harbor.import_trial(d, skill=skill))
        for d in trials
    ]


def load_records(spec: str | Path, *, skill: SkillRef | None = None) -> list[tuple[str, RunRecord]]:
    """(label, record) pairs, sorted by label (see the module docstring).

    ``skill`` is the identity given to records imported from BenchFlow/Harbor job dirs
    (those do not say which skill package ran; the caller's ``--skill`` does)."""
    text = str(spec)
    if text.startswith(STORE_PREFIX):
        from skillci.trace.store import TraceStore

        q = _parse_store_query(text)
        store = TraceStore()
        recs = store.records(
            task_id=q["task"],
            skill_hash=q.get("skill"),
            model_route=q.get("model"),
            agent_role="student",
            newest_first=False,
        )
        return [(r.run_id, r) for r in recs]
    root = Path(spec)
    if not root.is_dir():
        raise InvalidInputError(
            "traces dir does not exist", file=root, hint="pass a dir of run records"
        )
    out: list[tuple[str, RunRecord]] = []
    for p in sorted(root.rglob("*.json")):
        if ".incomplete" in p.relative_to(root).parts:
            continue
        if p.name != "record.json" and p.parent.name in ("logs", "agent", "verifier"):
            continue
        try:
            rec = RunRecord.model_validate_json(p.read_bytes())
        except (ValidationError, ValueError, OSError):
            continue
        if p.name == "record.json" and not (p.parent / "trial.json").is_file():
            continue  # an incomplete trial dir
        label = p.parent.relative_to(root).as_posix() if p.name == "record.json" else p.stem
        out.append((label or p.stem, rec))
    if not out:
        out = _import_jobs(root, skill)
    if not out:
        raise InvalidInputError(
            f"no run records under {root}",
            file=root,
            hint="pass trial dirs (record.json + trial.json), RunRecord JSON files, or "
            "BenchFlow / Harbor job dirs",
        )
    return sorted(out, key=lambda x: x[0])


__all__ = [
    "STORE_PREFIX",
    "clean_leftovers",
    "find_skill_folder",
    "load_records",
    "load_skill_input",
    "publish_package",
    "publish_tree",
    "tree_matches",
]
