"""Where a real agent's process runs: the trial's sandbox, its network closed but for the
model gateway.

A real agent (:mod:`skillci.agents.headless`) is a process tree — the CLI and every
command it runs — so the whole tree runs in the trial's sandbox: under bubblewrap it sees
the workspace at ``/app``, ``/logs/agent``, its fresh HOME and its read-only install dir
(both at their host paths), a private ``/tmp``, a cleared environment and nothing else of
the host. Unless the task sets ``allow_internet`` it also has a network namespace of its
own: the gateway, which listens on the host's loopback, is carried in through a unix socket
(:mod:`skillci.runners.netrelay`) to the same ``127.0.0.1`` port inside, and nothing else
is reachable, whatever the agent or a command it runs does with proxy settings (design
453). A task with ``allow_internet`` shares the host's network; a dead proxy in the
environment still turns away agents that honour ``HTTPS_PROXY``, and the record says so.
Without bubblewrap (``--sandbox none``) it is a host subprocess in the workspace with the
same environment (the usual NO SANDBOX warning).
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Callable
from pathlib import Path

from skillci.agents.base import Agent, Shell
from skillci.agents.headless import Launch
from skillci.errors import UsageError
from skillci.runners.base import TrialSpec
from skillci.runners.netrelay import SOCKET_DIR, UnixRelay, inner_argv
from skillci.runners.registry import is_local_mode
from skillci.runners.sandbox import BwrapShell, Mount, PlainShell, base_env, make_shell

#: Carries the sandbox's PATH to the agent HOME's login profile (skillci.agents.headless).
PATH_ENV = "SKILLCI_SANDBOX_PATH"
NETWORK_NOTE = (
    "real agent: the task allows the internet, so the agent's sandbox shares the host network "
    "namespace; hosts are refused only through proxy settings"
)
#: The record's note for a real agent with no sandbox (``--sandbox none``).
UNSANDBOXED_NETWORK_NOTE = (
    "real agent without a sandbox: it shares the host network; hosts are refused only "
    "through proxy settings"
)


def real_agent(spec: TrialSpec) -> Agent:
    """The :class:`HeadlessAgent` for ``spec`` (its installed version, its route's client)."""
    from skillci.agents.install import resolve
    from skillci.agents.registry import adapter
    from skillci.providers.budget import BudgetMeter
    from skillci.providers.cache import ResponseCache
    from skillci.providers.client import ModelClient

    a = spec.agent
    assert a.route is not None and a.route_name is not None
    installed = resolve(a.kind, a.agent_version)
    client = ModelClient(
        a.route_name,
        a.route,
        meter=BudgetMeter(a.budget, name="run"),
        cache=ResponseCache(spec.state_dir / "cache" / "responses"),
        use_cache=a.cache_responses or a.role == "teacher",
    )
    return adapter(a.kind).agent(
        client,
        exe=installed.exe,
        version=installed.version,
        role=a.role,
        companions=list(spec.companion_skills),
    )


def open_agent_shell(
    spec: TrialSpec, mounts: list[Mount], home: Path
) -> tuple[Shell, list[str], Callable[[Launch], subprocess.Popen[bytes]]]:
    """The agent phase's shell, its warnings, and the launcher of the agent's process."""
    allow = spec.task.config.environment.allow_internet
    return agent_shell(
        spec.agent.kind, spec.agent.agent_version, spec.sandbox, mounts, home, internet=allow
    )


def agent_shell(
    kind: str,
    version: str | None,
    sandbox: str,
    mounts: list[Mount],
    home: Path,
    *,
    internet: bool = False,
) -> tuple[Shell, list[str], Callable[[Launch], subprocess.Popen[bytes]]]:
    """:func:`open_agent_shell` for real agent ``kind`` at ``version`` (None: newest
    installed) under ``sandbox``; ``mounts`` must put the workspace at ``/app``; without
    ``internet`` a bubblewrap sandbox reaches the model gateway and nothing else."""
    from skillci.agents.install import resolve

    if not is_local_mode(sandbox):
        raise UsageError(
            f"agent {kind} runs with the local runner only",
            hint="use --sandbox auto, bwrap or none",
        )
    install = resolve(kind, version).path.resolve()
    home.mkdir(parents=True, exist_ok=True)
    mounts = [
        *mounts,
        Mount(home.resolve(), str(home.resolve()), True),
        Mount(install, str(install)),
    ]
    shell, warnings = make_shell(mounts, sandbox=sandbox, allow_network=internet)
    if not isinstance(shell, BwrapShell | PlainShell):
        raise UsageError(
            f"agent {kind} runs under bubblewrap or no sandbox, not {sandbox!r}",
            hint="use --sandbox auto, bwrap or none",
        )
    notes = (
        [UNSANDBOXED_NETWORK_NOTE]
        if isinstance(shell, PlainShell)
        else [NETWORK_NOTE]
        if internet
        else []
    )
    return shell, [*warnings, *notes], launcher(shell)


def launcher(shell: BwrapShell | PlainShell) -> Callable[[Launch], subprocess.Popen[bytes]]:
    """Starts a :class:`Launch` in ``shell``'s sandbox, in its own process group, its
    stdout and stderr to the launch's files (stdin and stdout pipes when it asks for them).
    A bubblewrap shell without network gets the launch's gateway port relayed in."""

    def launch(job: Launch) -> subprocess.Popen[bytes]:
        # a login shell (Codex runs `bash -lc`) resets PATH from /etc/profile; the HOME's
        # profile puts the sandbox's PATH back from here
        job.env.setdefault(PATH_ENV, base_env()["PATH"])
        stdin = subprocess.PIPE if job.pipes else subprocess.DEVNULL
        with job.stdout.open("wb") as file, job.stderr.open("wb") as err:
            out = subprocess.PIPE if job.pipes else file
            if isinstance(shell, BwrapShell):
                env = {**shell.env, **job.env}
                relay = None
                if shell.allow_network or job.gateway_port is None:
                    inner = BwrapShell(shell.mounts, allow_network=True, env=env)
                    argv = inner.exec_argv(job.argv)
                else:
                    relay = UnixRelay(job.gateway_port)
                    mounts = [*shell.mounts, Mount(relay.directory, SOCKET_DIR, True)]
                    inner = BwrapShell(mounts, allow_network=False, env=env)
                    argv = inner.exec_argv(inner_argv(job.gateway_port, job.argv))
                try:
                    proc = subprocess.Popen(
                        argv,
                        env=base_env(),
                        stdin=stdin,
                        stdout=out,
                        stderr=err,
                        start_new_session=True,
                    )
                except BaseException:
                    if relay is not None:
                        relay.close()
                    raise
                if relay is not None:
                    _close_after(proc, relay)
                return proc
            return subprocess.Popen(
                job.argv,
                cwd=shell.workspace,
                env=base_env({**shell.env, **job.env}),
                stdin=stdin,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )

    return launch


def _close_after(proc: subprocess.Popen[bytes], relay: UnixRelay) -> None:
    """Stop ``relay`` once the agent's sandbox has exited."""

    def wait() -> None:
        proc.wait()
        relay.close()

    threading.Thread(target=wait, daemon=True, name="gateway-relay-close").start()


__all__ = [
    "NETWORK_NOTE",
    "PATH_ENV",
    "UNSANDBOXED_NETWORK_NOTE",
    "agent_shell",
    "launcher",
    "open_agent_shell",
    "real_agent",
]
