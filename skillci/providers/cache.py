"""On-disk response cache keyed by the full request.

The key is the sha256 of the canonical JSON of everything sent (model, endpoint, sampling
parameters, messages, tools, tool choice, seed) plus the route fingerprint, so any change
to the request is a miss. Entries are JSON files written atomically under
``<root>/<key[:2]>/<key>.json``; a corrupt entry is treated as a miss and overwritten.

Use: teacher and compiler calls cache by default; student trials only when asked
(``ModelClient(cache_student=True)``), because a cached student hides its variance.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillci.fsutil import atomic_write_text
from skillci.providers.types import Completion

CACHE_SCHEMA_VERSION = 1


class CacheEntry(BaseModel):
    """One cached answer."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=CACHE_SCHEMA_VERSION, description="Entry shape version.")
    key: str = Field(description="sha256 of the canonical request.")
    route: str = Field(description="Route name the request was made through.")
    completion: Completion = Field(description="The answer as first received.")


def request_key(request: dict[str, Any]) -> str:
    """sha256 of ``request`` as canonical JSON (sorted keys, no whitespace)."""
    blob = json.dumps(
        request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class ResponseCache:
    """Read/write cached completions under ``root``."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> Completion | None:
        path = self._path(key)
        try:
            entry = CacheEntry.model_validate_json(path.read_bytes())
        except (FileNotFoundError, ValidationError, ValueError):
            return None
        if entry.key != key:
            return None
        return entry.completion.model_copy(update={"cached": True})

    def put(self, key: str, route: str, completion: Completion) -> None:
        entry = CacheEntry(
            key=key, route=route, completion=completion.model_copy(update={"cached": False})
        )
        atomic_write_text(self._path(key), entry.model_dump_json(indent=1))

    def __len__(self) -> int:
        return sum(1 for _ in self.root.glob("*/*.json")) if self.root.is_dir() else 0


SAVED_MODELS: dict[str, type[BaseModel]] = {"response-cache-entry": CacheEntry}

__all__ = ["SAVED_MODELS", "CacheEntry", "ResponseCache", "request_key"]
