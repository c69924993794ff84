"""Small filesystem helpers shared by every package: atomic writes, content hashes, and
the bounded JSON reader for untrusted input (:func:`load_json`).

Pure packages (skill/, patch/, analyze/, gate/) never call these; they belong to the
edges (load/save of packages, stores, reports).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see the old or the new file, never half.

    Temp file in the same directory, fsync, ``os.replace``, then fsync the directory.
    ``durable=False`` skips both fsyncs: still atomic for readers, but a power loss may
    leave the old file or none — for files a later durable write vouches for (a trial's
    logs before its record and marker) and whose loss is detected, not silent.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        mode = path.stat().st_mode & 0o7777
    except FileNotFoundError:
        mode = 0o666 & ~_umask()
    fd, tmp = tempfile.mkstemp(prefix=_temp_prefix(path.name), suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            if durable:
                fh.flush()
                os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
    if durable:
        fsync_dir(path.parent)


def _temp_prefix(name: str) -> str:
    """``.<name>.`` — or a short hash of the name when that would exceed NAME_MAX (255)."""
    if len(os.fsencode(name)) <= 200:
        return f".{name}."
    return f".{hashlib.sha256(os.fsencode(name)).hexdigest()[:16]}."


def _umask() -> int:
    current = os.umask(0o022)
    os.umask(current)
    return current


def atomic_write_text(path: Path, text: str, *, durable: bool = True) -> None:
    atomic_write_bytes(path, text.encode("utf-8"), durable=durable)


def fsync_dir(path: Path) -> None:
    try:
        dfd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(dfd)
    finally:
        os.close(dfd)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tree_hash(files: Iterable[tuple[str, bytes]]) -> str:
    """Content hash of a set of (relative path, bytes) pairs, independent of order."""
    h = hashlib.sha256()
    for rel, data in sorted(files):
        h.update(rel.encode("utf-8"))
        h.update(b"\0")
        h.update(hashlib.sha256(data).digest())
    return h.hexdigest()


#: Deepest nesting a JSON document from outside may have (run records nest ~10 levels).
MAX_JSON_DEPTH = 128


def json_depth(data: Any) -> int:
    """Nesting depth of parsed JSON ``data`` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(data, 0)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            depth += 1
            deepest = max(deepest, depth)
            if depth > MAX_JSON_DEPTH:
                break
            stack += [(v, depth) for v in item if isinstance(v, (dict, list))]
    return deepest


def load_json(text: str | bytes, *, file: str | Path, line: int | None = None) -> Any:
    """``json.loads`` for untrusted input: nesting deeper than :data:`MAX_JSON_DEPTH` is an
    :class:`~skillci.errors.InvalidInputError` (exit 2) naming ``file`` (and ``line``),
    never a ``RecursionError``. Syntax errors stay ``json.JSONDecodeError`` for the caller."""
    from skillci.errors import InvalidInputError

    try:
        data = json.loads(text)
    except RecursionError:
        data = None
        too_deep = True
    else:
        too_deep = json_depth(data) > MAX_JSON_DEPTH
    if too_deep:
        raise InvalidInputError(
            f"JSON nested deeper than {MAX_JSON_DEPTH} levels",
            file=file,
            line=line,
            hint="this is not a file skillci or a harness writes; check where it came from",
        )
    return data
