"""Request routing between stable and canary (pure, stdlib only: deployments import it).

A request goes to the canary when ``bucket(request_id) < weight``; ``bucket`` is the first
8 bytes of ``sha256(request_id)`` (UTF-8) read as a big-endian unsigned integer, modulo 100.
The same request id always lands in the same bucket, in any language.
"""

from __future__ import annotations

import hashlib
from typing import Literal


def bucket(request_id: str) -> int:
    """0-99, a deterministic function of ``request_id``."""
    digest = hashlib.sha256(request_id.encode("utf-8")).digest()
    return int.from_bytes(digest[:8], "big") % 100


def pick(weight: int, request_id: str | None) -> Literal["stable", "canary"]:
    """canary when the request's bucket is below ``weight``; stable without a request id."""
    if request_id is None or weight <= 0:
        return "stable"
    return "canary" if bucket(request_id) < weight else "stable"
