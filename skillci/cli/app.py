"""The typer side of the command table: lazy loading, plain help, readable metavars.

Imported by :func:`skillci.cli.main.main` only when a command runs (``skillci --help`` and
``skillci --version`` are answered without typer).
"""

from __future__ import annotations

import importlib
from difflib import get_close_matches
from typing import Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x vendors click as typer._click; older typer uses click itself
    import typer._click as click  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover
    import click  # type: ignore[no-redef,unused-ignore]

import skillci.cli.output as output
from skillci.cli.main import COMMANDS, Entry, root_help


def load_command(entry: Entry) -> click.Command:
    """Import ``entry``'s module and build its click command (a group when ``entry.group``)."""
    app = importlib.import_module(entry.module).app
    if entry.group:
        cmd: click.Command = typer.main.get_group(app)
    else:
        cmd = typer.main.get_command(app)
        if isinstance(cmd, TyperGroup):  # pragma: no cover - a programming error
            raise TypeError(f"{entry.module}.app has several commands; mark {entry.name} a group")
    cmd.name = entry.name  # the table's name wins over the function's
    return _plain_help(cmd)


def _plain_help(cmd: click.Command) -> click.Command:
    """Plain click help for ``cmd`` and its subcommands, with readable metavars.

    Plain help reads well at 80 columns and needs no rich; a value's metavar is its name
    (``--suite SUITE``) or its choices (``--sandbox [auto|bwrap|none|docker]``), never a
    Python type (``<str>``); flags show none.
    """
    if hasattr(cmd, "rich_markup_mode"):
        cmd.rich_markup_mode = None
    for p in cmd.params:
        if p.param_type_name == "argument":  # the name is shown; the Python type is not
            setattr(p, "display_type_rich", lambda ctx: None)  # noqa: B010
            continue
        if p.metavar is not None or getattr(p, "is_flag", False):
            continue
        desc = getattr(p, "type_descriptor", None)
        if desc is not None and desc.is_choice and desc.choices:
            p.metavar = "[" + "|".join(str(getattr(c, "value", c)) for c in desc.choices) + "]"
        elif p.name:
            p.metavar = p.name.upper()
    for sub in getattr(cmd, "commands", {}).values():
        _plain_help(sub)
    return cmd


class LazyGroup(TyperGroup):
    """The root group: commands come from :data:`COMMANDS` and load on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return [e.name for e in COMMANDS]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands:
            entry = next((e for e in COMMANDS if e.name == cmd_name), None)
            if entry is None:
                return None
            self.commands[cmd_name] = load_command(entry)
        return self.commands[cmd_name]

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return self._click_resolve_command(ctx, args)
        except click.exceptions.UsageError as e:
            matches = get_close_matches(args[0], self.list_commands(ctx)) if args else []
            if matches:
                e.message = e.message.rstrip(".") + f". Did you mean {matches[0]!r}?"
            raise

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # the same text main() prints without typer: no rich, no command module import
        formatter.write(root_help())


def _version(value: bool) -> None:
    if value:
        from skillci.version import describe

        typer.echo(describe())
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="skillci",
        cls=LazyGroup,
        help="Git-native CI/CD for agent Skills.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )

    @app.callback()
    def _root(
        verbose: bool = typer.Option(False, "--verbose", "-v", help="Show tracebacks."),
        version: bool = typer.Option(
            False, "--version", callback=_version, is_eager=True, help="Print the version."
        ),
    ) -> None:
        output.STATE.verbose = verbose

    return app


def all_commands() -> dict[str, click.Command]:
    """Every command, loaded (for tests and docs): ``{"trace ls": <command>, ...}``."""
    out: dict[str, click.Command] = {}

    def walk(prefix: str, cmd: Any) -> None:
        subs = getattr(cmd, "commands", None)
        if isinstance(subs, dict) and subs:
            for name, sub in subs.items():
                walk(f"{prefix} {name}", sub)
        else:
            out[prefix] = cmd

    for e in COMMANDS:
        walk(e.name, load_command(e))
    return out
