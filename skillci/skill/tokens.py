"""Offline token counting with a real tokenizer.

litellm ships tiktoken's BPE files under ``litellm/litellm_core_utils/tokenizers``; we point
``TIKTOKEN_CACHE_DIR`` there (found without importing litellm, which costs seconds) so that
counting never touches the network. The encoding is chosen per target runtime
(``manifest.target_runtime.tokenizer``), default ``cl100k_base``.
"""

from __future__ import annotations

import functools
import importlib.util
import os
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


def count_tokens(text: str, encoding: str | None = None) -> int:
    """Number of tokens in ``text`` under ``encoding`` (default cl100k_base)."""
    if not text:
        return 0
    enc = _encoding(encoding or DEFAULT_ENCODING)
    return len(enc.encode(text, disallowed_special=()))
