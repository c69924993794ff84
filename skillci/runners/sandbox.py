"""Where trial commands run: bubblewrap when it works, else a plain subprocess (loudly).

Inside bubblewrap a trial sees a minimal root: read-only ``/usr`` ``/etc`` (and the
``/bin``-style links), the Python installation skillci runs on (so ``python`` and
``pytest`` exist), a private ``/tmp``, no network (``--unshare-all``), and exactly the
trial's mounts: ``/app`` (the workspace, writable), ``/logs`` (writable), ``/skills/<name>``,
``/tests``, ``/solution`` (read-only, only when given). Nothing else of the host — other
trials, the task dirs, the repository, ``$HOME`` — is visible. The environment is cleared
and scrubbed (:func:`scrub_env`: no model key, forge token or ``SKILLCI_*`` secret reaches
task code), and the new PID namespace hides skillci's own ``/proc/<pid>/environ``. Commands are killed with their whole process tree on timeout.

Without a usable bwrap the same command runs as a host subprocess in the workspace with a
cleared, scrubbed environment and ``HOME``/``TMPDIR`` inside the trial dir; that is *not* isolation, and every record says so (:data:`NO_SANDBOX_WARNING`).
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from skillci.agents.base import CommandResult, Shell
from skillci.runners.pool import sandbox_slot

MAX_CAPTURE = 2 * 1024 * 1024
NO_SANDBOX_WARNING = (
    "NO SANDBOX: bubblewrap is not available, so agent and verifier commands ran as plain "
    "host subprocesses with network and filesystem access"
)


@dataclass(frozen=True)
class Mount:
    host: Path
    target: str
    writable: bool = False


@functools.lru_cache(maxsize=1)
def bwrap_path() -> str | None:
    """Path of a *working* bwrap (probed once), or None."""
    exe = shutil.which("bwrap")
    if exe is None:
        return None
    try:
        probe = subprocess.run(
            [exe, "--unshare-all", "--ro-bind", "/", "/", "true"], capture_output=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return exe if probe.returncode == 0 else None


def python_roots() -> list[Path]:
    """The interpreter's prefixes a sandbox binds read-only (the venv and its base), not / or /usr;
    shared by the bwrap sandbox, the capability probe and the Harbor runner."""
    roots = {
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(os.path.realpath(sys.executable)).parent.parent,
    }
    return sorted(r for r in roots if r.is_dir() and str(r) not in ("/", "/usr"))


def path_env() -> str:
    """The PATH a sandboxed command gets: this interpreter's bin dir, then the system dirs."""
    return os.pathsep.join([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])


#: Host variables whose values are secrets: model and forge keys by their usual names.
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|KEY|KEYS|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?)$|^SKILLCI_", re.I
)
#: Names never handed to task code, whatever their value: the model keys' carrier and the
#: forge tokens. (A variable a runner sets on purpose, such as a real agent's per-trial
#: token for the loopback model gateway, holds no host secret and passes.)
_NEVER = re.compile(
    r"^(?:SKILLCI_MODEL_KEYS|GITHUB_TOKEN|GH_TOKEN|GITLAB_TOKEN|FORGE_TOKEN)$|^ACTIONS_", re.I
)


def _route_key_names() -> frozenset[str]:
    """The ``api_key_env`` of every configured route (any name a key may hide under)."""
    from skillci.providers.routes import find_routes_file

    path = find_routes_file()
    try:
        stamp = path.stat().st_mtime_ns if path is not None else None
    except OSError:
        stamp = None
    return _key_names_of(path, stamp)


@functools.lru_cache(maxsize=8)
def _key_names_of(path: Path | None, stamp: int | None) -> frozenset[str]:
    from skillci.errors import SkillciError
    from skillci.providers.routes import load_routes

    del stamp  # the cache key: an edited routes file is read again
    try:
        return frozenset(r.api_key_env for r in load_routes(path).values() if r.api_key_env)
    except SkillciError:
        return frozenset()


def _secret_values(environ: dict[str, str]) -> frozenset[str]:
    """Values of this process's secrets: variables named like keys or tokens, every
    route's key variable, and each entry of ``SKILLCI_MODEL_KEYS``."""
    return _secrets_of(tuple(sorted(environ.items())), _route_key_names())


@functools.lru_cache(maxsize=8)
def _secrets_of(items: tuple[tuple[str, str], ...], names: frozenset[str]) -> frozenset[str]:
    environ = dict(items)
    out = {v for k, v in items if (k in names or _SECRET_NAME.search(k)) and len(v) >= 8}
    for line in environ.get("SKILLCI_MODEL_KEYS", "").splitlines():
        value = line.partition("=")[2].strip().strip("'\"")
        if len(value) >= 8:
            out.add(value)
    return frozenset(out)


def scrub_env(env: dict[str, str], environ: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` for task code (agent tools, verifier): without any variable whose value is
    one of ``environ``'s (this process's) secrets — model keys, forge token,
    ``SKILLCI_MODEL_KEYS`` entries, any ``SKILLCI_*`` setting — and without the keys'
    carrier and the forge tokens by name."""
    secrets = _secret_values(dict(os.environ) if environ is None else environ)
    return {k: v for k, v in env.items() if not _NEVER.search(k) and v not in secrets}


def base_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    env = {
        "PATH": path_env(),
        "HOME": "/tmp",  # noqa: S108 - inside the sandbox /tmp is a private tmpfs
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
        "GIT_CONFIG_NOSYSTEM": "1",
        "TERM": "dumb",
        # skillci's own venv runs task tests: its dev pytest plugins are not the task's
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
    }
    env.update(extra or {})
    return scrub_env(env)


def _capture(
    argv: list[str], *, cwd: Path | None, env: dict[str, str], timeout: float
) -> CommandResult:
    start = time.monotonic()
    with sandbox_slot(), tempfile.TemporaryFile() as out:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        fired = threading.Event()

        def kill() -> None:  # a timer, not wait(timeout=): that polls with sleeps
            fired.set()
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)

        timer = threading.Timer(timeout, kill)
        timer.start()
        try:
            code = proc.wait()
        finally:
            timer.cancel()
        timed_out = fired.is_set()
        if timed_out:
            code = 124
        out.seek(0)
        data = out.read(MAX_CAPTURE)
    return CommandResult(
        exit_code=code,
        output=data.decode("utf-8", errors="replace"),
        timed_out=timed_out,
        duration_sec=round(time.monotonic() - start, 4),
    )


@dataclass
class BwrapShell:
    """Runs commands in a fresh bubblewrap sandbox each time (cwd /app)."""

    mounts: list[Mount]
    allow_network: bool = False
    env: dict[str, str] = field(default_factory=dict)
    kind: str = "bwrap"

    def argv(self, command: str) -> list[str]:
        """bwrap's command line for ``command`` (a ``bash -c`` script)."""
        return [*self._bwrap(), "bash", "-c", command]

    def _bwrap(self) -> list[str]:
        """bwrap and its options up to ``--``; start it in a new session
        (``start_new_session=True``, as both callers do): without a controlling terminal
        nothing in the sandbox can push input into one (TIOCSTI, CVE-2017-5226), which
        is what bwrap's own ``--new-session`` would add — a second session, and with
        scheduler autogroups a second task group, 2-6 ms per launch (design 433)."""
        exe = bwrap_path() or "bwrap"
        args = [exe, "--die-with-parent", "--unshare-all"]
        if self.allow_network:
            args.append("--share-net")
        args += ["--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"]
        for name in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
            p = Path("/") / name
            if p.is_symlink():
                args += ["--symlink", os.readlink(p), f"/{name}"]
            elif p.is_dir():
                args += ["--ro-bind", str(p), f"/{name}"]
        # the private /tmp first: a Python installed under /tmp is bound on top of it, not hidden
        args += ["--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp"]  # noqa: S108 - private tmpfs
        for root in python_roots():
            args += ["--ro-bind", str(root), str(root)]
        for m in self.mounts:
            args += ["--bind" if m.writable else "--ro-bind", str(m.host), m.target]
        args += ["--chdir", "/app", "--clearenv"]
        for k, v in base_env(
            {"LOGS_DIR": "/logs", "SKILLCI_LOGS_DIR": "/logs", **self.env}
        ).items():
            args += ["--setenv", k, v]
        return [*args, "--"]

    def exec_argv(self, argv: list[str]) -> list[str]:
        """:meth:`argv` for a program started directly (``argv[0]``: a path, or a name on
        the sandbox's PATH), with no ``bash -c`` before it (a real agent: design 433)."""
        return [*self._bwrap(), *argv]

    def run(self, command: str, *, timeout: float) -> CommandResult:
        return _capture(self.argv(command), cwd=None, env={"PATH": path_env()}, timeout=timeout)


@dataclass
class PlainShell:
    """No isolation: a host subprocess in the workspace with a cleared environment."""

    workspace: Path
    env: dict[str, str] = field(default_factory=dict)
    kind: str = "none"

    def run(self, command: str, *, timeout: float) -> CommandResult:
        argv = [*_die_with_parent(), "bash", "-c", command]
        return _capture(argv, cwd=self.workspace, env=base_env(self.env), timeout=timeout)


@functools.lru_cache(maxsize=1)
def _die_with_parent() -> tuple[str, ...]:
    """``setpriv --pdeathsig KILL --`` when util-linux has it: the host command dies with
    the (long-lived) trial thread that started it, even if the command is SIGKILLed."""
    exe = shutil.which("setpriv")
    if exe is None:
        return ()
    try:
        ok = subprocess.run([exe, "--pdeathsig", "KILL", "--", "true"], capture_output=True)
    except OSError:
        return ()
    return (exe, "--pdeathsig", "KILL", "--") if ok.returncode == 0 else ()


def make_shell(
    mounts: list[Mount],
    *,
    sandbox: str = "auto",
    allow_network: bool = False,
    env: dict[str, str] | None = None,
) -> tuple[Shell, list[str]]:
    """A shell of the local runner's sandbox ``sandbox`` (a name in
    :mod:`skillci.runners.registry`) for these mounts (one must target /app), and the
    warnings to record."""
    from skillci.runners.registry import open_shell

    return open_shell(mounts, sandbox=sandbox, allow_network=allow_network, env=env)


def auto_shell(
    mounts: list[Mount], *, allow_network: bool = False, env: dict[str, str] | None = None
) -> tuple[BwrapShell | PlainShell, list[str]]:
    """The ``auto`` sandbox: bubblewrap when it works, else a plain subprocess (the sandbox
    policy decided beforehand whether that may run: :mod:`skillci.runners.policy`)."""
    if bwrap_path() is not None:
        return BwrapShell(mounts, allow_network=allow_network, env=dict(env or {})), []
    return plain_shell(mounts, allow_network=allow_network, env=env)


def bwrap_shell(
    mounts: list[Mount], *, allow_network: bool = False, env: dict[str, str] | None = None
) -> tuple[BwrapShell, list[str]]:
    """The ``bwrap`` sandbox: bubblewrap, or a :class:`~skillci.errors.SandboxError`."""
    if bwrap_path() is None:
        from skillci.errors import SandboxError

        raise SandboxError("bubblewrap was requested but does not work here")
    return BwrapShell(mounts, allow_network=allow_network, env=dict(env or {})), []


def plain_shell(
    mounts: list[Mount], *, allow_network: bool = False, env: dict[str, str] | None = None
) -> tuple[PlainShell, list[str]]:
    """The ``none`` sandbox: a plain subprocess in the workspace (it cannot close the
    network; mount targets become environment variables), recorded as a warning."""
    ws = next(m.host for m in mounts if m.target == "/app")
    host_env = {k: str(m.host) for m in mounts for k in _ENV_FOR.get(m.target, ())}
    # HOME and the temp dir inside the trial dir: nothing the task writes by default lands
    # in the user's home or the system temp dir (absolute paths are not confined: no sandbox)
    private = ws.parent / "host-home"
    (private / "tmp").mkdir(parents=True, exist_ok=True)
    host_env |= {"HOME": str(private), "TMPDIR": str(private / "tmp")}
    return PlainShell(ws, env={**host_env, **(env or {})}), [NO_SANDBOX_WARNING]


#: In the unsandboxed fallback, mount targets are exposed as environment variables instead.
_ENV_FOR = {
    "/logs": ("LOGS_DIR", "SKILLCI_LOGS_DIR"),
    "/tests": ("TESTS_DIR",),
    "/solution": ("SOLUTION_DIR",),
}

__all__ = [
    "NO_SANDBOX_WARNING",
    "BwrapShell",
    "Mount",
    "PlainShell",
    "auto_shell",
    "base_env",
    "bwrap_path",
    "bwrap_shell",
    "make_shell",
    "path_env",
    "plain_shell",
    "python_roots",
    "scrub_env",
]
