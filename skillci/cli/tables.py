"""Tables that fit the terminal: key columns wrap (never cut or dropped); when the table is
still too wide, the least useful other columns are dropped, and a caption says which."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from rich.table import Table
from rich.text import Text

#: A wrapping column is never squeezed below this many characters (or its widest cell).
MIN_WRAP = 12


@dataclass(frozen=True)
class Column:
    """One column of a :func:`fit_table`."""

    header: str
    key: bool = False  # never dropped: wraps when space is short
    drop_rank: int = 0  # for non-key columns: the lowest rank is dropped first
    no_wrap: bool = False  # shown whole (file names, ids, states); folds only if nothing else fits
    justify: str = "left"


def _cell_len(cell: str) -> int:
    return max((Text.from_markup(line).cell_len for line in cell.split("\n")), default=0)


def fit_table(
    columns: Sequence[Column],
    rows: Sequence[Sequence[str]],
    *,
    title: str | None = None,
    width: int | None = None,
) -> Table:
    """A rich table of ``rows`` (markup-escaped strings) that fits ``width`` columns.

    ``width`` defaults to the console's. Key columns are kept and wrap; other columns are
    dropped by ``drop_rank`` (lowest first) until the minimum widths fit.
    """
    if width is None:
        from skillci.cli.output import console

        width = console.width
    natural = [
        max([len(c.header), *(_cell_len(r[i]) for r in rows)]) for i, c in enumerate(columns)
    ]

    def floor(i: int) -> int:
        return natural[i] if columns[i].no_wrap else min(natural[i], MIN_WRAP)

    keep = list(range(len(columns)))
    dropped: list[str] = []
    droppable = sorted(
        (i for i, c in enumerate(columns) if not c.key), key=lambda i: columns[i].drop_rank
    )
    while sum(floor(i) + 3 for i in keep) + 1 > width and droppable:
        i = droppable.pop(0)
        keep.remove(i)
        dropped.append(columns[i].header)
    table = Table(title=title, title_justify="left")
    for i in keep:
        c = columns[i]
        table.add_column(
            c.header,
            overflow="fold",
            min_width=floor(i),
            justify=c.justify,  # type: ignore[arg-type]
        )
    for r in rows:
        table.add_row(*(r[i] for i in keep))
    if dropped:
        table.caption = f"not shown at {width} columns: {', '.join(dropped)} (--json has all)"
        table.caption_justify = "left"
    return table


def print_table(table: Table) -> None:
    """Print ``table`` fitted to the terminal (the shared console soft-wraps plain text)."""
    from skillci.cli.output import console

    console.print(table, soft_wrap=False)
