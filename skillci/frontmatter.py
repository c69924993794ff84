"""The one front-matter splitter (SKILL.md, BenchFlow ``task.md``): ``---``, the YAML,
``---`` (or ``...``), then the body. A fence line is ``---`` with trailing whitespace
allowed (``"--- \\n"`` fences, as python-frontmatter and Jekyll read it) but no leading
whitespace (an indented ``---`` is text). Imports nothing from skillci: ``skill`` and
``tasks`` both use it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Frontmatter:
    """The YAML front matter of a markdown file and where its body starts."""

    yaml_text: str
    body: str
    body_line: int  # 1-based line where the body starts
    present: bool

    @property
    def yaml_line(self) -> int:
        """1-based line of the first YAML line (2 when present)."""
        return 2 if self.present else 0


def _fence(line: str, marks: tuple[str, ...]) -> bool:
    return line.rstrip() in marks and not line[:1].isspace()


def split_frontmatter(text: str) -> Frontmatter:
    """Split ``---\\n<yaml>\\n---\\n<body>``. No opening fence, or none closing it: the whole
    text is the body and ``present`` is False."""
    lines = text.splitlines(keepends=True)
    if not lines or not _fence(lines[0], ("---",)):
        return Frontmatter("", text, 1, False)
    for i in range(1, len(lines)):
        if _fence(lines[i], ("---", "...")):
            return Frontmatter("".join(lines[1:i]), "".join(lines[i + 1 :]), i + 2, True)
    return Frontmatter("", text, 1, False)


__all__ = ["Frontmatter", "split_frontmatter"]
