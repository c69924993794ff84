"""``skillci`` entry point: one command table, lazy loading, one error handler.

Registration (the one style): every CLI module defines ``app = typer.Typer(...)``. A module
whose ``app`` has one command is a top-level command (``skillci demo``); one with several
commands is a command group (``skillci trace ls``). :data:`COMMANDS` lists each by name,
module and one-line summary; the module is imported only when that command runs (or its
help is shown), so ``skillci --help`` and a single command start fast. To add a command:
write ``skillci/cli/NAME.py`` with its ``app`` and append one :class:`Entry`.

Known errors print one line (``::error ...::`` under GitHub Actions) and exit with their
code; usage errors exit 2; Ctrl-C exits 130; anything unexpected exits 3 with the traceback
written to a log file (and printed with ``-v``).
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from dataclasses import dataclass
from difflib import get_close_matches
from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

try:  # typer >= 0.2x vendors click as typer._click; older typer uses click itself
    import typer._click as click  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover
    import click  # type: ignore[no-redef,unused-ignore]

from skillci import __version__
from skillci.cli import output
from skillci.errors import ExitCode, SkillciError


@dataclass(frozen=True)
class Entry:
    """One top-level command or command group of ``skillci``."""

    name: str
    module: str
    summary: str
    group: bool = False


#: Every top-level command, in help order. ``group`` entries are command groups.
COMMANDS: tuple[Entry, ...] = (
    Entry("skill", "skillci.cli.skill", "Inspect and convert skill packages.", group=True),
    Entry("tasks", "skillci.cli.tasks", "List and check evaluation task directories.", group=True),
    Entry(
        "trace", "skillci.cli.trace", "Inspect stored run records (the trace store).", group=True
    ),
    Entry(
        "pr",
        "skillci.cli.pr",
        "Pull requests on the configured forge (local by default, or GitHub).",
        group=True,
    ),
    Entry(
        "patch", "skillci.cli.patch", "Check, apply, diff and version bounded patches.", group=True
    ),
    Entry("eval", "skillci.cli.eval", "Run evaluation suites.", group=True),
    Entry(
        "compile",
        "skillci.cli.compile",
        "Compile a skill for a target student: profile, static, fast, deep.",
        group=True,
    ),
    Entry(
        "evals",
        "skillci.cli.evals",
        "The release gate sharded over CI jobs: plan the matrix, run a shard, merge.",
        group=True,
    ),
    Entry(
        "gate",
        "skillci.cli.gate",
        "Re-run the student on base and head; accept (exit 0) or reject (exit 1).",
    ),
    Entry(
        "review",
        "skillci.cli.review",
        "Gate a PR and upsert its sticky comment and `skillci/gate` status.",
    ),
    Entry("report", "skillci.cli.report", "List and show stored gate reports.", group=True),
    Entry(
        "release",
        "skillci.cli.release",
        "Release a gated PR as <skill>@<version>, or close it if the gate rejected it.",
    ),
    Entry(
        "resolve",
        "skillci.cli.resolve",
        "The version/commit/path a deployment should load for a request.",
    ),
    Entry(
        "rollback",
        "skillci.cli.rollback",
        "Roll back: clear a running canary, else move stable to the previous release.",
    ),
    Entry(
        "channel",
        "skillci.cli.channel",
        "Release channels (stable, canary) kept as git refs, and their log.",
        group=True,
    ),
    Entry("canary", "skillci.cli.canary", "Canary a release, analyze it, promote it.", group=True),
    Entry(
        "propose",
        "skillci.cli.propose",
        "From a failing student trial to a PR with a bounded, evidenced patch.",
    ),
    Entry(
        "pipeline",
        "skillci.cli.pipeline",
        "raw eval -> static -> eval -> Fast -> eval -> Deep -> final eval (-> PR).",
    ),
    Entry(
        "demo",
        "skillci.cli.demo",
        "Run the whole loop on the embedded default in a fresh scratch repository.",
    ),
)


def load_command(entry: Entry) -> click.Command:
    """Import ``entry``'s module and build its click command (a group when ``entry.group``)."""
    app = importlib.import_module(entry.module).app
    if entry.group:
        return _plain_help(typer.main.get_group(app))
    cmd = typer.main.get_command(app)
    if isinstance(cmd, TyperGroup):  # pragma: no cover - a programming error, caught by tests
        raise TypeError(f"{entry.module}.app has several commands; mark {entry.name} group=True")
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
        # plain click help: no rich import, no command module import
        click.Command.format_help(self, ctx, formatter)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        with formatter.section("Commands"):
            formatter.write_dl([(e.name, e.summary) for e in COMMANDS])


def _version(value: bool) -> None:
    if value:
        typer.echo(f"skillci {__version__}")
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


def _annotate(err: SkillciError) -> str:
    """GitHub Actions workflow command for an error (file/line when known)."""
    props = []
    if err.file:
        props.append(f"file={err.file}")
    if err.line:
        props.append(f"line={err.line}")
    if err.col:
        props.append(f"col={err.col}")
    head = "::error " + ",".join(props) if props else "::error"
    msg = err.message + (f" (hint: {err.hint})" if err.hint else "")
    msg = msg.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return f"{head}::{msg}"


def report_error(err: SkillciError) -> None:
    if os.environ.get("GITHUB_ACTIONS") == "true":
        print(_annotate(err), file=sys.stderr)
    else:
        print(f"error: {err.one_line()}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    output.STATE.verbose = "-v" in args or "--verbose" in args
    try:
        app = build_app()
        result = app(args=args, prog_name="skillci", standalone_mode=False)
        return int(result) if isinstance(result, int) else 0
    except SkillciError as err:
        if output.STATE.verbose:
            traceback.print_exc()
        report_error(err)
        return int(err.exit_code)
    except typer.Exit as ex:
        return int(ex.exit_code)
    except typer.Abort:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except click.exceptions.ClickException as ex:
        ex.show()
        return int(ExitCode.INVALID_INPUT)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception:
        fd, log = tempfile.mkstemp(prefix="skillci-crash-", suffix=".log")
        with os.fdopen(fd, "w") as fh:
            traceback.print_exc(file=fh)
        if output.STATE.verbose:
            traceback.print_exc()
        exc = sys.exc_info()[1]
        print(
            f"error: internal error: {type(exc).__name__}: {exc} "
            f"(hint: traceback in {Path(log)}; re-run with -v and report it)",
            file=sys.stderr,
        )
        return int(ExitCode.INTERNAL)


def entrypoint() -> None:
    sys.exit(main())
