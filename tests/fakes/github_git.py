"""Real git on the fake GitHub's bare repository: everything the fake knows about code."""

from __future__ import annotations

import os
import subprocess
import tempfile
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from pathlib import Path

ZERO = "0" * 40


class GitFailed(RuntimeError):
    pass


class BareRepo:
    """A bare repository driven with plumbing only (no worktree exists)."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def run(
        self,
        *args: str,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
        check: bool = True,
    ) -> subprocess.CompletedProcess[bytes]:
        full = dict(os.environ)
        full.update(env or {})
        proc = subprocess.run(
            ["git", *args], cwd=self.path, input=input, env=full, capture_output=True, check=False
        )
        if check and proc.returncode != 0:
            raise GitFailed(f"git {' '.join(args)}: {proc.stderr.decode(errors='replace')}")
        return proc

    def out(self, *args: str, check: bool = True, input: bytes | None = None) -> str:
        return self.run(*args, check=check, input=input).stdout.decode(errors="replace").strip()

    # ------------------------------------------------------------------ reads

    def resolve(self, name: str) -> str | None:
        """The object ``name`` names (a ref, a sha), or None."""
        p = self.run("rev-parse", "--verify", "--quiet", name, check=False)
        return p.stdout.decode().strip() or None if p.returncode == 0 else None

    def commit_of(self, name: str) -> str | None:
        return self.resolve(f"{name}^{{commit}}")

    def obj_type(self, sha: str) -> str | None:
        p = self.run("cat-file", "-t", sha, check=False)
        return p.stdout.decode().strip() if p.returncode == 0 else None

    def is_ancestor(self, a: str, b: str) -> bool:
        return self.run("merge-base", "--is-ancestor", a, b, check=False).returncode == 0

    def merge_base(self, a: str, b: str) -> str | None:
        p = self.run("merge-base", a, b, check=False)
        return p.stdout.decode().strip() or None if p.returncode == 0 else None

    def raw_object(self, kind: str, sha: str) -> str:
        return self.run("cat-file", kind, sha).stdout.decode(errors="replace")

    def diff_entries(self, base: str, head: str) -> list[dict[str, object]]:
        """``git diff --raw`` + ``--numstat`` from ``base`` to ``head`` (no rename detection)."""
        raw = self.run("diff", "--raw", "-z", "--no-renames", "--no-abbrev", base, head).stdout
        parts = raw.decode(errors="surrogateescape").split("\0")
        entries: dict[str, dict[str, object]] = {}
        i = 0
        while i + 1 < len(parts) and parts[i]:
            meta, path = parts[i], parts[i + 1]
            _, _, old_sha, new_sha, status = meta.lstrip(":").split(" ")
            entries[path] = {"status": status[0], "old": old_sha, "new": new_sha}
            i += 2
        num = self.run("diff", "--numstat", "-z", "--no-renames", base, head).stdout
        for rec in num.decode(errors="surrogateescape").split("\0"):
            if not rec:
                continue
            adds, dels, path = rec.split("\t", 2)
            if path in entries:
                entries[path]["additions"] = 0 if adds == "-" else int(adds)
                entries[path]["deletions"] = 0 if dels == "-" else int(dels)
        return [{"path": p, **e} for p, e in sorted(entries.items())]

    def ls_tree(self, tree: str) -> list[dict[str, str]]:
        out = []
        for rec in self.out("ls-tree", "-z", tree).split("\0"):
            if not rec:
                continue
            meta, path = rec.split("\t", 1)
            mode, typ, sha = meta.split(" ")
            out.append({"path": path, "mode": mode, "type": typ, "sha": sha})
        return out

    # ------------------------------------------------------------------ writes

    def update_ref(self, ref: str, new: str, old: str | None) -> bool:
        """Compare-and-swap; False when ``ref`` was not at ``old`` (None: absent)."""
        p = self.run("update-ref", ref, new, old or ZERO, check=False)
        return p.returncode == 0

    def delete_ref(self, ref: str) -> bool:
        return self.run("update-ref", "-d", ref, check=False).returncode == 0

    def hash_blob(self, data: bytes) -> str:
        return self.out("hash-object", "-w", "--stdin", input=data)

    def tree_with(self, base_tree: str | None, entries: list[tuple[str, str, str | None]]) -> str:
        """``base_tree`` with ``(path, mode, sha|None)`` entries applied (None removes)."""
        with tempfile.TemporaryDirectory(prefix="fake-gh-index-") as tmp:
            env = {"GIT_INDEX_FILE": os.path.join(tmp, "index")}
            if base_tree:
                self.run("read-tree", base_tree, env=env)
            # --index-info works without a worktree; mode 0 removes the path
            info = "".join(
                f"{mode} {sha}\t{path}\n" if sha is not None else f"0 {ZERO}\t{path}\n"
                for path, mode, sha in entries
            )
            if info:
                self.run("update-index", "--index-info", input=info.encode(), env=env)
            return self.run("write-tree", env=env).stdout.decode().strip()

    def commit_tree(
        self,
        tree: str,
        parents: list[str],
        message: str,
        author: tuple[str, str, str],
        committer: tuple[str, str, str],
    ) -> str:
        args = ["commit-tree", tree]
        for p in parents:
            args += ["-p", p]
        env = {
            "GIT_AUTHOR_NAME": author[0],
            "GIT_AUTHOR_EMAIL": author[1],
            "GIT_AUTHOR_DATE": author[2],
            "GIT_COMMITTER_NAME": committer[0],
            "GIT_COMMITTER_EMAIL": committer[1],
            "GIT_COMMITTER_DATE": committer[2],
        }
        return self.run(*args, input=message.encode(), env=env).stdout.decode().strip()

    def merge_tree(self, ours: str, theirs: str) -> str | None:
        p = self.run("merge-tree", "--write-tree", ours, theirs, check=False)
        if p.returncode == 0:
            return p.stdout.decode().split("\n", 1)[0].strip()
        if p.returncode == 1:
            return None
        raise GitFailed(p.stderr.decode(errors="replace"))

    def mktag(self, obj: str, typ: str, name: str, tagger: str, message: str) -> str:
        text = f"object {obj}\ntype {typ}\ntag {name}\ntagger {tagger}\n\n{message}"
        return self.out("mktag", input=text.encode())


# ---------------------------------------------------------------------- dates


def iso_to_git(value: str) -> str:
    """An ISO 8601 date as git's internal ``<epoch> <+hhmm>`` (keeps the offset)."""
    dt = datetime.fromisoformat(value.replace("Z", "+00:00"))
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=UTC)
    off = dt.utcoffset() or timedelta(0)
    minutes = int(off.total_seconds() // 60)
    sign = "+" if minutes >= 0 else "-"
    return f"{int(dt.timestamp())} {sign}{abs(minutes) // 60:02d}{abs(minutes) % 60:02d}"


def git_to_iso(epoch: str, tz: str) -> str:
    """git's ``<epoch> <+hhmm>`` as GitHub prints it: UTC with a ``Z``."""
    del tz  # GitHub answers in UTC
    return datetime.fromtimestamp(int(epoch), UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_ident(line: str) -> tuple[str, str, str, str]:
    """``Name <email> epoch tz`` -> (name, email, epoch, tz)."""
    name, rest = line.split(" <", 1)
    email, rest = rest.split("> ", 1)
    epoch, tz = rest.split(" ")
    return name, email, epoch, tz


def parse_commit(raw: str) -> dict[str, object]:
    head, _, message = raw.partition("\n\n")
    info: dict[str, object] = {"parents": [], "message": message}
    for line in head.splitlines():
        key, _, value = line.partition(" ")
        if key == "parent":
            info["parents"].append(value)  # type: ignore[attr-defined]
        elif key in ("tree", "author", "committer"):
            info[key] = value
    return info


def parse_tag(raw: str) -> dict[str, str]:
    head, _, message = raw.partition("\n\n")
    info = {"message": message}
    for line in head.splitlines():
        key, _, value = line.partition(" ")
        info[key] = value
    return info


def now_git() -> str:
    return iso_to_git(datetime.now(UTC).isoformat())
