"""Protected literals: the exact strings static compile may move but never change.

A skill's procedure hangs on its literals — commands, paths, flags, numbers, identifiers,
URLs. Static compile rewrites the prose around them; the semantic guard then checks that
each section still holds every literal it held, as often as before (a multiset), and
that the rewrite brought in no literal of its own except those of the curated check
texts. See docs/design/101.

Extraction order: code spans (``...``, whole span) and URLs are taken first and masked,
then paths, flags, numbers and identifiers are found in the rest. Ordered-list markers
at the start of a line (``1.``) are structure, not literals.
"""

from __future__ import annotations

import re
from collections import Counter

from skillci.mdscan import code_spans

_URL = re.compile(
    r"\b(?:https?|ftp|file)://[^\s<>()`\"'\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]+"
    r"[^\s<>()`\"'.,;:!?\u3000-\u30ff\u3400-\u9fff\uff00-\uffef]"
)
_LIST_MARKER = re.compile(r"^([ \t]*)\d{1,9}[.)](?=[ \t])", re.MULTILINE)
_PATH = re.compile(
    r"(?<![\w/.~-])(?:~?\.{0,2}/)?[\w.-]+(?:/[\w.*-]+)+/?"
    r"|(?<![\w/.-])[\w-]+\.(?:py|md|json|jsonl|ya?ml|toml|txt|sh|js|ts|tsx|docx?|xlsx?|pptx?|pdf|csv|xml|html?|ini|cfg|log|ipynb|sql|rs|go|java|c|h|cpp)\b"
)
_FLAG = re.compile(r"(?<![\w-])--?[A-Za-z][\w-]*(?:=[^\s,;)]+)?")
_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,:]\d+)*%?(?![\w])")
_IDENT = re.compile(
    r"\b(?:[A-Za-z_][\w.]*\(\)"  # call() and module.call()
    r"|[A-Za-z_][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+"  # snake_case / CONSTANT_CASE
    r"|[a-z]+[A-Z][A-Za-z0-9]*"  # camelCase
    r"|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*"  # PascalCase with a second hump
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)"  # dotted.names
)


def _mask(text: str, spans: list[tuple[int, int]]) -> str:
    chars = list(text)
    for a, b in spans:
        for i in range(a, b):
            if chars[i] != "\n":
                chars[i] = " "
    return "".join(chars)


def literals(text: str) -> Counter[str]:
    """Multiset of protected literals in ``text`` (see the module docstring)."""
    found: Counter[str] = Counter()
    text = _LIST_MARKER.sub(lambda m: m.group(1) + " " * (len(m.group(0)) - len(m.group(1))), text)
    taken = [(s.start, s.end) for s in code_spans(text)]
    for a, b in taken:
        found[text[a:b]] += 1
    for m in _URL.finditer(_mask(text, taken)):
        found[text[m.start() : m.end()]] += 1
        taken.append((m.start(), m.end()))
    for rx in (_PATH, _FLAG, _IDENT, _NUMBER):
        masked = _mask(text, taken)
        for m in rx.finditer(masked):
            lit = text[m.start() : m.end()]
            if lit.strip(".-/") == "":
                continue
            found[lit] += 1
            taken.append((m.start(), m.end()))
    return found


def missing_literals(source: str, result: str) -> list[str]:
    """Literals of ``source`` that ``result`` holds fewer times than ``source`` does."""
    have = literals(result)
    return sorted(lit for lit, n in literals(source).items() if have[lit] < n)


def new_literals(source: str, result: str, allowed: Counter[str] | None = None) -> list[str]:
    """Literals ``result`` holds more often than ``source`` plus ``allowed`` do."""
    base = literals(source) + (allowed or Counter())
    return sorted(lit for lit, n in literals(result).items() if n > base[lit])


__all__ = ["literals", "missing_literals", "new_literals"]
