"""Tables that fit the terminal: key columns wrap (never cut or dropped); when the table is
still too wide, the least useful other columns are dropped, and a caption says which.

The choice of columns is :func:`skillci.cli.plain_table.fit_columns` (no rich); this module
builds the rich ``Table`` for it. :func:`skillci.cli.plain_table.render` prints the same
table without rich (design 260).
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from skillci.cli.plain_table import MIN_WRAP, Column, dropped_caption, fit_columns

__all__ = ["MIN_WRAP", "Column", "fit_table", "print_table"]


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
    keep, floors, dropped = fit_columns(columns, natural, width)
    table = Table(title=title, title_justify="left")
    for i in keep:
        c = columns[i]
        table.add_column(
            c.header,
            overflow="fold",
            min_width=floors[i],
            justify=c.justify,  # type: ignore[arg-type]
        )
    for r in rows:
        table.add_row(*(r[i] for i in keep))
    caption = dropped_caption(dropped, width)
    if caption:
        table.caption = caption
        table.caption_justify = "left"
    return table


def print_table(table: Table) -> None:
    """Print ``table`` fitted to the terminal (the shared console soft-wraps plain text)."""
    from skillci.cli.output import console

    console.print(table, soft_wrap=False)
