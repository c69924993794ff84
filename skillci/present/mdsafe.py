"""Untrusted values in GitHub-flavoured Markdown: as inert text or as a code span (pure).

Everything a gate report says about the skill under test (its name, task ids, suite
names, reasons, guard findings, refs, check values) comes from the pull request or from a
CI artifact, so it may be hostile (docs/design/170-gate-status-trust.md). Two ways in:

- :func:`md_code` — an inline code span that cannot be closed early: the fence is one
  backtick longer than the longest run inside; inside a code span GitHub renders no
  Markdown, no HTML, no mention and no link.
- :func:`md_text` — inline text with every Markdown and HTML construct made literal:
  ``& < >`` as entities, the punctuation that opens emphasis, links, images, code, tables
  and headings backslash-escaped, and ``@name`` / ``#123`` broken with a zero-width space
  so they neither mention anyone nor link an issue.

Both fold line breaks and other control and bidi characters into spaces (no value can
start a block: heading, list, table row, HTML block) and cap the length. ``cell=True``
makes :func:`md_code` escape ``|`` for GFM table cells (GitHub un-escapes ``\\|`` inside
code spans there; :func:`md_text` always escapes it). Both
break hidden-marker comments (``<!-- skillci:... -->``) so a value can never forge one.
"""

from __future__ import annotations

import re
import unicodedata

MAX_VALUE_CHARS = 300
ZWSP = "&#8203;"  # zero-width space, as an entity so the raw text shows it

# punctuation that opens emphasis, code, links, images, tables, headings, strikethrough
_MD_PUNCT = re.compile(r"([\\`*\[\]#|~])")
_UNDERSCORE = re.compile(r"(?<![A-Za-z0-9])_|_(?![A-Za-z0-9])")  # intraword _ is inert
_LEADING = re.compile(r"^(\s*)([-+=>])")  # a list item, setext underline or quote
_ORDERED = re.compile(r"^(\s*\d+)([.)])")  # "1." would open an ordered list in a list item
_SCHEME = re.compile(r":(?=//)")  # no autolink of scheme://...
_MENTION = re.compile(r"([@#])(?=[\w-])")


def _flatten(value: object, limit: int) -> str:
    s = "" if value is None else str(value)
    out = []
    for ch in s:
        cat = unicodedata.category(ch)
        # Cc: control (newlines, tabs, NUL, ESC); Cf: format (bidi overrides, zero-width);
        # Zl/Zp: line and paragraph separators
        out.append(" " if cat in ("Cc", "Cf", "Zl", "Zp") else ch)
    flat = "".join(out)
    if len(flat) > limit:
        flat = flat[: limit - 1] + "…"
    return flat


def md_text(value: object, *, limit: int = MAX_VALUE_CHARS) -> str:
    """``value`` as literal inline text (valid in and out of table cells)."""
    s = _flatten(value, limit)
    s = s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    s = _MD_PUNCT.sub(r"\\\1", s)
    s = _UNDERSCORE.sub(r"\\_", s)
    s = _LEADING.sub(r"\1\\\2", s)
    s = _ORDERED.sub(r"\1\\\2", s)
    s = _SCHEME.sub(r"\\:", s)
    return _MENTION.sub(lambda m: m.group(1) + ZWSP, s)


def md_code(value: object, *, cell: bool = False, limit: int = MAX_VALUE_CHARS) -> str:
    """``value`` as an inline code span nothing inside can close."""
    s = _flatten(value, limit)
    # a code span is literal, entities included: break marker comments with a real ZWSP
    s = s.replace("<!--", "<!\u200b--").replace("-->", "-\u200b->")
    if cell:
        s = s.replace("|", "\\|")
    if not s.strip():
        return "` `" if not s else f"`{s}`"
    longest = max((len(m) for m in re.findall(r"`+", s)), default=0)
    fence = "`" * (longest + 1)
    if "`" in s or (s.startswith(" ") and s.endswith(" ")):
        return f"{fence} {s} {fence}"
    return f"{fence}{s}{fence}"


def md_fence(text: str, lang: str = "") -> list[str]:
    """``text`` as a fenced code block (lines) that nothing inside can close: the fence is
    longer than any backtick run in ``text``; skillci's hidden markers are broken."""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    # fenced code shows an HTML comment as text, but skillci's marker parser reads the raw
    # body: a value may never spell one of skillci's markers
    body = text.replace("\r", " ").replace("<!-- skillci:", "<!\u200b-- skillci:")
    return [fence + lang, body, fence]
