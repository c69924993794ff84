"""Markdown code spans and links, found in one pass (design 468).

skillci's readers of skill text took a code span to be what the pattern
``(`+)(?:(?!\\1).)+?\\1`` matches: a run of backticks, at least one character, and the first
run at least as long as the opener. Run by ``re``, that pattern tries every length of the
opening run at every backtick, and at each the body's lookahead reads the run again: 1,000
backticks took 7.3 s and the time grows with the cube of the run, and a skill's or a patch's
text chooses its own backticks. :func:`code_spans` finds exactly the spans ``re`` finds with that pattern
(``finditer``, with or without ``re.DOTALL``; a test compares them on random texts), in time
linear in the text.

Where ``re`` would find a span starting at a backtick ``p`` whose run has ``L`` backticks left:
it tries openers of ``k = L, L-1, ... 1`` backticks; the body's first character is the run's
next backtick (for ``k < L``), which the lookahead refuses unless fewer than ``k`` follow,
so ``k > L/2``; the body then ends at the first later run of at least ``k`` backticks (before
the line's end without ``DOTALL``). So the first ``k`` that works is ``min(L, M)``, with ``M``
the longest later run the body may reach, and it works only if ``M > L/2``: a start fails
exactly when ``L >= 2M``, and the first start that does not is found by arithmetic.

:func:`bracket_matches` does the same for the link patterns, which were quadratic on a run of
``[``.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from typing import NamedTuple

_RUN = re.compile(r"`+")


class CodeSpan(NamedTuple):
    start: int
    end: int
    ticks: int  # the opener's (and closer's) backticks: ``re``'s group 1


def code_spans(text: str, *, dotall: bool = True) -> list[CodeSpan]:
    """The spans ``re.finditer(r"(`+)(?:(?!\\1).)+?\\1", text[, re.DOTALL])`` yields, in order.
    Without ``dotall`` a span's body holds no newline."""
    runs = [(m.start(), m.end() - m.start()) for m in _RUN.finditer(text)]
    if len(runs) < 2:
        return []
    # the line of each run (without dotall a span's runs share a line) and the longest run
    # after each one that a body starting there may reach
    line = [text.count("\n", 0, runs[0][0])]
    for (a, r), (b, _r2) in itertools.pairwise(runs):
        line.append(line[-1] + text.count("\n", a + r, b))
    reach = [0] * (len(runs) + 1)
    for i in range(len(runs) - 2, -1, -1):
        if dotall or line[i + 1] == line[i]:
            reach[i] = max(runs[i + 1][1], reach[i + 1])
    out: list[CodeSpan] = []
    i, off = 0, 0  # the scan resumes at run i, ``off`` of its backticks already used
    while i < len(runs):
        s, r = runs[i]
        m = reach[i]
        if m == 0:
            i, off = i + 1, 0
            continue
        left = r - off
        if left >= 2 * m:  # no opener from here until fewer than 2m backticks are left
            left = 2 * m - 1
        p, k = s + r - left, min(left, m)
        j = i + 1
        while runs[j][1] < k:  # the first later run of k or more (reach says one exists)
            j += 1
        e = runs[j][0]
        out.append(CodeSpan(p, e + k, k))
        i, off = (j, k) if k < runs[j][1] else (j + 1, 0)
    return out


def sub_code_spans(text: str, repl: Callable[[str, CodeSpan], str], *, dotall: bool = True) -> str:
    """``text`` with each code span replaced by ``repl(span_text, span)``."""
    parts: list[str] = []
    at = 0
    for span in code_spans(text, dotall=dotall):
        parts += [text[at : span.start], repl(text[span.start : span.end], span)]
        at = span.end
    parts.append(text[at:])
    return "".join(parts)


def bracket_matches(rx: re.Pattern[str], text: str, *, escapes: bool) -> list[re.Match[str]]:
    """``list(rx.finditer(text))`` for a link pattern that begins ``\\[``, ``!?\\[`` or ``!\\[`` and whose
    bracketed text runs to the first ``]`` (``escapes``: the first not escaped by ``\\``, as
    ``(?:[^\\]\\\\]|\\\\.)*`` reads it; else as ``[^\\]]*``), in time linear in the text on a run of
    ``[`` (design 468).

    ``re`` tries the pattern at every ``[``; on a run of them each try reads to the same ``]``.
    Every ``[`` inside the bracketed text of a ``[`` that failed would read the same text after
    it (a ``[`` is never the first half of an escape pair), so it fails too: the scan goes on
    after that ``]``. A failed try whose text has no ``]`` ends the scan; one stopped by a
    backslash before a newline or the end (``.`` does not read a newline) goes on after it."""
    if rx.pattern.startswith("!?"):
        bang = "optional"
    elif rx.pattern.startswith("!"):
        bang = "required"
    else:
        bang = ""
    out: list[re.Match[str]] = []
    pos, n = 0, len(text)
    while (i := text.find("[", pos)) >= 0:
        start = i - 1 if bang and i > pos and text[i - 1] == "!" else i
        if bang == "required" and start == i:  # an image's "[" without its "!"
            pos = i + 1
            continue
        if m := rx.match(text, start):
            out.append(m)
            pos = max(m.end(), start + 1)
            continue
        k = i + 1
        if not escapes:
            k = text.find("]", k)
            if k < 0:
                break
        else:
            while k < n and text[k] != "]":
                if text[k] == "\\":
                    if k + 1 >= n or text[k + 1] == "\n":
                        break  # a lone backslash: the bracketed text cannot go on
                    k += 1
                k += 1
            if k >= n:
                break
        pos = k + 1
    return out


def bracket_sub(
    rx: re.Pattern[str], repl: str | Callable[[re.Match[str]], str], text: str, *, escapes: bool
) -> str:
    """``rx.sub(repl, text)`` through :func:`bracket_matches` (a ``str`` repl is a template)."""
    parts: list[str] = []
    at = 0
    for m in bracket_matches(rx, text, escapes=escapes):
        parts += [text[at : m.start()], m.expand(repl) if isinstance(repl, str) else repl(m)]
        at = m.end()
    parts.append(text[at:])
    return "".join(parts)
