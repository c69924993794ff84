"""External harness CLIs (BenchFlow's ``bench``, Harbor's ``harbor``): find, version, run,
and check command lines against the harness's own (Typer/Click) parser.

BenchFlow and Harbor live in their own venvs; :func:`parse_check` runs their interpreter to
build the click command and parse the arguments *without invoking* it, so a renamed or
removed flag shows up as a parser error here, not as a failed run later.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Mapping
from pathlib import Path

from skillci.errors import RunnerError

_PARSE = """
import json, sys
import importlib
import typer.main
app = importlib.import_module(sys.argv[1]).app
cmd = typer.main.get_command(app)
for name in json.loads(sys.argv[2]):
    cmd = cmd.commands[name]
ctx = cmd.make_context(cmd.name or "cmd", json.loads(sys.argv[3]), resilient_parsing=False)
print(json.dumps(dict(ctx.params), default=str))
"""


def find_executable(
    explicit: str | Path | None, env_var: str, default: str, what: str, hint: str
) -> str:
    """``explicit``, else ``$env_var``, else ``default`` on PATH; :class:`RunnerError` with
    ``hint`` when it is not there."""
    candidate = str(explicit) if explicit else os.environ.get(env_var) or default
    path = shutil.which(candidate)
    if path is None:
        raise RunnerError(f"{what} not found ({candidate})", hint=hint)
    return path


def cli_version(exe: str) -> str:
    """The last word of ``exe --version`` (``?`` when it does not answer)."""
    out = subprocess.run([exe, "--version"], capture_output=True, text=True, check=False)
    return out.stdout.strip().split()[-1] if out.returncode == 0 and out.stdout.strip() else "?"


def run_logged(
    argv: list[str],
    *,
    log: Path,
    timeout: float | None,
    env: Mapping[str, str] | None = None,
    cwd: Path | None = None,
    stop: threading.Event | None = None,
    grace: float = 60.0,
) -> int:
    """Run ``argv`` with stdout and stderr into ``log``; its exit code (124 on timeout).

    The wait blocks in ``waitpid`` and a timer kills the process at ``timeout``:
    ``subprocess.run(timeout=...)`` polls every 50 ms instead, ~1.5 ms of this process's CPU
    per second of run, which is most of the coordinator's CPU per remote trial (design 413).
    ``stop``: once set, the process gets SIGINT (its own cleanup runs, as on Ctrl-C), and is
    killed ``grace`` seconds later if still running (design 440)."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with log.open("wb") as fh:
        proc = subprocess.Popen(
            argv,
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            env=None if env is None else dict(env),
            cwd=cwd,
        )
        expired = threading.Event()

        def expire() -> None:
            expired.set()
            proc.kill()

        timer = threading.Timer(timeout, expire) if timeout is not None else None
        if timer is not None:
            timer.daemon = True
            timer.start()
        if stop is not None:
            threading.Thread(target=_interrupt_on, args=(stop, proc, grace), daemon=True).start()
        try:
            code = proc.wait()
        except BaseException:  # interrupted: never leave the child behind
            proc.kill()
            proc.wait()
            raise
        finally:
            if timer is not None:
                timer.cancel()
    return 124 if expired.is_set() else code


def _interrupt_on(stop: threading.Event, proc: subprocess.Popen[bytes], grace: float) -> None:
    """SIGINT to ``proc`` once ``stop`` is set (checked each second while it runs)."""
    while proc.poll() is None:
        if not stop.wait(1.0):
            continue
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(grace)
        except subprocess.TimeoutExpired:
            proc.kill()
        return


def script_python(exe: str) -> str:
    """The interpreter of a console script (its venv's python)."""
    first = Path(exe).read_bytes()[:400].split(b"\n", 1)[0].decode(errors="replace")
    if not first.startswith("#!"):
        raise RunnerError(f"{exe} is not a Python console script")
    return first[2:].strip().split()[0]


def parse_check(
    exe: str, app_module: str, command: list[str], args: list[str], *, hint: str
) -> dict[str, object]:
    """Parse ``args`` for ``command`` of the Typer app in ``app_module``; returns the parsed
    parameters or raises :class:`RunnerError` with the parser's message."""
    proc = subprocess.run(
        [script_python(exe), "-c", _PARSE, app_module, json.dumps(command), json.dumps(args)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if proc.returncode != 0:
        last = (proc.stderr.strip().splitlines() or ["(no output)"])[-1]
        raise RunnerError(f"{Path(exe).name}'s parser rejected the arguments: {last}", hint=hint)
    params = json.loads(proc.stdout.strip().splitlines()[-1])
    assert isinstance(params, dict)
    return params


__all__ = ["parse_check", "script_python"]
