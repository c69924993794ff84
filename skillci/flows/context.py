"""The repository a command works in: git, state dir, trace store, forge, worktrees."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from filelock import FileLock

from skillci.errors import InvalidInputError
from skillci.forge.base import Forge
from skillci.forge.local import LocalForge
from skillci.forge.select import ForgeChoice, choose_forge
from skillci.fsutil import atomic_write_text
from skillci.skill.package import LEGACY_MANIFEST, MANIFEST, SkillPackage, require_package
from skillci.skill.tokens import known_counts, remember_counts
from skillci.trace.store import TraceStore
from skillci.vcs.git import Git

#: The persisted token-count memo (skillci.skill.tokens), under the state dir.
TOKEN_COUNTS = Path("cache") / "token-counts.json"


@contextmanager
def token_counts(state_dir: Path, *, write: bool = True) -> Iterator[None]:
    """Load the token counts earlier commands saved under ``state_dir``; on exit, save
    them with any new ones (``write``). A missing or unreadable file only costs loading the
    tokenizer (docs/design/268)."""
    path = state_dir / TOKEN_COUNTS
    try:
        data = json.loads(path.read_bytes())
    except (OSError, ValueError):
        data = {}
    before = remember_counts(data) if isinstance(data, dict) else 0
    yield
    counts = known_counts()
    if write and len(counts) > before:
        atomic_write_text(path, json.dumps(counts, sort_keys=True), durable=False)


#: The persisted task-dir hash memo (:func:`task_hash_memo`), under the state dir.
TASK_HASHES = Path("cache") / "task-hashes.json"
#: Files whose attributes shape how a task dir is checked out (eol, filters).
_ATTRIBUTES = (".gitattributes", "evals/.gitattributes", "evals/tasks/.gitattributes")
_HEX = frozenset("0123456789abcdef")
#: Entries kept in the memo file; past it the file starts over (a cache, not a record).
MAX_TASK_HASHES = 20_000


def _sha256_hex(value: object) -> bool:
    return isinstance(value, str) and len(value) == 64 and set(value) <= _HEX


@contextmanager
def task_hash_memo(ctx: RepoContext, sha: str) -> Iterator[dict[str, tuple[str, str]]]:
    """Task id -> (content hash, verifier hash) of the task dirs of ``ctx.worktree(sha)``
    already hashed for the same git tree (and the same ``.gitattributes`` above it), from
    ``<state>/cache/task-hashes.json``. The caller adds the hashes of the tasks it loaded to
    the yielded dict; they are saved on exit. A skillci worktree is a checkout of one commit
    that nothing edits, so equal trees mean equal files (docs/design/269)."""
    git = ctx.git
    attrs = sorted(git.blob_ids(sha, list(_ATTRIBUTES)).items())
    salt = ",".join(f"{p}={b}" for p, b in attrs)
    trees = {
        name: hashlib.sha256(f"{tree}|{salt}".encode()).hexdigest()
        for name, tree in git.subtrees(sha, "evals/tasks").items()
    }
    path = ctx.state_dir / TASK_HASHES
    try:
        saved = json.loads(path.read_bytes())
    except (OSError, ValueError):
        saved = {}
    memo: dict[str, list[str]] = {}
    if isinstance(saved, dict):
        memo = {
            k: v
            for k, v in saved.items()
            if isinstance(v, list) and len(v) == 2 and all(_sha256_hex(h) for h in v)
        }
    known = {tid: (memo[key][0], memo[key][1]) for tid, key in trees.items() if key in memo}
    yield known
    new = {
        trees[tid]: list(hashes)
        for tid, hashes in known.items()
        if tid in trees and trees[tid] not in memo
    }
    if new and not ctx.dry_run:
        keep = memo if len(memo) + len(new) <= MAX_TASK_HASHES else {}
        atomic_write_text(path, json.dumps({**keep, **new}, sort_keys=True), durable=False)


@dataclass
class RepoContext:
    root: Path
    git: Git
    state_dir: Path
    dry_run: bool = False
    forge_choice: ForgeChoice = field(
        default_factory=lambda: ForgeChoice(kind="local", source="default")
    )
    _store: TraceStore | None = field(default=None, repr=False)
    _forge: Forge | None = field(default=None, repr=False)

    @classmethod
    def open(
        cls,
        repo: Path | str = ".",
        *,
        dry_run: bool = False,
        state_dir: Path | None = None,
        forge: str | None = None,
    ) -> RepoContext:
        """The repository at ``repo``; ``forge`` is ``--forge`` (see skillci.forge.select)."""
        git = Git(Path(repo))
        root = git.toplevel()
        env_home = os.environ.get("SKILLCI_HOME")
        sd = state_dir or (Path(env_home) if env_home else root / ".skillci")
        ctx = cls(
            root=root,
            git=Git(root, dry_run=dry_run),
            state_dir=sd,
            dry_run=dry_run,
            forge_choice=choose_forge(forge),
        )
        return ctx

    @property
    def store(self) -> TraceStore:
        if self._store is None:
            self._store = TraceStore(self.state_dir)
        return self._store

    @property
    def forge(self) -> Forge:
        """The forge ``forge_choice`` names (skillci.forge.registry), created once."""
        if self._forge is None:
            if self.forge_choice.kind == "local":  # the common case, without the registry
                self._forge = LocalForge(self.git)
            else:
                from skillci.forge.registry import open_forge

                self._forge = open_forge(self.forge_choice.kind, self.git)
        return self._forge

    def worktree(self, sha: str) -> Path:
        """A detached worktree of ``sha`` inside this repo's git dir (created once, reused).

        Worktrees belong to one repository, so they live under ``.git/skillci/worktrees``
        rather than the (possibly shared) state dir.
        """
        common = Path(self.git.read("rev-parse", "--git-common-dir"))
        if not common.is_absolute():
            common = self.root / common
        path = common / "skillci" / "worktrees" / sha[:16]
        path.parent.mkdir(parents=True, exist_ok=True)
        # git writes the worktree's .git file before it checks the files out: another
        # process must wait for the whole checkout, not trust a half-made worktree
        with FileLock(str(path.parent / f"{sha[:16]}.lock")):
            if not (path / ".git").exists():
                Git(self.root).worktree_add(path, sha)
        return path

    def skill_dir(self, skill: str) -> str:
        """Relative path of a skill package inside the repo: a name or a path."""
        p = Path(skill)
        if (self.root / p / MANIFEST).is_file():
            return (self.root / p).resolve().relative_to(self.root.resolve()).as_posix()
        if (self.root / "skills" / skill / MANIFEST).is_file():
            return f"skills/{skill}"
        if p.is_absolute() and (p / MANIFEST).is_file():
            try:
                return p.resolve().relative_to(self.root.resolve()).as_posix()
            except ValueError:
                pass
        raise InvalidInputError(
            f"no skill package {skill!r} in {self.root}",
            hint="pass skills/<name> or a name under skills/",
        )

    def package_at(self, commit: str, skill_dir: str, *, label: str | None = None) -> SkillPackage:
        """The skill package committed at ``commit`` (read from git objects, not the work
        tree). ``label`` names the commit in the error (a branch name reads better than a sha)."""
        files = self.git.files_at(commit, skill_dir)
        if MANIFEST not in files:
            if LEGACY_MANIFEST in files:
                require_package(files, f"{skill_dir} at {label or commit[:12]}")
            raise InvalidInputError(
                f"{skill_dir} has no {MANIFEST} at {label or commit[:12]}",
                hint="commit the skill package first, or pass the right skill/commit",
            )
        return SkillPackage(files, root=f"{commit[:12]}:{skill_dir}")
