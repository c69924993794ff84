"""Markdown sections for ``change_loading_scope``: find, cut and append by heading text.

A section is an ATX heading line plus everything up to the next heading of the same or a
higher level. Headings inside fenced code blocks do not count. In SKILL.md only the body
(after the frontmatter) is searched, so a section move can never touch the frontmatter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

#: An ATX heading line (level marks, title); shared with skillci.compile.mdtext.
HEADING_RE = re.compile(r"^(#{1,6})[ \t]+(.*?)[ \t]*#*[ \t]*$")
#: The opening or closing line of a fenced code block (the fence marks).
FENCE_RE = re.compile(r"^[ ]{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class Section:
    title: str
    level: int
    start: int  # char offset of the heading line
    end: int  # char offset one past the section
    text: str


def headings(text: str, body_offset: int = 0) -> list[tuple[int, int, str]]:
    """(char offset, level, title) of every heading at or after ``body_offset``."""
    out = []
    pos = 0
    fence: str | None = None
    for line in text.splitlines(keepends=True):
        bare = line.rstrip("\r\n")
        m = FENCE_RE.match(bare)
        if m:
            mark = m.group(1)
            if fence is None:
                fence = mark[0] * len(mark)
            elif mark.startswith(fence):
                fence = None
        elif fence is None and pos >= body_offset:
            h = HEADING_RE.match(bare)
            if h:
                out.append((pos, len(h.group(1)), h.group(2).strip()))
        pos += len(line)
    return out


def find_sections(text: str, title: str, body_offset: int = 0) -> list[Section]:
    heads = headings(text, body_offset)
    found = []
    for i, (pos, level, name) in enumerate(heads):
        if name != title:
            continue
        end = len(text)
        for pos2, level2, _ in heads[i + 1 :]:
            if level2 <= level:
                end = pos2
                break
        found.append(Section(name, level, pos, end, text[pos:end]))
    return found


def cut(text: str, section: Section) -> str:
    """``text`` without ``section``; at most one blank line where it was, one final newline."""
    before = text[: section.start]
    after = text[section.end :]
    if not after:
        return before.rstrip("\n") + "\n"
    return before.rstrip("\n") + "\n\n" + after if before.strip() else after


def append(text: str, section_text: str) -> str:
    """``text`` with ``section_text`` appended after one blank line."""
    return text.rstrip("\n") + "\n\n" + section_text.strip("\n") + "\n"
