"""All-or-nothing replacement of a package directory on disk (the one I/O module of patch/).

A patch may touch several files; writing them one by one in place would leave a
half-patched skill if the process dies in between. Instead:

1. take a lock (in the temp dir, keyed by the package path) and recover leftovers of
   an earlier crashed transaction;
2. check the directory still holds the package the patch was checked against
   (compare-and-swap on the tree hash);
3. write a journal (``.<name>.skillci-txn.json``), copy the directory to a stage dir
   beside it (``.<name>.skillci-stage-*``; same filesystem), and write the changed files
   into the stage;
4. swap: ``renameat2(RENAME_EXCHANGE)`` exchanges the two directories atomically on
   Linux. Where that is unavailable (other OSes, filesystems without support) the fallback
   is two renames — package -> ``.<name>.skillci-old-*``, stage -> package — with a window
   in which the package path does not exist; ``recover`` closes it on the next run by
   restoring the old tree (or moving a complete stage in);
5. delete the old tree and the journal.

A crash at any point leaves the package fully old or fully new; the next ``commit`` (or
``recover``) cleans up. Tests inject a fault hook that kills the process at each
checkpoint. See docs/design/014-atomic-apply.md.
"""

from __future__ import annotations

import ctypes
import errno
import hashlib
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from filelock import FileLock
from pydantic import BaseModel, Field

from skillci.errors import ConflictError, InvalidInputError
from skillci.fsutil import atomic_write_text, fsync_dir, tree_hash
from skillci.patch.check import CheckReport, check
from skillci.patch.guard import GuardConfig, UntrustedText
from skillci.patch.models import Patch
from skillci.skill.package import SkillPackage, read_tree

TXN_SCHEMA_VERSION = 1
AT_FDCWD = -100
RENAME_EXCHANGE = 1 << 1

Fault = Callable[[str], None]


class Journal(BaseModel):
    """What an in-flight transaction is doing, for recovery after a crash."""

    schema_version: int = TXN_SCHEMA_VERSION
    root: str = Field(description="The package directory.")
    stage: str = Field(
        description="Directory holding the new tree (the old one after an exchange)."
    )
    backup: str | None = Field(
        default=None, description="Where the old tree went (rename fallback)."
    )
    before_hash: str = Field(description="Tree hash of the package before.")
    after_hash: str = Field(description="Tree hash of the package after.")
    method: Literal["exchange", "rename"]


def journal_path(root: Path) -> Path:
    return root.parent / f".{root.name}.skillci-txn.json"


def lock_path(root: Path) -> Path:
    """Lock file in the temp dir (not beside the package: it would show up in git status)."""
    key = hashlib.sha256(os.fsencode(root)).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"skillci-txn-{key}.lock"


def _leftovers(root: Path) -> list[Path]:
    prefixes = (f".{root.name}.skillci-stage-", f".{root.name}.skillci-old-")
    return sorted(p for p in root.parent.iterdir() if p.name.startswith(prefixes) and p.is_dir())


def exchange_supported() -> bool:
    return sys.platform.startswith("linux") and _renameat2() is not None


def _renameat2() -> Callable[..., int] | None:
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:  # pragma: no cover
        return None
    fn = getattr(libc, "renameat2", None)
    if fn is None:  # pragma: no cover - glibc < 2.28
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn  # type: ignore[no-any-return]


def exchange(a: Path, b: Path) -> bool:
    """Atomically exchange two paths; False when the platform/filesystem cannot."""
    fn = _renameat2() if sys.platform.startswith("linux") else None
    if fn is None:
        return False
    if fn(AT_FDCWD, os.fsencode(a), AT_FDCWD, os.fsencode(b), RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EPERM):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _hash_dir(path: Path) -> str | None:
    return tree_hash(read_tree(path).items()) if path.is_dir() else None


def recover(root: Path) -> str | None:
    """Finish or undo a crashed transaction on ``root``; returns what was done, or None."""
    jpath = journal_path(root)
    done: str | None = None
    if jpath.exists():
        try:
            j = Journal.model_validate_json(jpath.read_text(encoding="utf-8"))
        except ValueError:
            j = None
        if j is not None and not root.exists():
            backup = Path(j.backup) if j.backup else None
            stage = Path(j.stage)
            if backup is not None and backup.is_dir():
                os.rename(backup, root)
                done = "rolled back to the old package"
            elif stage.is_dir() and _hash_dir(stage) == j.after_hash:
                os.rename(stage, root)
                done = "rolled forward to the new package"
        elif j is not None:
            now = _hash_dir(root)
            done = (
                "finished an interrupted apply"
                if now == j.after_hash
                else "discarded an interrupted apply"
                if now == j.before_hash
                else "cleaned up an interrupted apply"
            )
    if root.exists():
        for p in _leftovers(root):
            shutil.rmtree(p, ignore_errors=True)
            done = done or "removed leftovers of an interrupted apply"
        if jpath.exists():
            jpath.unlink()
        fsync_dir(root.parent)
    return done


def _write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def commit(
    root: Path,
    before: SkillPackage,
    after: SkillPackage,
    *,
    fault: Fault | None = None,
    use_exchange: bool | None = None,
) -> list[str]:
    """Make the directory ``root`` hold ``after`` instead of ``before``, all or nothing.

    Returns the relative paths that changed. Raises ConflictError when ``root`` no longer
    holds ``before``.
    """
    hit = fault or (lambda _point: None)
    root = Path(os.path.abspath(root))
    if root.is_symlink() or not root.is_dir():
        raise InvalidInputError("the skill package must be a real directory", file=str(root))
    with FileLock(str(lock_path(root))):
        recover(root)
        current = read_tree(root)
        if tree_hash(current.items()) != before.content_hash:
            raise ConflictError(
                "the package changed on disk since the patch was checked",
                file=str(root),
                hint="re-run `skillci patch apply`",
            )
        changed = sorted(
            r
            for r in set(before.files) | set(after.files)
            if before.files.get(r) != after.files.get(r)
        )
        if not changed:
            return []
        method: Literal["exchange", "rename"] = (
            "exchange"
            if (use_exchange if use_exchange is not None else exchange_supported())
            else "rename"
        )
        stage = Path(tempfile.mkdtemp(prefix=f".{root.name}.skillci-stage-", dir=root.parent))
        backup = (
            root.parent / (stage.name.replace("-stage-", "-old-")) if method == "rename" else None
        )
        journal = Journal(
            root=str(root),
            stage=str(stage),
            backup=str(backup) if backup else None,
            before_hash=before.content_hash,
            after_hash=after.content_hash,
            method=method,
        )
        atomic_write_text(journal_path(root), journal.model_dump_json(indent=2))
        hit("journal")
        shutil.copytree(root, stage, symlinks=True, dirs_exist_ok=True)
        executable: frozenset[str] = getattr(after, "executable", frozenset())
        for k, rel in enumerate(changed):
            target = stage / rel
            data = after.files.get(rel)
            if data is None:
                target.unlink()
            else:
                _write(target, data)
                if rel in executable:
                    target.chmod(target.stat().st_mode | 0o111)
            hit(f"write:{k}:{rel}")
        _prune_empty_dirs(stage, changed)
        fsync_dir(stage)
        hit("staged")
        if method == "exchange" and exchange(stage, root):
            old = stage
        else:
            backup = backup or root.parent / stage.name.replace("-stage-", "-old-")
            if method != "rename":
                journal = journal.model_copy(update={"backup": str(backup), "method": "rename"})
                atomic_write_text(journal_path(root), journal.model_dump_json(indent=2))
            os.rename(root, backup)
            hit("moved-old")
            os.rename(stage, root)
            old = backup
        fsync_dir(root.parent)
        hit("exchanged")
        shutil.rmtree(old, ignore_errors=True)
        journal_path(root).unlink()
        fsync_dir(root.parent)
        hit("cleaned")
        return changed


@dataclass(frozen=True)
class DirResult:
    """Outcome of :func:`apply_to_dir`."""

    report: CheckReport
    changed: list[str]
    written: bool


def apply_to_dir(
    root: Path,
    patch: Patch,
    untrusted: Sequence[UntrustedText | str] = (),
    config: GuardConfig | None = None,
    *,
    approved: bool = False,
    dry_run: bool = False,
    fault: Fault | None = None,
    use_exchange: bool | None = None,
) -> DirResult:
    """Check ``patch`` against the package in ``root`` and, when allowed, commit it.

    Allowed: verdict ``pass``, or ``needs-approval`` with ``approved``. A rejected or
    unapproved patch writes nothing; ``dry_run`` reports the files it would change.
    """
    root = Path(os.path.abspath(root))
    recover(root)
    pkg = SkillPackage.from_dir(root)
    report, applied = check(pkg, patch, untrusted, config)
    allowed = report.verdict == "pass" or (report.verdict == "needs-approval" and approved)
    if applied is None or not allowed:
        return DirResult(report, [], False)
    if dry_run:
        return DirResult(report, applied.changed_files, False)
    return DirResult(
        report, commit(root, pkg, applied.after, fault=fault, use_exchange=use_exchange), True
    )


def _prune_empty_dirs(stage: Path, changed: list[str]) -> None:
    """Remove directories that a deletion left empty (e.g. rules/ after its last file)."""
    for rel in changed:
        d = (stage / rel).parent
        while d != stage and d.is_dir() and not any(d.iterdir()):
            d.rmdir()
            d = d.parent
