"""The file tools over the trial's shell: a workspace that is not on this host.

When the workspace lives in a remote container (a Harbor environment: the agent loop runs on
this host, its commands in the trial's container), ``read_file``, ``write_file``,
``apply_patch``, ``list_files`` and ``search_code`` run as POSIX shell commands through the
same :class:`~skillci.agents.base.Shell` as ``run`` (coreutils' ``base64``, ``find``,
``grep``). They answer what :class:`~skillci.agents.workspace.Workspace` answers for the same
files: the same paths (relative to the mount, in ``os.walk``'s order), the same errors, the
same caps. Paths are confined lexically (``..`` and absolute paths outside the mount are
refused); a symlink pointing out is not detected — the container is the sandbox, and ``run``
reaches the same files anyway.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
import shlex

from skillci.agents.base import Shell
from skillci.agents.workspace import (
    MAX_HITS,
    MAX_LIST,
    SKIP_DIRS,
    ToolError,
    mount_relative,
    replace_once,
)

#: Base64 characters per write command (a command line's argument stays far under 128 KiB).
CHUNK = 60_000
#: Seconds a file command may take.
FILE_TIMEOUT = 60.0
_PRUNE = " -o ".join(f"-name {shlex.quote(d)}" for d in sorted(SKIP_DIRS))


def walk_order(rel: str) -> tuple[tuple[str, ...], str]:
    """Sort key putting paths in ``os.walk``'s top-down order with sorted names: a dir's
    files, then each sub-dir's tree."""
    parts = tuple(rel.split("/"))
    return parts[:-1], parts[-1]


class ShellFiles:
    """:class:`~skillci.agents.workspace.Files` for a workspace at ``mount`` as ``shell`` sees it."""

    def __init__(self, shell: Shell, mount: str) -> None:
        self.shell = shell
        self.mount = mount.rstrip("/") or "/"

    def rel(self, path: str) -> str:
        """``path`` relative to the mount (``.`` for the mount itself); outside: a tool error."""
        norm = posixpath.normpath(mount_relative(path, self.mount).as_posix())
        if norm == ".." or norm.startswith("../"):
            raise ToolError(f"{path}: outside the workspace")
        return norm

    def _sh(self, script: str) -> tuple[int, str]:
        res = self.shell.run(f"cd {shlex.quote(self.mount)} && {script}", timeout=FILE_TIMEOUT)
        if res.timed_out:
            raise ToolError(f"the file command timed out after {FILE_TIMEOUT:g}s")
        return res.exit_code, res.output

    def read(self, path: str) -> str:
        q = shlex.quote(self.rel(path))
        code, out = self._sh(f"if [ -f {q} ]; then base64 < {q}; else exit 7; fi")
        if code == 7:
            raise ToolError(f"{path}: no such file")
        try:
            data = base64.b64decode("".join(out.split()), validate=True)
        except (binascii.Error, ValueError):
            raise ToolError(f"{path}: could not read it: {out[-200:]}") from None
        if code != 0:
            raise ToolError(f"{path}: could not read it: {out[-200:]}")
        return data.decode("utf-8", errors="replace")

    def write(self, path: str, content: str) -> int:
        rel = self.rel(path)
        q = shlex.quote(rel)
        data = content.encode("utf-8")
        encoded = base64.b64encode(data).decode("ascii")
        chunks = [encoded[i : i + CHUNK] for i in range(0, len(encoded), CHUNK)] or [""]
        parent = shlex.quote(posixpath.dirname(rel) or ".")
        first = f"if [ -d {q} ]; then exit 7; fi; mkdir -p {parent} && : > {q}"
        for i, chunk in enumerate(chunks):
            step = f"printf %s {shlex.quote(chunk)} | base64 -d >> {q}"
            code, out = self._sh(f"{first} && {step}" if i == 0 else step)
            if code == 7:
                raise ToolError(f"{path}: is a directory")
            if code != 0:
                raise ToolError(f"{path}: could not write it: {out[-200:]}")
        return len(data)

    def replace(self, path: str, old: str, new: str) -> int:
        return replace_once(self.read, self.write, path, old, new)

    def files(self, path: str = ".") -> list[str]:
        q = shlex.quote(self.rel(path))
        code, out = self._sh(
            f"if [ -f {q} ]; then printf '%s\\0' {q}; exit 0; fi; "
            f"find {q} -mindepth 1 -type d \\( {_PRUNE} \\) -prune -o ! -type d -print0 "
            "2>/dev/null; exit 0"
        )
        if code != 0:
            raise ToolError(f"{path}: could not list it: {out[-200:]}")
        found = [_clean(p) for p in out.split("\0") if p]
        return sorted(found, key=walk_order)[:MAX_LIST]

    def search(self, pattern: str, path: str = ".") -> list[str]:
        if not pattern:
            raise ToolError("pattern must be non-empty")
        listed = self.files(path)
        if not listed:
            return []
        order = {p: i for i, p in enumerate(listed)}
        q = shlex.quote(self.rel(path))
        skip = " ".join(f"--exclude-dir={shlex.quote(d)}" for d in sorted(SKIP_DIRS))
        _, out = self._sh(f"grep -rnIF -Z {skip} -e {shlex.quote(pattern)} -- {q}; exit 0")
        hits: list[tuple[int, int, str]] = []
        for line in out.split("\n"):
            name, sep, rest = line.partition("\0")
            num, sep2, text = rest.partition(":")
            rel = _clean(name)
            if not sep or not sep2 or not num.isdigit() or rel not in order:
                continue
            hits.append((order[rel], int(num), f"{rel}:{num}: {text.strip()[:200]}"))
        return [h[2] for h in sorted(hits)][:MAX_HITS]


def _clean(path: str) -> str:
    """A path as find/grep print it, relative to the mount without ``./``."""
    return posixpath.normpath(path)


__all__ = ["CHUNK", "ShellFiles", "walk_order"]
