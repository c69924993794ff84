"""What a skill's documents point at: relative links, #anchors, files named in the text.

Pure. Used by lint (SK050 broken link or anchor, SK051 a bundled file nothing points to,
SK052 a script a shell cannot run as it is). Anchors follow GitHub's heading slugs (the
renderer the skills' authors preview with): lowercase, punctuation dropped except ``-``
and ``_``, spaces to ``-``, a repeated heading gets ``-1``, ``-2``; ``<a id=…>`` and
``<a name=…>`` count too. Code spans and fenced blocks are not links.
"""

from __future__ import annotations

import posixpath
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from urllib.parse import unquote

from skillci.mdscan import bracket_matches, bracket_sub, sub_code_spans

_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_INLINE = re.compile(r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)")
_HEADING_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_REFDEF = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+.*)?$")
_HEADING = re.compile(r"^ {0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
_HTML_ID = re.compile(r"<a\s+[^>]*(?:id|name)\s*=\s*[\"']([^\"']+)[\"']", re.IGNORECASE)
_SCHEME = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*:")
_MD = (".md", ".markdown", ".mdx")
SCRIPT_SUFFIXES = (".sh", ".bash", ".zsh", ".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl")
_NEVER_ORPHAN = ("license", "licence", "notice", "copying", "readme", "changelog", "__init__.py")


@dataclass(frozen=True)
class Link:
    """One link in a document: where it is and what it points at."""

    line: int
    col: int
    target: str  # as written
    path: str  # resolved package-relative path ("" for a same-document #anchor)
    anchor: str  # "" when none


def _prose_lines(text: str) -> list[tuple[int, str]]:
    """(1-based line, text with code spans blanked) of every line outside fenced blocks."""
    return [
        (i, sub_code_spans(line, lambda span, _: " " * len(span), dotall=False))
        for i, line in _raw(text)
    ]


def _raw(text: str) -> list[tuple[int, str]]:
    """(1-based line, text) of every line outside fenced blocks."""
    out: list[tuple[int, str]] = []
    fence = ""
    for i, line in enumerate(text.splitlines(), 1):
        m = _FENCE.match(line)
        if m:
            mark = m.group(1)
            if not fence:
                fence = mark
            elif mark[0] == fence[0] and len(mark) >= len(fence):
                fence = ""
            continue
        if fence:
            continue
        out.append((i, line))
    return out


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text."""
    text = bracket_sub(_HEADING_LINK, r"\1", heading, escapes=False)  # a link's text only
    text = re.sub(r"<[^>]+>", "", text).strip().lower()
    keep = []
    for ch in text:
        cat = unicodedata.category(ch)
        if ch in "-_" or cat[0] in "LNM":
            keep.append(ch)
        elif ch == " ":
            keep.append("-")
    return "".join(keep)


def anchors(text: str) -> set[str]:
    """Every #anchor a markdown document defines."""
    out: set[str] = set()
    seen: dict[str, int] = {}
    for _line, prose in _raw(text):
        m = _HEADING.match(prose)
        if m:
            s = slug(m.group(2))
            n = seen.get(s, 0)
            seen[s] = n + 1
            out.add(s if n == 0 else f"{s}-{n}")
        out.update(a.lower() for a in _HTML_ID.findall(prose))
    return out


def links(rel: str, text: str) -> list[Link]:
    """Relative links and anchors of document ``rel`` (URLs and absolute paths skipped)."""
    base = posixpath.dirname(rel)
    out: list[Link] = []
    for line, prose in _prose_lines(text):
        found = [(m.start(1), m.group(1)) for m in bracket_matches(_INLINE, prose, escapes=True)]
        d = _REFDEF.match(prose)
        if d:
            found.append((d.start(1), d.group(1)))
        for col, target in found:
            if not target or _SCHEME.match(target) or target.startswith(("/", "{", "$")):
                continue
            path, _, anchor = target.partition("#")
            path = unquote(path.split("?", 1)[0])
            resolved = posixpath.normpath(posixpath.join(base, path)) if path else ""
            out.append(Link(line, col + 1, target, resolved, unquote(anchor)))
    return out


def link_problem(
    link: Link, rel: str, files: Mapping[str, bytes], anchor_sets: Mapping[str, set[str]]
) -> str | None:
    """Why ``link`` (in document ``rel``) points at nothing, or None."""
    target = link.path or rel
    if link.path:
        if link.path.startswith("../") or link.path == "..":
            return None  # outside the package: not the package's to check
        is_dir = any(f.startswith(link.path.rstrip("/") + "/") for f in files)
        if link.path not in files and not is_dir and link.path != ".":
            return f"links to {link.target!r}, which is not in the skill"
        if is_dir:
            return None
    if link.anchor and target.lower().endswith(_MD):
        defined = anchor_sets.get(target)
        if defined is not None and link.anchor.lower() not in defined:
            where = "this document" if not link.path else target
            return f"links to #{link.anchor}, which no heading of {where} defines"
    return None


def mentioned(rel: str, corpus: str) -> bool:
    """Whether a file is named in ``corpus`` (path, file name, or a code file's stem)."""
    name = rel.rsplit("/", 1)[-1]
    if rel in corpus or name in corpus:
        return True
    stem, dot, suffix = name.rpartition(".")
    if dot and f".{suffix}" in SCRIPT_SUFFIXES and len(stem) > 2:
        return re.search(rf"(?<![\w-]){re.escape(stem)}(?![\w-])", corpus) is not None
    return False


def may_be_orphan(rel: str) -> bool:
    """Files nothing needs to point to: licences, READMEs, dotfiles, caches."""
    parts = rel.split("/")
    name = parts[-1].lower()
    return not (
        any(p.startswith(".") or p == "__pycache__" for p in parts)
        or name.startswith(_NEVER_ORPHAN)
        or name.endswith(".pyc")
    )


def is_script(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    return rel.startswith("scripts/") and (name.endswith(SCRIPT_SUFFIXES) or "." not in name)


_INTERPRETERS = frozenset(
    {
        "python",
        "python3",
        "node",
        "bash",
        "sh",
        "zsh",
        "ruby",
        "perl",
        "uv",
        "run",
        "deno",
        "bun",
        "tsx",
        "npx",
        "source",
        ".",
        "exec",
    }
)


def run_directly(rel: str, texts: Mapping[str, str]) -> bool:
    """Whether some text runs ``rel`` as a command (``./scripts/x.sh``, ``scripts/x.sh
    --flag`` starting a command), not through an interpreter (``python scripts/x.py``)."""
    pat = re.compile(rf"(\S*?)({re.escape(rel)})(?![\w.-])")
    for text in texts.values():
        for line in text.splitlines():
            for m in pat.finditer(line):
                prefix = m.group(1).lstrip("`'\"(")
                if prefix.endswith(("./", "}/")) and "[" not in prefix:
                    return True  # ./scripts/x.sh, ${SKILL_DIR}/scripts/x.sh
                if prefix:
                    continue  # part of a longer path, a URL or a link's text
                before = line[: m.start()].rstrip().rstrip("$>").rstrip()
                words = before.replace("`", " ").split()
                prev = words[-1] if words else ""
                if prev.rsplit("/", 1)[-1] in _INTERPRETERS or prev.startswith("-"):
                    continue
                if not words:
                    return True  # the command at the start of a line
                if prev in ("&&", ";", "|", "||", "$", "then", "do"):
                    return True
    return False


def script_problem(
    rel: str, data: bytes, executable: bool, modes_known: bool, direct: bool
) -> str | None:
    """Why a bundled script cannot be run the way the skill runs it, or None. ``direct``:
    the skill runs it as a command, so it needs a #! line and the executable bit."""
    shebang = data.startswith(b"#!")
    if modes_known and executable and not shebang:
        return "is executable but has no #! line: the kernel cannot run it"
    if not direct:
        return None
    if not shebang:
        return "is run as a command but has no #! line"
    if modes_known and not executable:
        return "is run as a command but lacks the executable bit: Permission denied"
    return None
