"""Static compile checks itself: what a compiled package must still hold (issue 33, design 334).

After every move and at the end of a compile, the output is compared with the source:

- **constraints**: every constraint sentence of the source SKILL.md body (a prohibition,
  an obligation or a warning, in any case, in the corpus's languages; a heading counts as
  a sentence) is still in the output SKILL.md, verbatim (whitespace runs aside: a sentence
  that became a numbered step or wraps differently is the same sentence);
- **links**: no internal link (relative file link or ``#anchor``) of the output points at
  nothing unless the same target was already broken in the source;
- **line endings and encoding**: every markdown file keeps its own line-ending style (a
  new file takes SKILL.md's) and its byte-order mark, and stays UTF-8;
- **bootstrap**: the sections moved on demand made the bootstrap smaller (or none moved).

Pure: text in, findings out. :func:`restore_line_endings` is the one repair; everything
else is undone by the caller (``skillci.compile.static``), move by move or section by
section.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillci.compile.mdtext import parse, split_doc, split_sentences
from skillci.skill.references import anchors, link_problem, links

#: A constraint — a prohibition, an obligation or a warning — in any case, in the corpus's
#: languages (English, Chinese, Japanese, Korean), in a title or a line (design 333; a
#: restriction "only when/if/after/once/on" and 避免/请勿/避け/피하 "avoid": design 405).
CONSTRAINT = re.compile(
    r"\b(?:never|always|must(?:\s+not)?|do\s+not|don't|shall\s+not|avoid|forbidden|"
    r"prohibited|not\s+allowed|required|mandatory|warning|caution|critical|important|"
    r"guardrails?|stop|when\s+not\s+to|not\s+for|do\s+not\s+flag|always\s+flag|"
    r"only\s+(?:when|if|after|once|on))\b"
    r"|하지\s*말|금지|절대|반드시|주의|경고|피하|禁止|不要|不得|不能|切勿|务必|必须|注意|警告"
    r"|避免|严禁|请勿|不可"
    r"|してはいけない|しないで|しないこと|禁止|必ず|注意|警告|避け",
    re.IGNORECASE,
)

BOM = b"\xef\xbb\xbf"
Eol = Literal["crlf", "lf", "mixed", "none"]


def norm(text: str) -> str:
    """Whitespace runs as one space (a sentence's identity across re-wrapping)."""
    return " ".join(text.split())


def constraint_sentences(text: str) -> list[str]:
    """Every constraint sentence of a markdown text (frontmatter skipped): headings whose
    title holds a constraint, and sentences of paragraphs, quotes, list items and table
    rows that hold one. Code blocks and HTML are not sentences."""
    out: list[str] = []
    for sec in parse(split_doc(text)[1]):
        if sec.title and CONSTRAINT.search(sec.title):
            out.append(sec.heading.strip())
        for b in sec.blocks:
            if b.kind in ("code", "indented", "html", "blank"):
                continue
            pieces = [b.text] if b.kind == "para" else b.text.splitlines()
            for piece in pieces:
                sentences, _ = split_sentences(piece)
                out += [s.strip() for s in sentences if s.strip() and CONSTRAINT.search(s)]
    return out


def missing_constraints(source: str, output: str) -> list[str]:
    """Constraint sentences of ``source`` not in ``output`` verbatim (as often as before)."""
    have = norm(output)
    need = Counter(norm(s) for s in constraint_sentences(source))
    return [s for s, n in need.items() if have.count(s) < n]


def _broken(files: Mapping[str, bytes]) -> Counter[str]:
    texts = {
        rel: data.decode("utf-8", errors="replace")
        for rel, data in files.items()
        if rel.lower().endswith((".md", ".markdown", ".mdx"))
    }
    anchor_sets = {rel: anchors(t) for rel, t in texts.items()}
    out: Counter[str] = Counter()
    for rel, text in texts.items():
        for link in links(rel, text):
            if link_problem(link, rel, files, anchor_sets) is not None:
                out[link.path + (f"#{link.anchor}" if link.anchor else "")] += 1
    return out


def internal_links(files: Mapping[str, bytes]) -> int:
    """How many relative links and anchors the markdown files hold."""
    return sum(
        len(links(rel, data.decode("utf-8", errors="replace")))
        for rel, data in files.items()
        if rel.lower().endswith((".md", ".markdown", ".mdx"))
    )


def new_broken_links(before: Mapping[str, bytes], after: Mapping[str, bytes]) -> list[str]:
    """Link targets broken in ``after`` that were not broken (as often) in ``before``."""
    return sorted((_broken(after) - _broken(before)).elements())


def eol(data: bytes) -> Eol:
    crlf = data.count(b"\r\n")
    lf = data.count(b"\n") - crlf
    if crlf and lf:
        return "mixed"
    return "crlf" if crlf else "lf" if lf else "none"


def _own_eol(rel: str, before: Mapping[str, bytes], entry: str) -> Eol:
    src = before.get(rel)
    return eol(src) if src is not None else eol(before.get(entry, b""))


def restore_line_endings(
    before: Mapping[str, bytes], after: Mapping[str, bytes], entry: str
) -> dict[str, bytes]:
    """Changed markdown files of ``after`` converted back to their source's line endings
    (a new file takes ``entry``'s) when the source used CRLF throughout; only what changes."""
    out: dict[str, bytes] = {}
    for rel, data in after.items():
        if not rel.lower().endswith((".md", ".markdown", ".mdx")) or before.get(rel) == data:
            continue
        if _own_eol(rel, before, entry) == "crlf" and eol(data) != "crlf":
            fixed = data.replace(b"\r\n", b"\n").replace(b"\n", b"\r\n")
            if fixed != data:
                out[rel] = fixed
    return out


def eol_problems(before: Mapping[str, bytes], after: Mapping[str, bytes], entry: str) -> list[str]:
    """Markdown files whose line endings or encoding are no longer their own."""
    out: list[str] = []
    for rel, data in sorted(after.items()):
        if not rel.lower().endswith((".md", ".markdown", ".mdx")) or before.get(rel) == data:
            continue
        own = _own_eol(rel, before, entry)
        if own in ("crlf", "lf") and eol(data) not in (own, "none"):
            out.append(f"{rel}: line endings {eol(data)}, the file's own are {own}")
        src = before.get(rel, before.get(entry, b""))
        if src.startswith(BOM) != data.startswith(BOM):
            out.append(f"{rel}: byte-order mark {'added' if data.startswith(BOM) else 'lost'}")
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            out.append(f"{rel}: no longer UTF-8")
    return out


class SelfCheck(BaseModel):
    """What the compiled package was checked for, and what the check found."""

    model_config = ConfigDict(extra="forbid")

    constraint_sentences: int = Field(description="Constraint sentences in the source body.")
    constraints_missing: list[str] = Field(
        default_factory=list, description="Constraint sentences no longer in SKILL.md verbatim."
    )
    internal_links: int = Field(description="Relative links and anchors in the output.")
    links_broken: list[str] = Field(
        default_factory=list, description="Link targets the compile broke."
    )
    encoding_problems: list[str] = Field(
        default_factory=list, description="Files whose line endings or encoding changed."
    )
    bootstrap_ok: bool = Field(description="The moves shrank the bootstrap, or nothing moved.")
    undone: list[str] = Field(
        default_factory=list, description="Moves undone because they failed the check, with why."
    )

    @property
    def ok(self) -> bool:
        return (
            not self.constraints_missing
            and not self.links_broken
            and not self.encoding_problems
            and self.bootstrap_ok
        )


def check_package(
    before: Mapping[str, bytes],
    after: Mapping[str, bytes],
    entry: str,
    *,
    moved: bool,
    bootstrap_before: int,
    bootstrap_after: int,
    undone: list[str] | None = None,
) -> SelfCheck:
    """The self-check of one compile (see the module docstring)."""
    src = before.get(entry, b"").decode("utf-8", errors="replace")
    out = after.get(entry, b"").decode("utf-8", errors="replace")
    return SelfCheck(
        constraint_sentences=len(constraint_sentences(src)),
        constraints_missing=missing_constraints(src, out),
        internal_links=internal_links(after),
        links_broken=new_broken_links(before, after),
        encoding_problems=eol_problems(before, after, entry),
        bootstrap_ok=not moved or bootstrap_after < bootstrap_before,
        undone=list(undone or []),
    )


__all__ = [
    "CONSTRAINT",
    "SelfCheck",
    "check_package",
    "constraint_sentences",
    "eol",
    "eol_problems",
    "internal_links",
    "missing_constraints",
    "new_broken_links",
    "norm",
    "restore_line_endings",
]
