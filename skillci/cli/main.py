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

import os
import sys
from collections.abc import Sequence

import skillci.cli.output as output
from skillci.errors import ExitCode, SkillciError

TYPE_CHECKING = False  # typing is not imported at run time: it costs start-up (design 260)
if TYPE_CHECKING:
    from typing import Any


class Entry:
    """One top-level command or command group of ``skillci``."""

    __slots__ = ("group", "module", "name", "summary")

    def __init__(self, name: str, module: str, summary: str, group: bool = False) -> None:
        self.name = name
        self.module = module
        self.summary = summary
        self.group = group

    def __repr__(self) -> str:
        return f"Entry({self.name!r}, {self.module!r}, group={self.group})"


#: Every top-level command, in help order. ``group`` entries are command groups.
COMMANDS: tuple[Entry, ...] = (
    Entry(
        "init",
        "skillci.cli.init",
        "Find every skill (any SKILL.md) and add what skillci needs; never overwrites.",
    ),
    Entry("skill", "skillci.cli.skill", "Inspect and convert skill packages.", group=True),
    Entry("tasks", "skillci.cli.tasks", "List and check evaluation task directories.", group=True),
    Entry(
        "judge",
        "skillci.cli.judge",
        "The rubric judge of task graders: calibrate it against human labels.",
        group=True,
    ),
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
    Entry("agents", "skillci.cli.agents", "List and install the agents trials run.", group=True),
    Entry(
        "bench",
        "skillci.cli.bench",
        "Baselines and ablations: success, GCR, regression, tokens, cost, with intervals.",
    ),
    Entry(
        "compile",
        "skillci.cli.compile",
        "Compile a skill for a target student: profile, static, fast, deep.",
        group=True,
    ),
    Entry(
        "evals",
        "skillci.cli.evals",
        "The release gate sharded over CI jobs: plan the matrix, run a shard (or a round of it), "
        "decide between rounds, merge.",
        group=True,
    ),
    Entry(
        "gate",
        "skillci.cli.gate",
        "Re-run the student on base and head: accept (0), reject (1), inconclusive (5); 4 when "
        "trials errored.",
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
        "dashboard",
        "skillci.cli.dashboard",
        "The repository's dashboard issue: show, update, act on ticked boxes.",
        group=True,
    ),
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


ROOT_HELP = "Git-native CI/CD for agent Skills."
ROOT_OPTIONS = (
    ("-v, --verbose", "Show tracebacks."),
    ("--version", "Print the version."),
    ("-h, --help", "Show this message and exit."),
)


def _dl(rows: Sequence[tuple[str, str]], width: int) -> list[str]:
    import textwrap

    first = max(len(a) for a, _ in rows) + 4
    out = []
    for a, b in rows:
        lines = textwrap.wrap(b, max(20, width - first)) or [""]
        out.append(f"  {a:<{first - 2}}{lines[0]}")
        out += [" " * first + line for line in lines[1:]]
    return out


def root_help(width: int = 78) -> str:
    """``skillci --help``: built from :data:`COMMANDS` alone (no typer, no command module)."""
    lines = ["Usage: skillci [OPTIONS] COMMAND [ARGS]...", "", f"  {ROOT_HELP}", "", "Options:"]
    lines += _dl(ROOT_OPTIONS, width)
    lines += ["", "Commands:", *_dl([(e.name, e.summary) for e in COMMANDS], width)]
    return "\n".join(lines) + "\n"


def load_command(entry: Entry) -> Any:
    """``entry``'s click command (see :func:`skillci.cli.app.load_command`)."""
    from skillci.cli.app import load_command as load

    return load(entry)


def all_commands() -> dict[str, Any]:
    """Every command, loaded: ``{"trace ls": <command>, ...}`` (for tests and docs)."""
    from skillci.cli.app import all_commands as every

    return every()


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


def _light(args: list[str]) -> int | None:
    """Commands answered without typer (see :mod:`skillci.cli.trace_ls`); None otherwise."""
    if args[:2] == ["trace", "ls"]:
        from skillci.cli.trace_ls import run_light

        return run_light(args[2:])
    return None


def run_typer(args: list[str]) -> int:
    """Parse ``args`` with typer and run the command; usage errors return 2."""
    import typer

    try:
        import typer._click as click  # type: ignore[import-not-found,unused-ignore]
    except ImportError:  # pragma: no cover
        import click  # type: ignore[no-redef,unused-ignore]
    from skillci.cli.app import build_app

    try:
        app = build_app()
        result = app(args=args, prog_name="skillci", standalone_mode=False)
        return int(result) if isinstance(result, int) else 0
    except typer.Exit as ex:
        return int(ex.exit_code)
    except typer.Abort:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except click.exceptions.ClickException as ex:
        ex.show()
        return int(ExitCode.INVALID_INPUT)


def _crash_log(args: list[str]) -> str:
    """A new file for a crash's traceback in the state dir (``$SKILLCI_HOME``, else the
    ``.skillci`` of the repository of ``--repo``/``--root`` or the current dir), never the
    system temp dir; falls back to ``$XDG_STATE_HOME/skillci`` when that is not writable."""
    import tempfile
    from pathlib import Path

    from skillci.flows.command import default_home

    start = None
    for flag in ("--repo", "--root"):
        if flag in args[:-1]:
            start = Path(args[args.index(flag) + 1])
    xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    for i in range(2):
        try:
            d = default_home(start) / "crash" if i == 0 else Path(xdg) / "skillci" / "crash"
            d.mkdir(parents=True, exist_ok=True)
            fd, log = tempfile.mkstemp(prefix="skillci-crash-", suffix=".log", dir=d)
        except OSError:
            continue
        os.close(fd)
        return log
    raise OSError("no writable state dir for the crash log")


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    finally:  # a command's --sandbox does not outlive it (tests run many in one process)
        policy = sys.modules.get("skillci.runners.policy")  # never imported: nothing to forget
        if policy is not None:
            policy.reset_policy()


def _main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args in (["--help"], ["-h"]):  # answered from the table: no typer, no command module
        sys.stdout.write(root_help())
        return 0
    if args == ["--version"]:  # with the commit it was built from (skillci/version.py)
        from skillci.version import describe

        print(describe())
        return 0
    output.STATE.verbose = "-v" in args or "--verbose" in args
    from skillci.flows.command import reset_routes

    reset_routes()  # a route's fatal failure is memoised per command (docs/design/301)
    try:
        light = _light(args)
        return run_typer(args) if light is None else light
    except SkillciError as err:
        if output.STATE.verbose:
            import traceback

            traceback.print_exc()
        report_error(err)
        return int(err.exit_code)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return int(ExitCode.INTERRUPTED)
    except Exception:
        import traceback

        log = _crash_log(args)
        with open(log, "w", encoding="utf-8") as fh:
            traceback.print_exc(file=fh)
        if output.STATE.verbose:
            traceback.print_exc()
        exc = sys.exc_info()[1]
        print(
            f"error: internal error: {type(exc).__name__}: {exc} "
            f"(hint: traceback in {log}; re-run with -v and report it)",
            file=sys.stderr,
        )
        return int(ExitCode.INTERNAL)


def entrypoint() -> None:
    sys.exit(main())
