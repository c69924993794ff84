"""The simulator's trigger decision: which catalogue skill a request loads (deterministic).

Documented in docs/simulator.md ("Trigger decisions"). The simulated student keys on shared
words only:

1. Words are lowercase runs of letters and digits of 3+ characters, minus a fixed list of
   stop words (:data:`STOP`); each is reduced to a *stem*: a trailing ``ing``, ``ed``,
   ``es``, ``s`` or ``ly`` is cut (when 3+ characters remain), then the first 5 characters
   are kept (``debugging`` -> ``debug``, ``tests`` -> ``test``). A run of Chinese,
   Japanese or Korean characters adds each pair of neighbouring characters as a stem.
2. A skill's *positive* stems are those of its name (split on ``-``) and of its description;
   its *excluded* stems are those in an exclusion clause: from ``not for``, ``do not use``,
   ``don't use`` or ``never use`` to the end of that sentence. Excluded stems are not positive.
3. score = (query stems among the positive ones) - (query stems among the excluded ones),
   each distinct stem counted once.
4. The skill with the highest score is loaded when that score is at least
   :data:`MIN_SCORE`; on a tie the first in catalogue order (sorted by name) wins. Else none.
5. A query most of whose letters are in a script it does not read (Cyrillic, Arabic, Greek,
   Hebrew, Devanagari, Thai, ...: anything but Latin and CJK) gets no answer: the simulator
   says so (:func:`unread_script`; a model error, not a "none" decision).

It never looks at the seed: k runs of one query give k equal answers (real models vary).
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter

from skillci.skill.catalogue import NONE_ANSWER, CatalogueEntry

MIN_SCORE = 2
_STOP_TEXT = """
    the and for with this that these those from into onto over under about when whenever
    what which who whom whose where why how use used uses using user users skill skills
    should would could can will must may might any all some each every other another
    are was were been being has have had having does did doing not but you your yours
    our ours their them they its it's his her she him let lets please want wants need
    needs help make makes like just also only than then there here very more most such
    one two via per etc get gets got asks ask asked request requests before after while
    without within task tasks work working something anything thing things way ways
"""
STOP = frozenset(_STOP_TEXT.split())
_WORD = re.compile(r"[a-z0-9]+")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]+")
_EXCLUDE = re.compile(r"\b(?:not for|do not use|don't use|never use)\b([^.;!?\n]*)", re.IGNORECASE)


def stem(word: str) -> str:
    for suffix in ("ing", "ed", "es", "s", "ly"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            word = word[: -len(suffix)]
            break
    return word[:5]


_STOP_STEMS = frozenset(stem(s) for s in STOP)


def stems(text: str) -> set[str]:
    latin = {stem(w) for w in _WORD.findall(text.lower().replace("'", "")) if len(w) >= 3}
    return (latin - _STOP_STEMS) | cjk_bigrams(text)


def cjk_bigrams(text: str) -> set[str]:
    """Chinese, Japanese and Korean have no spaces between words: each run of their
    characters counts as its character pairs (``调试代码`` -> 调试, 试代, 代码)."""
    out: set[str] = set()
    for run in _CJK.findall(text):
        out |= {run[i : i + 2] for i in range(len(run) - 1)}
    return out


def unread_script(text: str) -> str | None:
    """The script (``Cyrillic``, ``Arabic``, ...) of most of ``text``'s letters when it is
    one the simulator does not read — anything but Latin and Chinese, Japanese or Korean —
    else None. Its "none" for such a query would be a guess, not a decision."""
    other: Counter[str] = Counter()
    letters = 0
    for ch in text:
        if not ch.isalpha():
            continue
        letters += 1
        name = unicodedata.name(ch, "")
        if ch.isascii() or name.startswith("LATIN") or _CJK.match(ch):
            continue
        other[name.split(" ")[0] or "UNKNOWN"] += 1
    if not letters or 2 * sum(other.values()) <= letters:
        return None
    return other.most_common(1)[0][0].title()


def skill_stems(entry: CatalogueEntry) -> tuple[set[str], set[str]]:
    """(positive, excluded) stems of one catalogue entry."""
    desc = entry.description.replace("’", "'")
    excluded: set[str] = set()
    for m in _EXCLUDE.finditer(desc):
        excluded |= stems(m.group(1))
    positive = (stems(desc) | stems(entry.name.replace("-", " "))) - excluded
    return positive, excluded


def score(query: str, entry: CatalogueEntry) -> int:
    q = stems(query)
    positive, excluded = skill_stems(entry)
    return len(q & positive) - len(q & excluded)


def choose(query: str, entries: list[CatalogueEntry]) -> str | None:
    """The name of the skill the simulated student loads for ``query``, or None."""
    best: tuple[int, str] | None = None
    for e in sorted(entries, key=lambda e: e.name):
        s = score(query, e)
        if s >= MIN_SCORE and (best is None or s > best[0]):
            best = (s, e.name)
    return best[1] if best else None


def answer(query: str, entries: list[CatalogueEntry]) -> str:
    """The simulated reply text: the chosen name, or ``none``."""
    return choose(query, entries) or NONE_ANSWER


__all__ = [
    "MIN_SCORE",
    "STOP",
    "answer",
    "choose",
    "score",
    "skill_stems",
    "stem",
    "stems",
    "unread_script",
]
