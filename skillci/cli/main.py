"""``skillci`` entry point: one error handler around ``main(argv) -> int``.

Known errors print one line (``::error ...::`` under GitHub Actions) and exit with their
code; Ctrl-C exits 130; anything unexpected exits 3 with the traceback written to a log
file (and printed with ``-v``).
"""

from __future__ import annotations

import importlib
import os
import sys
import tempfile
import traceback
from collections.abc import Sequence
from pathlib import Path

import typer

try:  # typer >= 0.2x vendors click as typer._click; older typer uses click itself
    import typer._click as click  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover
    import click  # type: ignore[no-redef,unused-ignore]

from skillci import __version__
from skillci.cli import output
from skillci.errors import ExitCode, SkillciError

#: (command group name, module defining ``app``). Each module is a thin CLI over one domain.
SUBCOMMANDS: list[tuple[str, str]] = [
    ("skill", "skillci.cli.skill"),
    ("tasks", "skillci.cli.tasks"),
    ("trace", "skillci.cli.trace"),
    ("pr", "skillci.cli.pr"),
    ("patch", "skillci.cli.patch"),
    ("eval", "skillci.cli.eval"),
    ("compile", "skillci.cli.compile"),
    ("evals", "skillci.cli.evals"),
]

#: Modules defining top-level commands: each has ``register(app: typer.Typer) -> None``.
TOP_LEVEL: list[str] = [
    "skillci.cli.gate",
    "skillci.cli.release",
    "skillci.cli.propose",
    "skillci.cli.pipeline",
    "skillci.cli.demo",
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"skillci {__version__}")
        raise typer.Exit()


def build_app() -> typer.Typer:
    app = typer.Typer(
        name="skillci",
        help="Git-native CI/CD for agent Skills.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
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

    for name, module in SUBCOMMANDS:
        mod = importlib.import_module(module)
        sub = mod.app
        if isinstance(sub, typer.Typer):
            app.add_typer(sub, name=name)
    for module in TOP_LEVEL:
        importlib.import_module(module).register(app)
    return app


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
