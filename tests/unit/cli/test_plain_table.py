"""The plain table renderer prints the bytes rich prints for the same fitted table."""

from __future__ import annotations

import io

import pytest
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape

from skillci.cli.plain_table import Column, Style, plain_ok, render
from skillci.cli.tables import fit_table

COLUMNS = [
    Column("run id", drop_rank=2),
    Column("task", key=True),
    Column("role", drop_rank=3, no_wrap=True),
    Column("model", key=True),
    Column("state", key=True, no_wrap=True),
    Column("created", drop_rank=1, no_wrap=True),
]

ROWS = [
    ["run-20260813-100000-0001", "fix-the-cache-expiry-bug", "student", "sim/student", "passed"],
    [
        "run-20260813-100000-0002",
        "修复缓存过期错误的任务名称很长很长 and then some latin words",  # CJK: two cells each
        "teacher",
        "模型/通义千问-2.5-72b-instruct",
        "failed",
    ],
    [
        "run-3",
        "a" * 70,  # one word longer than any column: folded
        "oracle",
        "m [bold]not markup[/bold] [x]",
        "not_run",
    ],
    [
        "run-4",
        "ｱｲｳ half- and ｆｕｌｌ－width, e\u0301 combining, 👨\u200d👩 joined, ❤\ufe0f\u3000wide space",
        "production",
        "openai/gpt-4.1-mini-2025-04-14",
        "verifier_error",
    ],
]
STYLES = {"passed": "green", "failed": "red", "not_run": "dim", "verifier_error": "magenta"}


def _cells(rows: list[list[str]]) -> list[list[tuple[str, str]]]:
    return [[*((t, "") for t in r), ("08-13 10:00", "")] for r in rows]


def _style(rows: list[list[tuple[str, str]]]) -> list[list[tuple[str, str]]]:
    return [[(t, STYLES.get(t, "")) for t, _ in r] for r in rows]


def _rich(rows: list[list[tuple[str, str]]], title: str, width: int, style: Style) -> str:
    out = io.StringIO()
    console = Console(
        file=out,
        width=width,
        force_terminal=style.terminal,
        no_color=style.no_color,
        color_system="standard" if style.terminal else None,
        highlight=False,
        soft_wrap=True,
    )
    markup = [[f"[{s}]{escape(t)}[/{s}]" if s else escape(t) for t, s in r] for r in rows]
    console.print(fit_table(COLUMNS, markup, title=escape(title), width=width), soft_wrap=False)
    return out.getvalue()


@pytest.mark.parametrize("width", [12, 20, 30, 40, 55, 80, 100, 120, 160, 200])
@pytest.mark.parametrize(
    "style",
    [Style(terminal=False, no_color=False), Style(True, False), Style(True, True)],
    ids=["not-a-terminal", "colour", "NO_COLOR"],
)
@pytest.mark.parametrize("n_rows", [0, 1, 4])
def test_plain_renderer_prints_what_rich_prints(width: int, style: Style, n_rows: int) -> None:
    rows = _style(_cells(ROWS[:n_rows]))
    title = "runs in /tmp/pytest-of-someone/pytest-123/a-rather-long-directory-name/home"
    plain = render(COLUMNS, rows, title=title, width=width, style=style)
    assert plain is not None  # no fallback: the plain renderer answered
    assert plain == _rich(rows, title, width, style)
    if style.terminal:
        assert "\x1b[1m" in plain  # bold headers
        assert ("\x1b[32m" in plain) == (n_rows > 0 and not style.no_color and width >= 40)
    else:
        assert "\x1b" not in plain


def test_wide_and_narrow_tables_keep_key_columns() -> None:
    rows = _style(_cells(ROWS))
    narrow = render(COLUMNS, rows, title="t", width=80, style=Style(False, False))
    assert narrow is not None
    assert "not shown at 80 columns: created (--json has all)" in narrow
    assert max(cell_len(line) for line in narrow.splitlines()) <= 80
    wide = render(COLUMNS, rows, title="t", width=200, style=Style(False, False))
    assert wide is not None
    assert "not shown" not in wide
    assert "openai/gpt-4.1-mini-2025-04-14" in wide  # whole on one line when there is room


@pytest.mark.parametrize(
    "text",
    [
        "tab\there",
        "bell\x07",
        "line\u2028separator",
        "c1 \x85 control",
        "an :emoji_code: maybe",
        "::",
        "trailing backslash\\",
        "\\[escaped]",
    ],
)
def test_text_rich_would_change_is_left_to_rich(text: str) -> None:
    assert not plain_ok(text)
    rows = [[(text, "")] + [("x", "")] * (len(COLUMNS) - 1)]
    assert render(COLUMNS, rows, title="t", width=80, style=Style(False, False)) is None


@pytest.mark.parametrize("text", ["openai:gpt-4o", "a: b: c", "[bold]x[/bold]", "漢字 ｱ"])
def test_ordinary_text_is_plain(text: str) -> None:
    assert plain_ok(text)
