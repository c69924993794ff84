"""Tables that fit the terminal, without rich: the column choice every table uses, and a
plain renderer that prints what rich prints for it (``skillci trace ls``'s fast path).

:func:`fit_columns` decides which columns a table keeps at a width (design 126): key columns
wrap and are never dropped, the others are dropped by ``drop_rank`` until the minimum widths
fit. :mod:`skillci.cli.tables` builds a rich ``Table`` from that choice; :func:`render` here
lays the same table out the way rich 15 does for that ``Table`` (its ``HEAVY_HEAD`` box,
padding 1, a left-justified title and caption, cells that word-wrap and fold) and writes the
same bytes, escape codes included, so a command may print through either (design 260).

It imports no rich for printable-ASCII text. Text with other characters is measured, folded
and cropped with :mod:`rich.cells` (the width tables and grapheme rules rich itself uses; a
small import). Anything it does not model (control characters, ``:name:`` emoji codes, a
non-UTF-8 or dumb terminal, Windows, columns narrower than 3) makes :func:`render` return
None, and the caller prints with rich.
"""

from __future__ import annotations

import os
import re
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

#: A wrapping column is never squeezed below this many characters (or its widest cell).
MIN_WRAP = 12

#: rich's style names used by the tables -> their SGR parameters (rich emits the same codes
#: for these under every colour system). Colours are dropped under ``NO_COLOR``; attributes stay.
SGR = {"bold": "1", "dim": "2", "italic": "3", "dim italic": "2;3"}
COLOURS = {"red": "31", "green": "32", "yellow": "33", "magenta": "35"}

_ASCII = frozenset(map(chr, range(0x20, 0x7F)))
_WORD = re.compile(r"\s*\S+\s*")
_TRAILING_SPACE = re.compile(r"\s+$")

# (top-left, fill, join, top-right) of each rule, and the verticals, of rich's HEAVY_HEAD box.
_TOP = ("┏", "━", "┳", "┓")
_HEAD_RULE = ("┡", "━", "╇", "┩")
_BOTTOM = ("└", "─", "┴", "┘")
_HEAD_BAR = "┃"
_BODY_BAR = "│"


class Column:
    """One column of a fitted table."""

    __slots__ = ("drop_rank", "header", "justify", "key", "no_wrap")

    def __init__(
        self,
        header: str,
        key: bool = False,
        drop_rank: int = 0,
        no_wrap: bool = False,
        justify: str = "left",
    ) -> None:
        self.header = header
        self.key = key  # never dropped: wraps when space is short
        self.drop_rank = drop_rank  # for non-key columns: the lowest rank is dropped first
        self.no_wrap = no_wrap  # shown whole (ids, states); folds only if nothing else fits
        self.justify = justify

    def __repr__(self) -> str:
        return f"Column({self.header!r}, key={self.key}, drop_rank={self.drop_rank})"


def fit_columns(
    columns: Sequence[Column], natural: Sequence[int], width: int
) -> tuple[list[int], list[int], list[str]]:
    """``(kept column indices, minimum width of every column, dropped headers)`` for a table
    whose columns are at most ``natural`` cells wide, printed ``width`` columns wide."""
    floors = [n if c.no_wrap else min(n, MIN_WRAP) for c, n in zip(columns, natural, strict=True)]
    keep = list(range(len(columns)))
    dropped: list[str] = []
    droppable = sorted(
        (i for i, c in enumerate(columns) if not c.key), key=lambda i: columns[i].drop_rank
    )
    while sum(floors[i] + 3 for i in keep) + 1 > width and droppable:
        i = droppable.pop(0)
        keep.remove(i)
        dropped.append(columns[i].header)
    return keep, floors, dropped


def dropped_caption(dropped: Sequence[str], width: int) -> str | None:
    """The caption naming the columns :func:`fit_columns` dropped (None when none were)."""
    if not dropped:
        return None
    return f"not shown at {width} columns: {', '.join(dropped)} (--json has all)"


class Cells:
    """Cell-width arithmetic: ``len`` for printable ASCII, :mod:`rich.cells` otherwise."""

    def __init__(self, texts: Sequence[str]) -> None:
        self.ascii = all(_ASCII.issuperset(t) for t in texts)
        if not self.ascii:
            from rich.cells import cell_len, chop_cells, set_cell_size

            self.len: Callable[[str], int] = cell_len
            self.chop: Callable[[str, int], list[str]] = chop_cells
            self.fit: Callable[[str, int], str] = set_cell_size
        else:
            self.len = len
            self.chop = lambda s, w: [s[i : i + w] for i in range(0, len(s), w)]
            self.fit = lambda s, w: s[:w] + " " * (w - len(s))


def plain_ok(text: str) -> bool:
    """Whether :func:`render` prints ``text`` as rich would: no control characters (rich
    strips some), no ``:name:`` (rich may turn it into an emoji), no trailing backslash or ``\\[``."""
    if any(ch < " " or "\x7f" <= ch < "\xa0" or ch in "\u2028\u2029" for ch in text):
        return False
    if text.endswith("\\") or "\\[" in text:  # rich.markup.escape does not round-trip these
        return False
    interior = text.split(":")[1:-1]
    return all(any(ch.isspace() for ch in part) for part in interior)


def _measure(text: str, avail: int, cells: Cells) -> tuple[int, int]:
    """rich's ``Measurement.get`` of ``Padding(text, (0, 1))`` with ``avail`` cells."""

    def normal(lo: int, hi: int) -> tuple[int, int]:
        lo = max(0, min(max(0, lo), hi))
        return lo, max(0, lo, hi)

    def get(lo: int, hi: int) -> tuple[int, int]:
        lo, hi = normal(lo, hi)
        lo, hi = min(lo, avail), min(hi, avail)
        return (0, 0) if hi < 1 else normal(lo, hi)

    if avail < 1:
        return 0, 0
    if avail - 2 < 1:
        return get(avail, avail)
    widest = cells.len(text) if text else 0
    words = text.split()
    lo, hi = get(max(map(cells.len, words)) if words else widest, widest)
    return get(min(lo + 2, avail), min(hi + 2, avail))


def _column_width(texts: Sequence[str], min_width: int, avail: int, cells: Cells) -> int:
    """rich's ``Table._measure_column(...).maximum`` of a column with ``avail`` cells."""
    if avail < 1:
        return 0
    hi = min(max(_measure(t, avail, cells)[1] for t in texts), avail)
    return max(hi, min_width + 2)


def _reduce(total: int, ratios: list[int], maximums: list[int], values: list[int]) -> list[int]:
    """rich's ``ratio_reduce``: take ``total`` from ``values`` in proportion to ``ratios``."""
    ratios = [r if m else 0 for r, m in zip(ratios, maximums, strict=True)]
    left_ratio, left = sum(ratios), total
    out = []
    for ratio, maximum, value in zip(ratios, maximums, values, strict=True):
        if ratio and left_ratio > 0:
            taken = min(maximum, round(ratio * left / left_ratio))
            out.append(value - taken)
            left -= taken
            left_ratio -= ratio
        else:
            out.append(value)
    return out


def _widths(texts: list[list[str]], mins: list[int], avail: int, cells: Cells) -> list[int]:
    """The column widths (padding included) rich gives a table with ``avail`` cells."""
    widths = [_column_width(t, m, avail, cells) or 1 for t, m in zip(texts, mins, strict=True)]
    if sum(widths) <= avail:
        return widths
    excess = sum(widths) - avail
    while excess > 0:  # narrow the widest columns to the next widest, in turn
        widest = max(widths)
        second = max((w for w in widths if w != widest), default=0)
        if not widest - second:
            break
        ratios = [int(w == widest) for w in widths]
        widths = _reduce(excess, ratios, [min(excess, widest - second)] * len(widths), widths)
        excess = sum(widths) - avail
    if excess > 0:  # then all evenly
        widths = _reduce(excess, [1] * len(widths), widths, widths)
    return [_column_width(t, m, w, cells) for t, m, w in zip(texts, mins, widths, strict=True)]


def _wrap(text: str, width: int, cells: Cells) -> list[tuple[str, str]]:
    """``text`` word-wrapped (long words folded) to ``width`` cells, as rich's ``Text.wrap``
    with left justification: ``(text of the line, padding spaces)`` per line."""
    breaks: list[int] = []
    offset = 0
    for match in _WORD.finditer(text):
        start, word = match.start(), match.group()
        size = cells.len(word.rstrip())
        if width - offset >= size:
            offset += cells.len(word)
        elif size > width:
            pieces = cells.chop(word, width)
            for piece in pieces[:-1]:
                if start:
                    breaks.append(start)
                start += len(piece)
            if start:
                breaks.append(start)
            offset = cells.len(pieces[-1])
        elif offset and start:
            breaks.append(start)
            offset = cells.len(word)
    lines = []
    for a, b in zip([0, *breaks], [*breaks, len(text)], strict=True):
        line = text[a:b]
        if len(line) > width and (space := _TRAILING_SPACE.search(line)):
            line = line[: len(line) - min(len(space.group()), len(line) - width)]
        size = cells.len(line)
        if size > width:
            line = cells.fit(line, width)
        lines.append((line, " " * (width - size) if size < width else ""))
    return lines


Segment = tuple[str, str]  # (text, SGR parameters or "")


def _cropped(line: list[Segment], width: int, cells: Cells) -> list[Segment]:
    """``line`` cut to ``width`` cells, as rich crops a line wider than the console."""
    out: list[Segment] = []
    used = 0
    for text, sgr in line:
        size = cells.len(text)
        if used + size < width:
            out.append((text, sgr))
            used += size
        else:
            out.append((cells.fit(text, width - used), sgr))
            break
    return out


def _emit(line: list[Segment]) -> str:
    return "".join(f"\x1b[{sgr}m{text}\x1b[0m" if sgr else text for text, sgr in line if text)


class Style:
    """How rich's console would style the output: its terminal and ``NO_COLOR`` rules."""

    def __init__(self, terminal: bool, no_color: bool) -> None:
        self.terminal = terminal
        self.no_color = no_color

    def sgr(self, name: str) -> str:
        if not self.terminal or not name:
            return ""
        if name in COLOURS:
            return "" if self.no_color else COLOURS[name]
        return SGR[name]


def console_style(environ: Mapping[str, str], stream: object) -> Style | None:
    """rich's colour decision for ``stream`` under ``environ``; None when rich would do
    something :func:`render` does not (a dumb terminal, Windows, a non-UTF-8 stream)."""
    if os.name == "nt" or not (getattr(stream, "encoding", None) or "utf-8").lower().startswith(
        "utf"
    ):
        return None
    compatible = environ.get("TTY_COMPATIBLE", "")
    force = environ.get("FORCE_COLOR")
    if compatible in ("0", "1"):
        terminal = compatible == "1"
    elif force is not None:
        terminal = force != ""
    else:
        isatty = getattr(stream, "isatty", None)
        try:
            terminal = bool(isatty()) if isatty is not None else False
        except ValueError:
            terminal = False
    if terminal and environ.get("TERM", "").lower() in ("dumb", "unknown"):
        return None
    return Style(terminal, environ.get("NO_COLOR", "") != "")


def console_width(environ: Mapping[str, str]) -> int:
    """The width rich's console uses: ``$COLUMNS``, else the terminal's, else 80."""
    columns = environ.get("COLUMNS")
    if columns is not None and columns.isdigit():
        return int(columns)
    for fd in (0, 1, 2):
        try:
            return os.get_terminal_size(fd).columns or 80
        except (AttributeError, ValueError, OSError):
            continue
    return 80


def render(
    columns: Sequence[Column],
    rows: Sequence[Sequence[tuple[str, str]]],
    *,
    title: str,
    width: int,
    style: Style,
) -> str | None:
    """The table of ``rows`` (``(text, style name)`` cells, plain text) as rich prints the
    rich ``Table`` :func:`skillci.cli.tables.fit_table` builds for them, or None when this
    renderer cannot promise that (see the module docstring)."""
    texts = [title, *(c.header for c in columns), *(t for r in rows for t, _ in r)]
    if not all(plain_ok(t) for t in texts):
        return None
    cells = Cells(texts)
    natural = [
        max([len(c.header), *(cells.len(r[i][0]) for r in rows)]) for i, c in enumerate(columns)
    ]
    keep, floors, dropped = fit_columns(columns, natural, width)
    if not keep:
        return None
    caption = dropped_caption(dropped, width)
    by_column = [[columns[i].header, *(r[i][0] for r in rows)] for i in keep]
    widths = _widths(by_column, [floors[i] for i in keep], width - len(keep) - 1, cells)
    if min(widths) < 3:
        return None
    table_width = sum(widths) + len(keep) + 1
    lines: list[list[Segment]] = []

    def annotate(text: str, name: str) -> None:
        sgr = style.sgr(name)
        lines.extend([(t + pad, sgr)] for t, pad in _wrap(text, table_width, cells))

    def rule(parts: tuple[str, str, str, str]) -> None:
        left, fill, join, right = parts
        lines.append([(left + join.join(fill * w for w in widths) + right, "")])

    def row(row_cells: Sequence[tuple[str, str]], header: bool) -> None:
        bar = _HEAD_BAR if header else _BODY_BAR
        cell_sgr = style.sgr("bold") if header else ""
        wrapped = [_wrap(t, w - 2, cells) for (t, _), w in zip(row_cells, widths, strict=True)]
        height = max(map(len, wrapped))
        grid = []
        for (_, name), w, cell in zip(row_cells, widths, wrapped, strict=True):
            text_sgr = cell_sgr or style.sgr(name)
            body = [
                [(" ", cell_sgr), (t, text_sgr), (pad, cell_sgr), (" ", cell_sgr)]
                if not cell_sgr
                else [(" ", cell_sgr), (t + pad, cell_sgr), (" ", cell_sgr)]
                for t, pad in cell
            ]
            blank = [[(" " * w, cell_sgr)]] * (height - len(body))
            grid.append(blank + body if header else body + blank)
        for n in range(height):
            line: list[Segment] = [(bar, "")]
            for cell_lines in grid:
                line += [*cell_lines[n], (bar, "")]
            lines.append(line)

    annotate(title, "italic")
    rule(_TOP)
    row([(columns[i].header, "") for i in keep], header=True)
    rule(_HEAD_RULE)
    for r in rows:
        row([r[i] for i in keep], header=False)
    rule(_BOTTOM)
    if caption:
        annotate(caption, "dim italic")
    return "".join(_emit(_cropped(line, width, cells)) + "\n" for line in lines)


def write(text: str) -> None:
    """Write ``text`` to stdout (what the renderer returned)."""
    sys.stdout.write(text)
    sys.stdout.flush()
