"""The curated table: each vague phrase lint rejects, and the concrete text that replaces it.

``skillci skill lint`` (SK010) flags phrases from :data:`skillci.skill.vague.VAGUE_PHRASES`
that give a weak student no action boundary. Static compile replaces each with a concrete
instruction from this table, keyed by the lint pattern itself, so a new lint pattern
without a curated replacement fails a test instead of slipping through.

An entry rewrites the matched span (``span``) and may add one *check* sentence after the
sentence it occurred in (``check``) — the observable proof the vague phrase was asking
for. Every text here is ours: no literals (paths, commands, numbers, identifiers), no
vague phrase of its own (both are tested), so the semantic guard can tell our words from
the source's.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from skillci.skill.vague import VAGUE_PHRASES

WRITE_DOWN = "Write down what you found before you change anything."
WRITE_DOWN_ZH = "改动前先写下你发现的内容。"


@dataclass(frozen=True)
class CuratedCheck:
    """How one lint pattern is made concrete."""

    check_id: str
    span: Callable[[str], str]
    """Matched text -> replacement text (case of the first letter is kept by the caller)."""
    check: str | None = None
    """A sentence appended after the sentence that held the phrase (once per sentence)."""
    keeps_condition: bool = True
    """False when the phrase *is* a condition or a decision ("if needed", "as appropriate",
    "use your judgment") that the replacement would swap for a different one: static
    compile then keeps the phrase and flags it for a person (docs/design/151)."""


def _last_word(m: str) -> str:
    return m.split()[-1]


def _noun(m: str) -> str:
    hit = re.search(r"(result|output|answer|solution|fix)s?", m, re.IGNORECASE)
    return hit.group(0).lower() if hit else "result"


def _noun_zh(m: str) -> str:
    hit = re.search(r"结果|输出|答案|修复", m)
    return hit.group(0) if hit else "结果"


def _tools_zh(m: str) -> str:
    return "在当前步骤指明时使用它指定的工具" if re.search(r"使用|调用|工具", m) else "在检查失败时"


_P = [vp.pattern.pattern for vp in VAGUE_PHRASES]


def _pat(fragment: str) -> str:
    """The one lint pattern containing ``fragment`` (fails at import when that changes)."""
    found = [p for p in _P if fragment in p]
    if len(found) != 1:
        raise RuntimeError(f"{len(found)} lint patterns contain {fragment!r}")
    return found[0]


#: lint pattern source -> its curated replacement.
CURATED: dict[str, CuratedCheck] = {
    _pat(r"careful(?:ly)?"): CuratedCheck("careful-verb", _last_word, WRITE_DOWN),
    _pat(r"consider\s+(?:comprehensively"): CuratedCheck(
        "consider-all",
        lambda m: "check each point this skill lists, in order",
        keeps_condition=False,
    ),
    _pat(r"(?:comprehensive(?:ly)?|thorough"): CuratedCheck(
        "thorough-verb", _last_word, WRITE_DOWN
    ),
    _pat(r"tools?\s+(?:when"): CuratedCheck(
        "tools-when-needed",
        lambda m: "use the tool that the current step names",
        keeps_condition=False,
    ),
    _pat(r"(?:ensure|make"): CuratedCheck(
        "ensure-correct",
        lambda m: (
            f"confirm the {_noun(m)} by running the check the task names, and continue "
            "only when that check passes"
        ),
    ),
    _pat(r"handle\s+"): CuratedCheck(
        "handle-flexibly",
        lambda m: "when a step fails, note the error and retry that step once with one change",
        keeps_condition=False,
    ),
    _pat(r"(?:as|when)\s+appropriate"): CuratedCheck(
        "as-appropriate", lambda m: "when the current step calls for it", keeps_condition=False
    ),
    _pat(r"judg"): CuratedCheck(
        "judgment", lambda m: "follow the steps of this skill in order", keeps_condition=False
    ),
    _pat(r"fully\s+understand"): CuratedCheck("fully-understand", lambda m: "read", WRITE_DOWN),
    _pat(r"(?:necessary|required)\s+(?:regression"): CuratedCheck(
        "necessary-validation", lambda m: "check that the task names (its test or command)"
    ),
    _pat(r"minimal"): CuratedCheck("minimal-risk", lambda m: "small, single-purpose"),
    _pat(r"\bif\s+(?:necessary"): CuratedCheck(
        "if-necessary", lambda m: "when a check fails", keeps_condition=False
    ),
    _pat(r"仔细"): CuratedCheck("careful-verb-zh", lambda m: m[2:], WRITE_DOWN_ZH),
    _pat(r"综合考虑"): CuratedCheck(
        "consider-all-zh", lambda m: "逐项检查本技能列出的要点", keeps_condition=False
    ),
    _pat(r"必要时"): CuratedCheck("tools-when-needed-zh", _tools_zh, keeps_condition=False),
    _pat(r"确保"): CuratedCheck(
        "ensure-correct-zh",
        lambda m: f"运行任务指定的检查（测试或命令）确认{_noun_zh(m)}，检查通过后再继续",
    ),
    _pat(r"灵活处理"): CuratedCheck(
        "handle-flexibly-zh",
        lambda m: "若某一步失败：记录错误，只改一处后重试该步一次",
        keeps_condition=False,
    ),
    _pat(r"充分理解"): CuratedCheck("fully-understand-zh", lambda m: "阅读", WRITE_DOWN_ZH),
}


@dataclass(frozen=True)
class VagueHit:
    """One replaced phrase."""

    start: int
    end: int
    phrase: str
    replacement: str
    check_id: str
    check: str | None
    keeps_condition: bool = True


def _match_case(src: str, out: str) -> str:
    if src[:1].isupper() and out[:1].islower():
        return out[:1].upper() + out[1:]
    return out


def find_hits(text: str, protected: Sequence[tuple[int, int]] = ()) -> list[VagueHit]:
    """Non-overlapping vague phrases in ``text`` (outside ``protected`` ranges), first pattern
    wins on overlap, with their curated replacements."""
    norm = text.replace("_", " ").replace("-", " ")
    cands: list[tuple[int, int, int]] = []
    for k, vp in enumerate(VAGUE_PHRASES):
        for m in vp.pattern.finditer(norm):
            if any(a < m.end() and m.start() < b for a, b in protected):
                continue
            cands.append((m.start(), m.end(), k))
    cands.sort(key=lambda c: (c[0], c[2]))
    hits: list[VagueHit] = []
    end = -1
    for s, e, k in cands:
        if s < end:
            continue
        cur = CURATED[_P[k]]
        phrase = text[s:e]
        hits.append(
            VagueHit(
                s,
                e,
                phrase,
                _match_case(phrase, cur.span(phrase)),
                cur.check_id,
                cur.check,
                cur.keeps_condition,
            )
        )
        end = e
    return hits


def rewrite_vague(
    text: str, protected: Sequence[tuple[int, int]] = ()
) -> tuple[str, list[VagueHit]]:
    """``text`` with every vague phrase replaced; the check sentences are returned in the
    hits (the caller places them)."""
    hits = find_hits(text, protected)
    out = text
    for h in reversed(hits):
        out = out[: h.start] + h.replacement + out[h.end :]
    return out, hits


def curated_texts() -> list[str]:
    """Every text the table can produce for a representative match (for tests)."""
    samples = {
        "careful-verb": "carefully analyze",
        "thorough-verb": "thoroughly review",
        "ensure-correct": "make sure the fix is correct",
        "careful-verb-zh": "仔细分析",
        "tools-when-needed-zh": "必要时使用工具",
        "ensure-correct-zh": "确保结果正确",
    }
    out = []
    for cur in CURATED.values():
        out.append(cur.span(samples.get(cur.check_id, "x")))
        if cur.check:
            out.append(cur.check)
    return out


__all__ = [
    "CURATED",
    "WRITE_DOWN",
    "WRITE_DOWN_ZH",
    "CuratedCheck",
    "VagueHit",
    "curated_texts",
    "find_hits",
    "rewrite_vague",
]
