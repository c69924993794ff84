"""The probe route's vectors kept between benchmark runs (``guard_corpus --embed-cache``).

A placement run of one round with ``--guard-model local/guard-probe`` sends every part and
segment of every placed text to the served model, one request each (about 17 minutes for
round 17 on two cores). The same texts at another threshold (``local/guard-probe-wide``), or
the same round again, need none of those requests: :func:`install` puts a cache in front of
:func:`skillci.providers.local.probe.embedder` for this process. Vectors are kept exactly
(float64, base64: the JSON answer's own precision), by endpoint, model name and the
text's sha256, one JSON line each.

A cache is only as good as the model behind the name: on its first use in a process each
endpoint embeds the probe's first reference sentence live and compares it with the cached
vector of the same text; a cosine under 0.999 (another model, or another quantization, behind
the same name) is :class:`StaleCache`, and nothing is read from the file. Benchmarks only:
the route in skillci never caches (a verdict is asked of the served model each time).
"""

from __future__ import annotations

import base64
import hashlib
import json
import struct
from collections.abc import Callable
from pathlib import Path

from benchmarks.guard_llm import read_cache
from skillci.providers.local import probe

#: a live vector this close to the cached one is the same model
SAME_MODEL = 0.999
#: in every key: lines written in another layout are never read (a float32 line read as
#: float64 is a vector of half the length)
FORMAT = "float64-le-v1"


class StaleCache(RuntimeError):
    """The cache's vectors were made by another model than the one served now."""


def _pack(vec: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(vec)}d", *vec)).decode()


def _unpack(data: str) -> list[float]:
    raw = base64.b64decode(data, validate=True)
    return list(struct.unpack(f"<{len(raw) // 8}d", raw))


class Store:
    """One endpoint's vectors in the JSON-lines file at ``path`` (shared by every endpoint)."""

    def __init__(self, path: Path, api_base: str, model: str) -> None:
        self.path = path
        self.prefix = f"{FORMAT}\0{api_base.rstrip('/')}\0{model}\0"
        self.vecs = read_cache(path, lambda row: _unpack(str(row["vec"])))
        self.hits = self.misses = 0

    def key(self, text: str) -> str:
        return hashlib.sha256((self.prefix + text).encode()).hexdigest()

    def get(self, text: str) -> list[float] | None:
        return self.vecs.get(self.key(text))

    def put(self, text: str, vec: list[float]) -> None:
        k = self.key(text)
        self.vecs[k] = vec
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self.path.open("a", encoding="utf-8") as out:
            out.write(json.dumps({"key": k, "vec": _pack(vec)}) + "\n")

    def verify(self, live: Callable[[str], list[float]], text: str) -> None:
        """Embed ``text`` live; a cached vector of it that differs is :class:`StaleCache`."""
        now = live(text)
        was = self.get(text)
        if was is not None and (len(was) != len(now) or probe.cosine(now, was) < SAME_MODEL):
            same = (
                f"cosine {probe.cosine(now, was):.4f}"
                if len(was) == len(now)
                else (f"{len(was)} dimensions cached, {len(now)} served")
            )
            raise StaleCache(
                f"{self.path}: its vectors were made by another model than the one served "
                f"now ({same} on a reference sentence); delete the file or give another "
                "--embed-cache"
            )
        if was is None:
            self.put(text, now)


def install(path: Path) -> dict[tuple[str, str], Store]:
    """Cache :func:`probe.embedder`'s vectors in ``path`` for the rest of this process; the
    stores opened so far, by (endpoint, model), for their hit counts."""
    live_embedder = probe.embedder
    stores: dict[tuple[str, str], Store] = {}

    def cached(api_base: str, model: str, timeout: float = probe.TIMEOUT) -> probe.Embed:
        live = live_embedder(api_base, model, timeout)
        store = stores.get((api_base, model))
        if store is None:
            store = stores[(api_base, model)] = Store(path, api_base, model)
            shipped = probe.shipped()
            store.verify(live, shipped.framed(shipped.reference[0][0]))

        def embed(text: str) -> list[float]:
            vec = store.get(text)
            if vec is None:
                store.misses += 1
                vec = live(text)
                store.put(text, vec)
            else:
                store.hits += 1
            return vec

        return embed

    probe.embedder = cached  # type: ignore[assignment]
    return stores


__all__ = ["SAME_MODEL", "StaleCache", "Store", "install"]
