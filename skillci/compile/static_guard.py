"""The semantic guard of static compile: does a rewritten section still say what it said?

Static compile may reorganize a section — number its instructions, replace vague phrases
with curated checks — but never change what the skill says. Per section, the guard
compares the source with the result:

- **heading**: the heading line is byte-identical;
- **code blocks**: the fenced and indented code blocks are byte-identical and in order;
- **literals**: every protected literal (paths, commands, flags, numbers, identifiers,
  URLs, code spans) is still there as often as before, and no new one appeared;
- **step coverage**: every word of the source (outside the replaced vague phrases) is
  still in the result as often as before, so no instruction was dropped;
- **inline markup**: every code span, link, image, bold and italic span of the source is
  still there, with the same text (whitespace aside), and no new one appeared;
- **no new vague phrase**: the result has no vague phrase the source did not have;
- **constraints verbatim**: every sentence holding a prohibition, an obligation or a
  warning is still there word for word (``skillci.compile.static_check``, design 334).

Any failure rolls the section back to its original text; the report says why. Pure.
See docs/design/101.
"""

from __future__ import annotations

import re
from collections import Counter

from skillci.compile.literals import missing_literals, new_literals
from skillci.compile.mdtext import Section, inline_ranges, markup
from skillci.compile.static_check import missing_constraints
from skillci.compile.vague_replacements import find_hits
from skillci.skill.vague import find_vague

#: A latin/digit word, or one CJK character (CJK text has no spaces between words).
_WORD = re.compile(
    r"[^\W\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+|[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]"
)


def words(text: str) -> Counter[str]:
    return Counter(w.lower() for w in _WORD.findall(text))


def _cut(text: str, spans: list[tuple[int, int]]) -> str:
    out, pos = [], 0
    for a, b in sorted(spans):
        out.append(text[pos:a])
        pos = max(pos, b)
    out.append(text[pos:])
    return " ".join(out)


def protected_ranges(section: Section) -> list[tuple[int, int]]:
    """Character ranges of ``section.text`` no rewrite touches: code blocks, indented code,
    HTML blocks and inline markup (code spans, links, bold and italic text)."""
    out: list[tuple[int, int]] = []
    pos = len(section.heading)
    for b in section.blocks:
        if b.kind in ("code", "indented", "html"):
            out.append((pos, pos + len(b.text)))
        else:
            out += [(pos + a, pos + e) for a, e in inline_ranges(b.text)]
        pos += len(b.text)
    return out


def vague_spans(section: Section) -> list[tuple[int, int]]:
    """Ranges of ``section.text`` holding vague phrases (replaced by curated text)."""
    body_start = len(section.heading)
    return [
        (h.start, h.end)
        for h in find_hits(section.text, protected_ranges(section))
        if h.start >= body_start
    ]


def guard_section(source: Section, result: Section) -> list[str]:
    """Reasons ``result`` may not replace ``source`` (empty: it may).

    Words inside the source's vague phrases do not have to survive: those phrases are
    what the curated table replaces.
    """
    reasons: list[str] = []
    src, out = source.text, result.text
    if source.heading != result.heading:
        reasons.append("heading changed")
    if source.code_blocks != result.code_blocks:
        reasons.append(
            f"code blocks changed ({len(source.code_blocks)} before, {len(result.code_blocks)} after)"
        )
    lost = missing_literals(src, out)
    if lost:
        reasons.append(f"protected literal(s) lost: {', '.join(repr(x) for x in lost[:5])}")
    added = new_literals(src, out)
    if added:
        reasons.append(f"new literal(s) introduced: {', '.join(repr(x) for x in added[:5])}")
    have = words(out)
    dropped = sorted(w for w, n in words(_cut(src, vague_spans(source))).items() if have[w] < n)
    if dropped:
        reasons.append(f"step coverage: source words dropped: {', '.join(dropped[:8])}")
    # a sentence that was all vague phrase survives as its curated replacement, or as it was
    # (static compile keeps condition-changing phrases and flags them)
    need = Counter((h.phrase, h.replacement) for h in find_hits(src, protected_ranges(source)))
    gone = sorted(r for (p, r), n in need.items() if out.count(r) + out.count(p) < n + src.count(r))
    if gone:
        reasons.append(f"step coverage: instruction dropped: {gone[0][:60]!r}")
    src_markup = Counter(markup(src, has_frontmatter=False))
    out_markup = Counter(markup(out, has_frontmatter=False))
    lost_markup, new_markup = src_markup - out_markup, out_markup - src_markup
    if lost_markup or new_markup:
        what = next(iter(lost_markup or new_markup))
        reasons.append(f"inline markup changed: {what[0]} {what[1][:60]!r}")
    kept = missing_constraints(src, out)
    if kept:
        reasons.append(f"constraint sentence changed: {kept[0][:60]!r}")
    before = Counter(p for _, _, p, _ in find_vague(src))
    after = Counter(p for _, _, p, _ in find_vague(out))
    fresh = sorted(p for p, n in after.items() if n > before[p])
    if fresh:
        reasons.append(f"new vague phrase(s): {', '.join(repr(p) for p in fresh[:3])}")
    return reasons


__all__ = ["guard_section", "protected_ranges", "vague_spans", "words"]
