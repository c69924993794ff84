"""A lossless block view of a skill's markdown, for static compile.

``parse`` splits a markdown body into sections (an ATX heading and everything up to the
next heading of any level; text before the first heading is section 0 with no heading),
and each section into blocks: fenced code (kept byte-exact, never rewritten), blank
lines, paragraphs, lists, quotes, tables, HTML and indented code. ``"".join`` of every
piece gives back the input exactly, so a section that static compile leaves alone — or
rolls back — is byte-identical.

Sentences: :func:`split_sentences` cuts a paragraph at ``.``/``!``/``?``/``。`` followed by
whitespace and an uppercase letter, a backtick, a digit or a CJK character, never inside
inline markup (a code span, a link or image, an autolink, bold or italic text) or a
quotation, and keeps
the separators so an untouched paragraph can be rebuilt exactly.

Inline markup: :func:`inline_spans` lists a text's code spans, links, images, autolinks
and emphasis (kind + content) — what static compile must give back unchanged
(docs/design/151); :func:`inline_ranges` gives their character ranges.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from skillci.mdscan import bracket_matches, code_spans, sub_code_spans
from skillci.patch.markdown import FENCE_RE, HEADING_RE
from skillci.skill.yamlio import split_frontmatter

BlockKind = Literal["blank", "code", "para", "list", "quote", "table", "html", "indented"]

_LIST_ITEM = re.compile(r"^[ ]{0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+")
_SENT_END = re.compile(
    # the end mark, possibly inside closing markup or quotes: `done.**`, `done.)`, `done."`
    r"(?:(?<=[.!?。！？])|(?<=[.!?]\*\*)|(?<=[.!?][*_\"')]))"
    r"(\s+)(?=[A-Z`\"'(\[\d*_]|[\u4e00-\u9fff])"
)
_CJK_END = re.compile(r"(?<=[。！？])(?=[^\s。！？])")
#: A quotation ("...", “...”): a sentence is not cut inside one either.
_QUOTED = re.compile(r"\"[^\"\n]{1,600}\"|“[^”\n]{1,600}”")
_IMAGE = re.compile(r"!\[(?:[^\]\\]|\\.)*\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_LINK = re.compile(r"\[(?:[^\]\\]|\\.)*\]\([^)\s]*(?:\s+\"[^\"]*\")?\)")
_REF_LINK = re.compile(r"\[(?:[^\]\\]|\\.)+\]\[[^\]]*\]")
_AUTOLINK = re.compile(r"<(?:https?|ftp|mailto):[^\s<>]+>")
_STRONG = re.compile(r"(\*\*|__)(?=\S)((?:(?!\n[ \t]*\n).)+?)(?<=\S)\1", re.DOTALL)
_EMPH = re.compile(
    r"(?<![\w*])\*(?=[^\s*])([^*\n]+?)(?<=[^\s*])\*(?![\w*])|(?<![\w_])_(?=[^\s_])([^_\n]+?)(?<=[^\s_])_(?![\w_])"
)


@dataclass(frozen=True)
class Block:
    """A run of lines of one kind; ``text`` keeps its newlines."""

    kind: BlockKind
    text: str


@dataclass(frozen=True)
class Section:
    """A heading (empty for the preamble) and its blocks."""

    index: int
    level: int
    """Heading level 1-6; 0 for the preamble before the first heading."""
    title: str
    heading: str
    """The heading line exactly as written, with its newline ('' for the preamble)."""
    blocks: tuple[Block, ...] = field(default=())

    @property
    def text(self) -> str:
        return self.heading + "".join(b.text for b in self.blocks)

    @property
    def code_blocks(self) -> list[str]:
        return [b.text for b in self.blocks if b.kind in ("code", "indented")]


@dataclass(frozen=True)
class SkillDoc:
    """SKILL.md as frontmatter (raw, with its fences) + sections of the body."""

    frontmatter: str
    sections: tuple[Section, ...]

    @property
    def body(self) -> str:
        return "".join(s.text for s in self.sections)

    @property
    def text(self) -> str:
        return self.frontmatter + self.body


def split_doc(text: str) -> tuple[str, str]:
    """(frontmatter text including both ``---`` lines, body)."""
    fm = split_frontmatter(text)
    if not fm.present:
        return "", text
    return text[: len(text) - len(fm.body)], fm.body


def parse_doc(text: str) -> SkillDoc:
    front, body = split_doc(text)
    return SkillDoc(front, tuple(parse(body)))


def _kind(line: str) -> BlockKind:
    bare = line.rstrip("\r\n")
    if not bare.strip():
        return "blank"
    if _LIST_ITEM.match(bare):
        return "list"
    s = bare.lstrip(" ")
    if bare.startswith(("    ", "\t")):
        return "indented"
    if s.startswith(">"):
        return "quote"
    if s.startswith("|"):
        return "table"
    if s.startswith("<"):
        return "html"
    return "para"


def _blocks(lines: list[str]) -> list[Block]:
    out: list[Block] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        m = FENCE_RE.match(line.rstrip("\r\n"))
        if m:
            mark = m.group(1)
            j = i + 1
            while j < len(lines):
                close = FENCE_RE.match(lines[j].rstrip("\r\n"))
                # the closing rule of skillci.patch.markdown: same character, at least as long
                if close and close.group(1).startswith(mark[0] * len(mark)):
                    break
                j += 1
            out.append(Block("code", "".join(lines[i : j + 1])))
            i = j + 1
            continue
        kind = _kind(line)
        j = i + 1
        while j < len(lines) and not FENCE_RE.match(lines[j].rstrip("\r\n")):
            nxt = _kind(lines[j])
            if kind == "blank":
                if nxt != "blank":
                    break
            elif kind == "list":
                # continuation lines (indented or lazy) and further items belong to the list
                if nxt == "blank":
                    break
            elif nxt != kind:
                break
            j += 1
        out.append(Block(kind, "".join(lines[i:j])))
        i = j
    return out


def parse(body: str) -> list[Section]:
    """Sections of a markdown body (see the module docstring)."""
    lines = body.splitlines(keepends=True)
    heads: list[tuple[int, int, str]] = []
    fence: str | None = None
    for n, line in enumerate(lines):
        bare = line.rstrip("\r\n")
        m = FENCE_RE.match(bare)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
            elif mark.startswith(fence):
                fence = None
            continue
        if fence is None:
            h = HEADING_RE.match(bare)
            if h:
                heads.append((n, len(h.group(1)), h.group(2).strip()))
    sections: list[Section] = []
    starts = [n for n, _, _ in heads]
    if not heads or starts[0] > 0:
        end = starts[0] if heads else len(lines)
        sections.append(Section(0, 0, "", "", tuple(_blocks(lines[:end]))))
    for k, (n, level, title) in enumerate(heads):
        end = starts[k + 1] if k + 1 < len(heads) else len(lines)
        sections.append(
            Section(len(sections), level, title, lines[n], tuple(_blocks(lines[n + 1 : end])))
        )
    return sections


# ---------------------------------------------------------------------------- sentences


def mask_code_spans(text: str) -> str:
    """``text`` with every code span's inside replaced by ``x`` (same length)."""
    return sub_code_spans(
        text, lambda span, s: "`" * s.ticks + "x" * (len(span) - 2 * s.ticks) + "`" * s.ticks
    )


def code_span_ranges(text: str) -> list[tuple[int, int]]:
    return [(s.start, s.end) for s in code_spans(text)]


InlineKind = Literal["code", "image", "link", "autolink", "strong", "emph"]


def _blank(text: str, ranges: list[tuple[int, int]]) -> str:
    out = list(text)
    for a, b in ranges:
        for i in range(a, b):
            if out[i] != "\n":
                out[i] = " "
    return "".join(out)


def _inline(text: str) -> list[tuple[int, int, InlineKind]]:
    found: list[tuple[int, int, InlineKind]] = [(s.start, s.end, "code") for s in code_spans(text)]
    # links and emphasis are looked for with code spans blanked out (no markup inside code)
    masked = _blank(text, [(a, b) for a, b, _ in found])
    # links and images through bracket_matches: re reads a run of "[" from each (design 468)
    for kind, ms in (
        ("image", bracket_matches(_IMAGE, masked, escapes=True)),
        ("link", bracket_matches(_LINK, masked, escapes=True)),
        ("link", bracket_matches(_REF_LINK, masked, escapes=True)),
        ("autolink", list(_AUTOLINK.finditer(masked))),
    ):
        for m in ms:
            if not any(a < m.end() and m.start() < b for a, b, _ in found):
                found.append((m.start(), m.end(), kind))  # type: ignore[arg-type]
    # emphasis: link targets (URLs with underscores) are not emphasis
    targets = [(a, b) for a, b, k in found if k in ("image", "link", "autolink")]
    em_masked = _blank(
        masked, [(masked.index("](", a) + 1, b) for a, b in targets if "](" in masked[a:b]]
    )
    for kind, rx in (("strong", _STRONG), ("emph", _EMPH)):
        for m in rx.finditer(em_masked):
            inside = [(a, b) for a, b, k in found if k in ("strong", "emph")]
            if any(a < m.start() < b or a < m.end() - 1 < b for a, b in inside) and kind == "emph":
                continue
            found.append((m.start(), m.end(), kind))  # type: ignore[arg-type]
    return sorted(found)


def inline_ranges(text: str) -> list[tuple[int, int]]:
    """Character ranges of every inline markup element of ``text`` (they may nest)."""
    return [(a, b) for a, b, _ in _inline(text)]


def inline_spans(text: str) -> list[tuple[InlineKind, str]]:
    """(kind, text with whitespace runs as one space) of every inline markup element, in
    order: code spans, images, links, autolinks, bold and italic text."""
    return [(k, " ".join(text[a:b].split())) for a, b, k in _inline(text)]


def markup(text: str, *, has_frontmatter: bool = True) -> list[tuple[str, str]]:
    """Every inline markup element and fenced/indented code block of a markdown file, as
    (kind, text): inline elements per heading line and per prose block (whitespace runs
    as one space), code blocks byte for byte. The frontmatter is not included."""
    sections = parse_doc(text).sections if has_frontmatter else tuple(parse(text))
    out: list[tuple[str, str]] = []
    for sec in sections:
        out += inline_spans(sec.heading)
        for b in sec.blocks:
            if b.kind in ("code", "indented"):
                out.append(("code_block", b.text))
            elif b.kind != "html":
                out += inline_spans(b.text)
    return out


def split_sentences(text: str) -> tuple[list[str], list[str]]:
    """(sentences, separators) with ``sentences[0] + seps[0] + sentences[1] + ... == text``.

    The trailing newline(s) of a paragraph go into the last separator.
    """
    core = text.rstrip("\r\n")
    tail = text[len(core) :]
    masked = mask_code_spans(core)
    markup = inline_ranges(core) + [(m.start(), m.end()) for m in _QUOTED.finditer(masked)]
    cuts: list[tuple[int, int]] = [(m.start(1), m.end(1)) for m in _SENT_END.finditer(masked)]
    cuts += [(m.start(), m.start()) for m in _CJK_END.finditer(masked)]
    cuts = sorted(c for c in cuts if not any(a < c[0] < b for a, b in markup))
    sentences: list[str] = []
    seps: list[str] = []
    pos = 0
    for a, b in cuts:
        if a <= pos and sentences:
            continue
        sentences.append(core[pos:a])
        seps.append(core[a:b])
        pos = b
    sentences.append(core[pos:])
    seps.append(tail)
    return sentences, seps


def join_sentences(sentences: list[str], seps: list[str]) -> str:
    return "".join(s + sep for s, sep in zip(sentences, seps, strict=True))


__all__ = [
    "Block",
    "BlockKind",
    "InlineKind",
    "Section",
    "SkillDoc",
    "code_span_ranges",
    "inline_ranges",
    "inline_spans",
    "join_sentences",
    "markup",
    "mask_code_spans",
    "parse",
    "parse_doc",
    "split_doc",
    "split_sentences",
]
