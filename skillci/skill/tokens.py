"""Offline token counting with a real tokenizer.

litellm ships tiktoken's BPE files under ``litellm/litellm_core_utils/tokenizers``; we point
``TIKTOKEN_CACHE_DIR`` there (found without importing litellm, which costs seconds) so that
counting never touches the network. The encoding is chosen per target runtime
(``manifest.target_runtime.tokenizer``), default ``cl100k_base``.

Loading an encoding costs about a second of CPU, and a command that only re-reads known
files (an unchanged re-gate) would pay it for nothing: counts are memoised by (encoding,
sha256 of the text). :func:`known_counts` / :func:`remember_counts` let a command persist
the memo between processes (:func:`skillci.flows.context.token_counts`); a count of a given
text under a given encoding never changes, so the memo needs no invalidation (docs/design/268).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillci.errors import ConfigError, ExternalError

DEFAULT_ENCODING = "cl100k_base"
KNOWN_ENCODINGS = ("cl100k_base", "o200k_base", "p50k_base")


def litellm_tokenizer_dir() -> Path | None:
    spec = importlib.util.find_spec("litellm")
    if spec is None or not spec.submodule_search_locations:
        return None
    d = Path(next(iter(spec.submodule_search_locations))) / "litellm_core_utils" / "tokenizers"
    return d if d.is_dir() else None


@functools.lru_cache(maxsize=8)
def _encoding(name: str) -> Any:
    if name not in KNOWN_ENCODINGS:
        raise ConfigError(
            f"unknown tokenizer {name!r}",
            hint=f"set target_runtime.tokenizer to one of {', '.join(KNOWN_ENCODINGS)}",
        )
    if not os.environ.get("TIKTOKEN_CACHE_DIR"):
        d = litellm_tokenizer_dir()
        if d is not None:
            os.environ["TIKTOKEN_CACHE_DIR"] = str(d)
    import tiktoken

    try:
        return tiktoken.get_encoding(name)
    except Exception as exc:  # network fetch attempted and failed
        raise ExternalError(
            f"tokenizer {name!r} could not be loaded offline: {exc}",
            hint="install litellm (it ships the encoding files) or set TIKTOKEN_CACHE_DIR",
        ) from None


#: "<encoding>:<sha256 of the UTF-8 text>" -> token count (see the module docstring)
_COUNTS: dict[str, int] = {}
#: Most counts :func:`remember_counts` keeps (a persisted memo must not grow without bound).
MAX_REMEMBERED = 50_000


def _memo_key(text: str, encoding: str) -> str:
    digest = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
    return f"{encoding}:{digest}"


def count_tokens(text: str, encoding: str | None = None) -> int:
    """Number of tokens in ``text`` under ``encoding`` (default cl100k_base)."""
    if not text:
        return 0
    name = encoding or DEFAULT_ENCODING
    if name not in KNOWN_ENCODINGS:
        _encoding(name)  # raises the ConfigError
    key = _memo_key(text, name)
    hit = _COUNTS.get(key)
    if hit is None:
        hit = _COUNTS[key] = len(_encoding(name).encode(text, disallowed_special=()))
    return hit


def known_counts() -> dict[str, int]:
    """Every memoised count (to persist it)."""
    return dict(_COUNTS)


def remember_counts(counts: Mapping[str, object]) -> int:
    """Add persisted counts to the memo; entries that are not ``<known encoding>:<sha256>``
    -> non-negative int are ignored (the file is a cache, not an authority). Returns how
    many were taken."""
    taken = 0
    for key, value in counts.items():
        if len(_COUNTS) >= MAX_REMEMBERED:
            break
        enc, _, digest = key.partition(":")
        if enc not in KNOWN_ENCODINGS or len(digest) != 64:
            continue
        if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
            _COUNTS[key] = value
            taken += 1
    return taken
