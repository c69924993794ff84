"""File operations confined to one trial workspace.

Paths may be relative (to the workspace) or absolute under the workspace's mount point
(``/app``, or the task's working directory under the Docker runner: how the shell sees it). Anything that resolves outside the workspace — ``..``, an
absolute path elsewhere, a symlink pointing out — is refused with a tool error, never
followed.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path, PurePosixPath
from typing import Protocol

WORKSPACE_MOUNT = "/app"
SKIP_DIRS = frozenset({".git", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache"})
MAX_LIST = 500
MAX_HITS = 100


class ToolError(Exception):
    """A tool call the agent got wrong (bad path, no match): reported back, not raised on."""


class Files(Protocol):
    """The file tools' view of a workspace: this host's files (:class:`Workspace`), or files
    reached through the trial's shell (:class:`~skillci.agents.shellfiles.ShellFiles`)."""

    mount: str

    def read(self, path: str) -> str: ...
    def write(self, path: str, content: str) -> int: ...
    def replace(self, path: str, old: str, new: str) -> int: ...
    def files(self, path: str = ".") -> list[str]: ...
    def search(self, pattern: str, path: str = ".") -> list[str]: ...


def mount_relative(path: str, mount: str) -> PurePosixPath:
    """A tool's ``path`` relative to the workspace: as given, or an absolute path under
    ``mount`` (how the shell sees the workspace) made relative; elsewhere: a tool error."""
    if not isinstance(path, str) or not path.strip():
        raise ToolError("path must be a non-empty string")
    p = PurePosixPath(path.strip())
    if p.is_absolute():
        try:
            return p.relative_to(mount)
        except ValueError:
            raise ToolError(f"{path}: outside the workspace {mount}") from None
    return p


def replace_once(
    read: Callable[[str], str], write: Callable[[str, str], int], path: str, old: str, new: str
) -> int:
    """Replace the one occurrence of ``old`` in ``path``; returns the 1-based line of the
    change (``apply_patch``, whatever holds the files)."""
    text = read(path)
    if not old:
        raise ToolError("old must be non-empty (use write_file to create a file)")
    n = text.count(old)
    if n != 1:
        raise ToolError(f"{path}: old text found {n} times; it must match exactly once")
    at = text.index(old)
    write(path, text[:at] + new + text[at + len(old) :])
    return text.count("\n", 0, at) + 1


class Workspace:
    def __init__(self, root: Path, mount: str = WORKSPACE_MOUNT) -> None:
        self.root = root.resolve()
        self.mount = mount

    def resolve(self, path: str) -> Path:
        full = (self.root / mount_relative(path, self.mount)).resolve()
        if full != self.root and self.root not in full.parents:
            raise ToolError(f"{path}: outside the workspace")
        return full

    def rel(self, full: Path) -> str:
        return full.relative_to(self.root).as_posix() or "."

    def read(self, path: str) -> str:
        full = self.resolve(path)
        if not full.is_file():
            raise ToolError(f"{path}: no such file")
        return full.read_bytes().decode("utf-8", errors="replace")

    def write(self, path: str, content: str) -> int:
        full = self.resolve(path)
        if full.is_dir():
            raise ToolError(f"{path}: is a directory")
        full.parent.mkdir(parents=True, exist_ok=True)
        data = content.encode("utf-8")
        full.write_bytes(data)
        return len(data)

    def replace(self, path: str, old: str, new: str) -> int:
        """Replace the one occurrence of ``old``; returns the 1-based line of the change."""
        return replace_once(self.read, self.write, path, old, new)

    def files(self, path: str = ".") -> list[str]:
        base = self.resolve(path)
        if base.is_file():
            return [self.rel(base)]
        out: list[str] = []
        for dirpath, dirnames, filenames in os.walk(base):
            dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
            for name in sorted(filenames):
                out.append(self.rel(Path(dirpath) / name))
                if len(out) >= MAX_LIST:
                    return out
        return out

    def search(self, pattern: str, path: str = ".") -> list[str]:
        if not pattern:
            raise ToolError("pattern must be non-empty")
        hits: list[str] = []
        for rel in self.files(path):
            try:
                text = (self.root / rel).read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            for i, line in enumerate(text.splitlines(), 1):
                if pattern in line:
                    hits.append(f"{rel}:{i}: {line.strip()[:200]}")
                    if len(hits) >= MAX_HITS:
                        return hits
        return hits


__all__ = [
    "MAX_HITS",
    "MAX_LIST",
    "SKIP_DIRS",
    "WORKSPACE_MOUNT",
    "Files",
    "ToolError",
    "Workspace",
    "mount_relative",
    "replace_once",
]
