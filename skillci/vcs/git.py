"""All git reads and writes skillci does, in one class.

Writes never touch the user's working tree or index unless a method says so: commits are
built with plumbing (``hash-object``, ``mktree``/temporary index, ``commit-tree``) and refs
are moved with ``update-ref <ref> <new> <old>`` — a compare-and-swap, so two skillci
processes racing on the same ref fail cleanly instead of overwriting each other.

Every write method honours ``dry_run``: it prints the exact git command it would run and
returns without running it (python-semantic-release's habit).
"""

from __future__ import annotations

import os
import shlex
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from skillci.errors import ConflictError, GitError, InvalidInputError

ZERO_SHA = "0" * 40
BOT_IDENTITY = {
    "GIT_AUTHOR_NAME": "skillci[bot]",
    "GIT_AUTHOR_EMAIL": "skillci@localhost",
    "GIT_COMMITTER_NAME": "skillci[bot]",
    "GIT_COMMITTER_EMAIL": "skillci@localhost",
}


@dataclass(frozen=True)
class TreeEntry:
    mode: str
    type: str
    sha: str
    path: str


class Git:
    """A repository, and the only place skillci runs ``git``."""

    def __init__(self, root: str | Path, *, dry_run: bool = False, echo: bool = False) -> None:
        self.root = Path(root)
        self.dry_run = dry_run
        self.echo = echo
        self.planned: list[str] = []
        if not dry_run:
            self.toplevel()  # fail early with a clear message

    # ---------------------------------------------------------------- plumbing

    def _run(
        self,
        args: Sequence[str],
        *,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        full_env = dict(os.environ)
        full_env.update(env or {})
        try:
            proc = subprocess.run(
                ["git", *args],
                cwd=self.root,
                input=input,
                env=full_env,
                capture_output=True,
                check=False,
                timeout=120,
            )
        except FileNotFoundError:
            raise GitError("git is not installed") from None
        except subprocess.TimeoutExpired:
            raise GitError(f"git {shlex.join(args)} timed out after 120 s") from None
        if check and proc.returncode != 0:
            raise GitError(
                f"git {shlex.join(args)} failed (exit {proc.returncode}): "
                f"{proc.stderr.decode(errors='replace').strip() or proc.stdout.decode(errors='replace').strip()}"
            )
        return proc

    def read(self, *args: str, check: bool = True) -> str:
        """Run a read-only git command and return stdout (stripped)."""
        return self._run(args, check=check).stdout.decode(errors="replace").strip()

    def write(
        self, *args: str, input: bytes | None = None, env: Mapping[str, str] | None = None
    ) -> str:
        """Run a git command that changes the repository (or print it under dry-run)."""
        cmd = "git " + shlex.join(args)
        if self.dry_run:
            self.planned.append(cmd)
            print(f"[dry-run] {cmd}")
            return ""
        if self.echo:
            print(cmd)
        return self._run(args, input=input, env=env).stdout.decode(errors="replace").strip()

    # ---------------------------------------------------------------- reads

    def toplevel(self) -> Path:
        if not self.root.is_dir():
            raise InvalidInputError(
                f"{self.root} is not a directory", hint="pass --repo with your repository's path"
            )
        proc = self._run(["rev-parse", "--show-toplevel"], check=False)
        if proc.returncode != 0:
            stderr = proc.stderr.decode(errors="replace")
            if "not a git repository" in stderr:  # the user's input, not git failing
                raise InvalidInputError(
                    f"{self.root} is not inside a git repository",
                    hint="run `git init` or cd into your repo (or pass --repo)",
                )
            raise GitError(
                f"git rev-parse in {self.root} failed: {stderr.strip()}",
                hint="check that git works here (safe.directory, permissions)",
            )
        return Path(proc.stdout.decode().strip())

    def rev(self, ref: str) -> str | None:
        """The commit sha ``ref`` points to, or None if it does not exist."""
        proc = self._run(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def ref_target(self, ref: str) -> str | None:
        """The object a ref points to (tag object for annotated tags), or None."""
        proc = self._run(["rev-parse", "--verify", "--quiet", ref], check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def refs(self, prefix: str) -> dict[str, str]:
        out = self.read("for-each-ref", "--format=%(refname) %(objectname)", prefix)
        return dict(line.split(" ", 1) for line in out.splitlines() if line)

    def show_file(self, commit: str, path: str) -> bytes | None:
        proc = self._run(["cat-file", "blob", f"{commit}:{path}"], check=False)
        return proc.stdout if proc.returncode == 0 else None

    def ls_tree(self, commit: str, prefix: str = "") -> list[TreeEntry]:
        args = ["ls-tree", "-r", "-z", commit]
        if prefix:
            args += ["--", prefix]
        raw = self._run(args).stdout.decode(errors="surrogateescape")
        out = []
        for rec in raw.split("\0"):
            if not rec:
                continue
            meta, path = rec.split("\t", 1)
            mode, typ, sha = meta.split(" ")
            out.append(TreeEntry(mode, typ, sha, path))
        return out

    def files_at(self, commit: str, prefix: str) -> dict[str, bytes]:
        """{path relative to prefix: bytes} of every blob under ``prefix`` at ``commit``
        (two git processes however many files: ``ls-tree`` and one ``cat-file --batch``)."""
        pre = prefix.rstrip("/") + "/"
        blobs = [
            e for e in self.ls_tree(commit, pre) if e.type == "blob" and e.path.startswith(pre)
        ]
        if not blobs:
            return {}
        data = self._run(
            ["cat-file", "--batch"], input="".join(f"{e.sha}\n" for e in blobs).encode()
        )
        out: dict[str, bytes] = {}
        pos = 0
        raw = data.stdout
        for e in blobs:  # "<sha> blob <size>\n<bytes>\n" per object, in input order
            nl = raw.index(b"\n", pos)
            header = raw[pos:nl].split()
            if len(header) != 3 or header[1] != b"blob":
                raise GitError(f"git cat-file --batch: unexpected {raw[pos:nl]!r} for {e.path}")
            size = int(header[2])
            out[e.path[len(pre) :]] = raw[nl + 1 : nl + 1 + size]
            pos = nl + 1 + size + 1
        return out

    def subtrees(self, commit: str, folder: str) -> dict[str, str]:
        """{name: tree id} of the directories directly inside ``folder`` at ``commit``."""
        raw = self._run(["ls-tree", "-z", commit, "--", folder.rstrip("/") + "/"], check=False)
        out: dict[str, str] = {}
        for rec in raw.stdout.decode(errors="surrogateescape").split("\0"):
            meta, _, path = rec.partition("\t")
            parts = meta.split(" ")
            if len(parts) == 3 and parts[1] == "tree":
                out[path.rsplit("/", 1)[-1]] = parts[2]
        return out

    def blob_ids(self, commit: str, paths: Sequence[str]) -> dict[str, str]:
        """{path: blob id} of those of ``paths`` that are files at ``commit``."""
        raw = self._run(["ls-tree", "-z", commit, "--", *paths], check=False)
        out: dict[str, str] = {}
        for rec in raw.stdout.decode(errors="surrogateescape").split("\0"):
            meta, _, path = rec.partition("\t")
            parts = meta.split(" ")
            if len(parts) == 3 and parts[1] == "blob":
                out[path] = parts[2]
        return out

    def changed_paths(self, base: str, head: str) -> list[str]:
        return [p for p in self.read("diff", "--name-only", "-z", base, head).split("\0") if p]

    def merge_base(self, a: str, b: str) -> str | None:
        proc = self._run(["merge-base", a, b], check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def current_branch(self) -> str | None:
        proc = self._run(["symbolic-ref", "--quiet", "--short", "HEAD"], check=False)
        return proc.stdout.decode().strip() or None if proc.returncode == 0 else None

    def is_clean(self) -> bool:
        return self.read("status", "--porcelain", "--untracked-files=no") == ""

    # ---------------------------------------------------------------- object writes

    def hash_blob(self, data: bytes) -> str:
        if self.dry_run:
            return ZERO_SHA
        return self._run(["hash-object", "-w", "--stdin"], input=data).stdout.decode().strip()

    def tree_with(
        self,
        base_commit: str | None,
        changes: Mapping[str, bytes | None],
        *,
        executable: frozenset[str] = frozenset(),
    ) -> str:
        """A tree = ``base_commit``'s tree with files replaced (bytes) or removed (None)."""
        if self.dry_run:
            return ZERO_SHA
        with tempfile.TemporaryDirectory(prefix="skillci-index-") as tmp:
            env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
            if base_commit:
                self._run(["read-tree", base_commit], env=env)
            for path, data in sorted(changes.items()):
                if data is None:
                    self._run(["update-index", "--force-remove", "--", path], env=env)
                else:
                    sha = self.hash_blob(data)
                    mode = "100755" if path in executable else "100644"
                    self._run(
                        ["update-index", "--add", "--cacheinfo", f"{mode},{sha},{path}"], env=env
                    )
            return self._run(["write-tree"], env=env).stdout.decode().strip()

    def commit_tree(
        self, tree: str, parents: Sequence[str], message: str, *, bot: bool = False
    ) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        if self.dry_run:
            self.write(*args, "-m", message.splitlines()[0] if message else "")
            return ZERO_SHA
        env = BOT_IDENTITY if bot or not self._has_identity() else {}
        return self._run(args, input=message.encode(), env=env).stdout.decode().strip()

    def _has_identity(self) -> bool:
        if os.environ.get("GIT_COMMITTER_NAME") and os.environ.get("GIT_COMMITTER_EMAIL"):
            return True
        return bool(self.read("config", "user.email", check=False))

    # ---------------------------------------------------------------- ref writes (CAS)

    def update_ref(self, ref: str, new: str, old: str | None, *, reason: str = "skillci") -> None:
        """Move ``ref`` to ``new`` only if it is at ``old`` (None: must not exist)."""
        args = ["update-ref", "-m", reason, ref, new, old or ZERO_SHA]
        if self.dry_run:
            self.write(*args)
            return
        proc = self._run(args, check=False)
        if proc.returncode != 0:
            current = self.ref_target(ref)
            if current != (old or None):
                raise ConflictError(
                    f"{ref} moved concurrently (expected {old or 'absent'}, found {current or 'absent'})"
                )
            raise GitError(
                f"git update-ref {ref} failed: {proc.stderr.decode(errors='replace').strip()}"
            )

    def update_refs(
        self, updates: Sequence[tuple[str, str | None, str | None]], *, reason: str = "skillci"
    ) -> None:
        """Move several refs at once, all or none: ``(ref, new, old)`` with ``new`` None to
        delete and ``old`` None for "must not exist" (one ``update-ref --stdin`` transaction)."""
        lines = []
        for ref, new, old in updates:
            if new is None and old is None:
                lines.append(f"verify {ref} {ZERO_SHA}")
            elif new is None:
                lines.append(f"delete {ref} {old}")
            elif new == old:
                lines.append(f"verify {ref} {old}")
            else:
                lines.append(f"update {ref} {new} {old or ZERO_SHA}")
        script = "\n".join(lines) + "\n"
        if self.dry_run:
            self.write("update-ref", "-m", reason, "--stdin")
            for line in lines:
                print(f"[dry-run]   {line}")
            return
        proc = self._run(
            ["update-ref", "-m", reason, "--stdin"], input=script.encode(), check=False
        )
        if proc.returncode != 0:
            moved = [ref for ref, _new, old in updates if self.ref_target(ref) != (old or None)]
            if moved:
                raise ConflictError(f"{', '.join(moved)} moved concurrently; nothing was changed")
            raise GitError(
                f"git update-ref --stdin failed: {proc.stderr.decode(errors='replace').strip()}"
            )

    def delete_ref(self, ref: str, old: str | None = None) -> None:
        args = ["update-ref", "-d", ref] + ([old] if old else [])
        if self.dry_run:
            self.write(*args)
            return
        proc = self._run(args, check=False)
        if proc.returncode != 0:
            raise ConflictError(
                f"could not delete {ref}: {proc.stderr.decode(errors='replace').strip()}"
            )

    def tag_annotated(self, name: str, commit: str, message: str) -> str:
        """Create annotated tag ``name`` on ``commit`` (fails if it exists). Returns tag sha."""
        if self.dry_run:
            self.write("tag", "-a", name, commit, "-m", message.splitlines()[0] if message else "")
            return ZERO_SHA
        tagger = BOT_IDENTITY if not self._has_identity() else {}
        self._run(["tag", "-a", "-F", "-", name, commit], input=message.encode(), env=tagger)
        return self.ref_target(f"refs/tags/{name}") or ""

    def merge_tree(self, ours: str, theirs: str) -> str | None:
        """Three-way merge (git finds the base) without a worktree; None when it conflicts."""
        proc = self._run(["merge-tree", "--write-tree", ours, theirs], check=False)
        if proc.returncode == 0:
            return proc.stdout.decode().split("\n", 1)[0].strip()
        if proc.returncode == 1:
            return None
        raise GitError(f"git merge-tree failed: {proc.stderr.decode(errors='replace').strip()}")

    def tree_of(self, commit: str) -> str:
        return self.read("rev-parse", f"{commit}^{{tree}}")

    def advance_branch(self, branch: str, new: str, old: str) -> None:
        """Move ``branch`` from ``old`` to ``new``; updates the worktree if it is checked out."""
        if self.current_branch() == branch and not self.dry_run:
            if not self.is_clean():
                raise GitError(
                    f"{branch} is checked out with uncommitted changes",
                    hint="commit or stash them, or check out another branch, then retry",
                )
            if self.rev("HEAD") != old:
                raise ConflictError(f"{branch} moved concurrently (expected {old})")
            self.write("merge", "--ff-only", "--quiet", new)
            return
        self.update_ref(f"refs/heads/{branch}", new, old, reason=f"skillci: advance {branch}")

    def worktree_add(self, path: Path, commit: str) -> None:
        self.write("worktree", "add", "--detach", "--force", str(path), commit)

    def worktree_remove(self, path: Path) -> None:
        self.write("worktree", "remove", "--force", str(path))


def init_committed(root: Path, message: str, *, name: str, email: str) -> None:
    """``git init -b main`` in ``root`` and commit everything in it as ``name <email>``
    (the scratch repositories of ``skillci demo`` and ``skillci bench``)."""
    ident = ["-c", f"user.name={name}", "-c", f"user.email={email}"]
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], [*ident, "commit", "-qm", message]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)
