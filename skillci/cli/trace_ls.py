"""The table of ``skillci trace ls``, and its light path (no typer, no pydantic).

``skillci trace ls`` with plain options (no ``--help``, nothing the light parser does not
know) is answered by :func:`run_light` straight from :func:`skillci.cli.main.main`: the
options are parsed here, the index is read with :func:`skillci.trace.index.read_runs` and
the table is printed by :func:`render_runs`, the same function the typer command
(:func:`skillci.cli.trace.ls_cmd`) uses; ``--json`` prints what the typer command's pydantic
``RunSummary`` dump prints (:func:`runs_json`). Anything else (a typo, ``--help``, a bad
value, an index only the store can read) goes the typer way, so errors and help read as for
every other command.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from skillci.cli.plain_table import Column
from skillci.flows.runs import RUN_COLUMNS, AgentRole, RunRow, default_home, list_runs, read_runs

TYPE_CHECKING = False  # typing is not imported at run time (start-up, design 260)
if TYPE_CHECKING:
    from typing import Any

#: ``--option`` -> keyword of :func:`list_runs` (the options of ``trace ls`` but ``--json``).
LIGHT_OPTIONS = {
    "--task": "task_id",
    "--role": "agent_role",
    "--model": "model_route",
    "--split": "split",
    "--skill-hash": "skill_hash",
    "--limit": "limit",
    "--home": "home",
}
DEFAULT_LIMIT = 50

STATE_STYLE = {
    "passed": "green",
    "failed": "red",
    "timeout": "yellow",
    "infra_error": "magenta",
    "verifier_error": "magenta",
    "not_run": "dim",
    "environment_unsupported": "yellow",
}


def parse_light(args: Sequence[str]) -> dict[str, Any] | None:
    """``trace ls``'s options as :func:`list_runs` keywords, or None when the typer command
    must parse them (anything but ``--json`` and ``--opt VALUE`` / ``--opt=VALUE`` pairs of
    :data:`LIGHT_OPTIONS` with valid values; a repeated option keeps the last value, as
    click does)."""
    out: dict[str, Any] = {"limit": DEFAULT_LIMIT}
    i = 0
    while i < len(args):
        if args[i] == "--json":
            out["json"] = True
            i += 1
            continue
        opt, eq, value = args[i].partition("=")
        if opt not in LIGHT_OPTIONS:
            return None
        if not eq:
            if i + 1 >= len(args):
                return None
            value = args[i + 1]
            i += 1
        i += 1
        key = LIGHT_OPTIONS[opt]
        if key == "limit":
            try:
                out[key] = int(value)
            except ValueError:
                return None
            if out[key] < 1:
                return None
        elif key == "agent_role":
            if value not in AgentRole.__members__.values():
                return None
            out[key] = AgentRole(value)
        elif key == "home":
            out[key] = Path(value)
        else:
            out[key] = value
    return out


def runs_table(
    root: Path, rows: Sequence[RunRow]
) -> tuple[str, list[Column], list[list[tuple[str, str]]]]:
    """``(title, columns, cells)`` of the runs table; a cell is ``(plain text, style name)``."""
    skills = {f"{r.skill_name}@{r.skill_version}" if r.skill_name else "-" for r in rows}
    one_skill = len(skills) == 1
    title = f"runs in {root}" + (f" (skill {next(iter(skills))})" if one_skill else "")
    columns = [
        Column("run id", drop_rank=2),
        Column("task", key=True),
        Column("role", drop_rank=3, no_wrap=True),
        Column("model", key=True),
        *([] if one_skill else [Column("skill", drop_rank=4)]),
        Column("split#rep", key=True),
        Column("state", key=True, no_wrap=True),
        Column("reward", drop_rank=5, no_wrap=True),
        Column("created", drop_rank=1, no_wrap=True),
    ]
    cells = []
    for r in rows:
        row = [r.run_id, r.task_id, r.agent_role.value, r.model_route]
        if not one_skill:
            row.append(f"{r.skill_name}@{r.skill_version}" if r.skill_name else "-")
        row += [
            f"{r.split or '-'}#{r.repeat_index}",
            r.state.value,
            "-" if r.reward is None else f"{r.reward:g}",
            r.created_at.strftime("%m-%d %H:%M"),
        ]
        state = len(row) - 3
        cells.append([(t, STATE_STYLE.get(t, "") if i == state else "") for i, t in enumerate(row)])
    return title, columns, cells


def render_runs_rich(root: Path, rows: Sequence[RunRow]) -> None:
    """Print the runs table with rich (see :func:`render_runs`)."""
    from rich.markup import escape

    from skillci.cli.output import console
    from skillci.cli.tables import fit_table, print_table

    title, columns, cells = runs_table(root, rows)
    markup = [[f"[{s}]{escape(t)}[/{s}]" if s else escape(t) for t, s in row] for row in cells]
    print_table(fit_table(columns, markup, title=escape(title)))
    console.print(f"{len(rows)} run(s)")


def render_runs(root: Path, rows: Sequence[RunRow]) -> None:
    """Print the runs table, fitted to the terminal, and the count: with the plain renderer
    (no rich import), or with rich when it declines; both print the same bytes."""
    import os

    import skillci.cli.plain_table as plain_table

    style = plain_table.console_style(os.environ, sys.stdout)
    if style is not None:
        title, columns, cells = runs_table(root, rows)
        width = plain_table.console_width(os.environ)
        text = plain_table.render(columns, cells, title=title, width=width, style=style)
        if text is not None:
            plain_table.write(f"{text}{len(rows)} run(s)\n")
            return
    render_runs_rich(root, rows)


def run_light(args: Sequence[str]) -> int | None:
    """Answer ``skillci trace ls ARGS`` without typer; None when typer must (see
    :func:`parse_light`)."""
    opts = parse_light(args)
    if opts is None:
        return None
    home = opts.pop("home", None)
    if opts.pop("json", False):
        root = (home if home is not None else default_home()).resolve()
        found = read_runs(root / "index.sqlite", **opts)
        text = None if found is None else runs_json(root, found)
        if text is None:  # the store reads (and reports) what read_runs cannot
            return None
        sys.stdout.write(text)
        sys.stdout.flush()
        return 0
    root, rows = list_runs(home, **opts)
    render_runs(root, rows)
    return 0


def runs_json(root: Path, rows: Sequence[RunRow]) -> str | None:
    """``trace ls --json``'s document, as the typer command prints it (``emit_json`` of the
    store's pydantic ``RunSummary`` rows: fields in index order, UTC times ending in ``Z``);
    None for a reward JSON has no number for (pydantic's choice then applies)."""
    import json

    runs = []
    for r in rows:
        if r.reward is not None and not -_INF < r.reward < _INF:
            return None
        run: dict[str, Any] = {name: getattr(r, name) for name in RUN_COLUMNS}
        run["agent_role"] = r.agent_role.value
        run["state"] = r.state.value
        stamp = r.created_at.isoformat()
        run["created_at"] = stamp[:-6] + "Z" if stamp.endswith("+00:00") else stamp
        runs.append(run)
    doc = {"store": str(root), "runs": runs}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


_INF = float("inf")
