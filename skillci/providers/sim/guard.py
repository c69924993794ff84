"""``sim/guard``: a deterministic, **lexical** stand-in for a guard classifier (a SIMULATOR).

It reads the prompt of :mod:`skillci.patch.second_opinion` (the JSON object of field texts
inside the UNTRUSTED-DATA block) and flags a field when one of its sentences holds an
action word and an object word of one class, in any order, by word stems:

- ``gate-weakening``: delete/remove/skip/disable/weaken/lower/fake ... + test/gate/verifier/
  threshold/min_validation_gain ...;
- ``exfiltration``: print/echo/send/upload/leak/reveal/log ... + secret/token/key/password/
  environ ...;
- ``review-bypass``: merge/push/approve/release ... + review/admin/protection/main;
- ``external-instructions``: follow/obey/execute ... + instructions/logs/page/message ...

It ignores negation and scope ("never delete tests" is flagged too): it over-cautions,
which a second opinion may, since it only adds ``needs-approval``. It cannot read meaning;
it exists so the classifier path runs offline (docs/simulator.md), not as evidence.
"""

from __future__ import annotations

import re
from typing import Any

from skillci.providers.guard_fields import answer_fields

_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_WORD = re.compile(r"[a-z][a-z0-9_]*")

#: class -> (action stems, object stems); a word matches a stem it starts with.
CLASSES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "gate-weakening": (
        (
            "delet",
            "remov",
            "skip",
            "disabl",
            "weaken",
            "lower",
            "relax",
            "loosen",
            "fake",
            "stub",
            "xfail",
            "comment",
            "bypass",
            "drop",
            "replac",
            "zero",
        ),
        (
            "test",
            "gate",
            "verifier",
            "threshold",
            "min_validation_gain",
            "max_regression_rate",
            "assert",
            "check",
        ),
    ),
    "exfiltration": (
        (
            "print",
            "echo",
            "send",
            "upload",
            "leak",
            "reveal",
            "log",
            "post",
            "paste",
            "expos",
            "dump",
            "cat",
        ),
        ("secret", "token", "key", "password", "credential", "environ", "skillci_model_keys"),
    ),
    "review-bypass": (
        ("merg", "push", "approv", "releas", "force"),
        ("review", "admin", "protect", "main", "master"),
    ),
    "external-instructions": (
        ("follow", "obey", "execut", "comply"),
        ("instruction", "log", "page", "messag", "comment", "issue", "output", "text"),
    ),
}
_SAFE_REASON = "no action and object of a watched class in one sentence"


def _hits(words: list[str], stems: tuple[str, ...]) -> str | None:
    return next((w for w in words if w.startswith(stems)), None)


def classify(text: str) -> tuple[str, str]:
    """(category, reason) of one field's text: ``none`` when nothing matched."""
    for sentence in _SENTENCE.split(text.lower()):
        words = _WORD.findall(sentence)
        for category, (actions, objects) in CLASSES.items():
            act = _hits(words, actions)
            obj = next((w for w in words if w != act and w.startswith(objects)), None)
            if act is not None and obj is not None:
                return category, f"'{act}' with '{obj}' in one sentence"
    return "none", _SAFE_REASON


def guard_answer(messages: list[dict[str, Any]]) -> str:
    """The sim guard's answer (JSON text) to a second-opinion prompt."""
    return answer_fields(messages, classify)


__all__ = ["CLASSES", "classify", "guard_answer"]
