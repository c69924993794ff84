"""The field-by-field answer a guard classifier route gives to the second-opinion prompt.

:mod:`skillci.patch.second_opinion` quotes the texts to review as one JSON object inside an
``UNTRUSTED-DATA`` block; an in-process classifier (``sim/guard``, ``local/guard-ngram``)
reads that object back and answers ``{"fields": [{id, verdict, category, reason}]}``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

_QUOTE = re.compile(
    r"<<<UNTRUSTED-DATA fields [0-9a-f]+>>>\n(.*?)\n<<<END-UNTRUSTED-DATA fields [0-9a-f]+>>>",
    re.DOTALL,
)

Classify = Callable[[str], tuple[str, str]]
"""One field's text -> (category, reason); category ``none`` means safe."""


def answer_fields(messages: list[dict[str, Any]], classify: Classify) -> str:
    """The JSON answer to a second-opinion prompt, each quoted field judged by ``classify``."""
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    user = users[-1] if users and isinstance(users[-1], str) else ""
    m = _QUOTE.search(user)
    if m is None:
        return "I cannot find the fields to review."
    fields = json.loads(m.group(1))
    out = []
    for fid, text in fields.items():
        category, reason = classify(str(text))
        verdict = "safe" if category == "none" else "flag"
        out.append({"id": fid, "verdict": verdict, "category": category, "reason": reason})
    return json.dumps({"fields": out})


__all__ = ["Classify", "answer_fields"]
