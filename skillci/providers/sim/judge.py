"""``sim/judge``: a deterministic, **lexical** stand-in for a rubric judge (a SIMULATOR).

It reads the prompts of :mod:`skillci.graders.judge` (the ``[TASK]``/``[CRITERIA]``/
``[OUTPUT]`` markers and the JSON-quoted output) and decides by word overlap, not meaning:

- a criterion **passes** when at least 60% of its content words (4+ letters, not stop
  words) appear in the output, a word matching any output word that shares its first
  4 letters (``tests`` ~ ``testing``, ``file`` ~ ``files``);
- **pairwise**, the output passing more criteria wins; equal counts are a tie. It has no
  position bias: swapping A and B swaps its answer.

It cannot tell a correct plan from one that merely names the right words; it is a
simulator for exercising the grading path offline (docs/simulator.md), not evidence.
"""

from __future__ import annotations

import json
import re
from typing import Any

PASS_SHARE = 0.6
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
_QUOTE = re.compile(
    r"<<<UNTRUSTED-DATA output [0-9a-f]+>>>\n(.*?)\n<<<END-UNTRUSTED-DATA output [0-9a-f]+>>>",
    re.DOTALL,
)
_STOP = frozenset(
    [
        "that",
        "this",
        "with",
        "from",
        "have",
        "does",
        "each",
        "what",
        "when",
        "which",
        "their",
        "there",
        "them",
        "they",
        "then",
        "than",
        "into",
        "onto",
        "over",
        "under",
        "about",
        "should",
        "would",
        "could",
        "must",
        "will",
        "shall",
        "being",
        "been",
        "were",
        "more",
        "most",
        "some",
        "such",
        "only",
        "also",
        "just",
        "very",
        "every",
        "output",
        "answer",
    ]
)


def _words(text: str) -> set[str]:
    return {w.lower()[:4] for w in _WORD.findall(text) if len(w) >= 4}


def _content(text: str) -> list[str]:
    return [
        w
        for w in dict.fromkeys(w.lower() for w in _WORD.findall(text))
        if len(w) >= 4 and w not in _STOP
    ]


def criterion_passes(criterion: str, output: str) -> bool:
    want = _content(criterion)
    if not want:
        return False
    have = _words(output)
    return sum(w[:4] in have for w in want) >= PASS_SHARE * len(want)


def _section(text: str, mark: str, nxt: tuple[str, ...]) -> str:
    start = text.find(mark)
    if start < 0:
        return ""
    start += len(mark)
    ends = [i for m in nxt if (i := text.find(m, start)) >= 0]
    return text[start : min(ends) if ends else len(text)]


def _criteria(user: str) -> list[str]:
    block = _section(user, "[CRITERIA]", ("[REFERENCE]", "[OUTPUT"))
    return [m.group(1).strip() for m in re.finditer(r"^\d+\.\s+(.*)$", block, re.MULTILINE)]


def _outputs(user: str) -> list[str]:
    return [json.loads(m.group(1)) for m in _QUOTE.finditer(user)]


def judge_answer(messages: list[dict[str, Any]]) -> str:
    """The sim judge's answer (JSON text) to a pointwise or pairwise prompt."""
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    user = users[-1] if users and isinstance(users[-1], str) else ""
    criteria, outputs = _criteria(user), _outputs(user)
    if not criteria or not outputs:
        return "I cannot find a rubric and an output to grade."
    if "[OUTPUT A]" in user and len(outputs) == 2:
        a, b = (sum(criterion_passes(c, o) for c in criteria) for o in outputs)
        winner = "A" if a > b else "B" if b > a else "tie"
        return json.dumps({"winner": winner, "reason": f"criteria met: A {a}, B {b}"})
    verdicts = []
    for n, c in enumerate(criteria, start=1):
        ok = criterion_passes(c, outputs[0])
        share = "most" if ok else "too few"
        verdicts.append({"criterion": n, "pass": ok, "reason": f"{share} of its words appear"})
    return json.dumps({"verdicts": verdicts})


__all__ = ["PASS_SHARE", "criterion_passes", "judge_answer"]
