"""The runner and sandbox registries: where a trial runs, by name.

Two kinds of plug-in, each a table of skillci's own entries followed by the entry points of
its group (an entry point cannot replace a built-in name; docs/design/390, 391):

- a **runner** (group ``skillci.runners``; ``eval raw-task --runner NAME``) runs trials. Its
  target (``pkg.module:attr``) is a zero-argument factory — a class is one — of either a
  *trial runner* (:class:`~skillci.runners.base.Runner`: ``run_trial`` of a
  :class:`~skillci.runners.base.TrialSpec`; ``local``, ``docker``) or a *harness runner*
  (:class:`HarnessRunner`: an external harness CLI that runs its own agents; ``benchflow``,
  ``harbor``; ``eval raw-task`` only).
- a **sandbox** (group ``skillci.sandboxes``) is where the local runner's commands run: its
  target is a shell factory ``(mounts, *, allow_network, env) -> (Shell, warnings)``
  (``auto``, ``bwrap``, ``none``).

``TrialSpec.sandbox`` (``eval run --sandbox``) names a *trial mode*: a sandbox of the local
runner, or a trial runner other than ``local`` — a runner that isolates its own trials is a
mode of its own name (``--sandbox docker`` is the Docker runner). :func:`runner_for_mode`
is the one dispatch from a mode to its runner. Listing names costs one entry-point scan;
a target is imported only when it is used.
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from skillci.errors import ConfigError, UsageError

if TYPE_CHECKING:
    from skillci.agents.base import Shell
    from skillci.runners.base import Runner
    from skillci.runners.harness_remote import HarnessEnvironment
    from skillci.runners.sandbox import Mount
    from skillci.tasks.environment import EnvRequirements, RunnerCapabilities
    from skillci.trace.models import RunRecord, SkillRef

RUNNER_GROUP = "skillci.runners"
SANDBOX_GROUP = "skillci.sandboxes"
#: The runner whose trials run in a sandbox of the sandbox registry.
LOCAL = "local"
#: The local runner's mode when none is named (the sandbox policy decides: design 310).
DEFAULT_MODE = "auto"

ShellFactory = Callable[..., "tuple[Shell, list[str]]"]
"""``(mounts, *, allow_network, env) -> (shell, warnings)``: a sandbox's target."""


@dataclass(frozen=True)
class HarnessAttempt:
    """One attempt of ``eval raw-task`` on a harness runner: everything it may use."""

    task_root: Path
    task_id: str
    harness: str
    model: str
    run_dir: Path
    """Where the harness's own output goes (``test-NNN/run``)."""
    scratch: Path
    """A dir the runner may keep files in across attempts (the raw-task output dir)."""
    skills: tuple[Path, ...]
    """The skill under test first, then its companions; empty: no skill."""
    skill_ref: SkillRef | None
    image: str | None
    executables: dict[str, str | None]
    """The executables the user named (``--bench``, ``--harbor``), by option name."""


@runtime_checkable
class HarnessRunner(Protocol):
    """A runner that drives an external harness CLI (which runs its own agents)."""

    name: str

    def preflight(self, executables: dict[str, str | None]) -> None:
        """Raise (exit 4, with the fix) when a tool the runner needs is missing."""
        ...

    def capabilities(self, req: EnvRequirements) -> RunnerCapabilities:
        """What it can provide a task (docs/design/185)."""
        ...

    def run_attempt(self, attempt: HarnessAttempt) -> RunRecord:
        """Run one attempt; the run record imported from what the harness wrote."""
        ...


@dataclass(frozen=True)
class RunnerEntry:
    """One registered runner."""

    name: str
    summary: str
    target: str
    """``module:attr`` of its zero-argument factory, imported only when it runs."""
    harness: bool = False
    """It drives an external harness CLI (:class:`HarnessRunner`; built-ins only for now):
    ``eval raw-task`` only, and not a trial mode."""
    remote: bool = False
    """It also runs the trials of ``eval run``, ``gate``, ``review`` and ``propose`` on a
    remote environment (``--runner NAME --env ENV``, skillci.flows.remote; design 412)."""
    environment: str = ""
    """With ``remote``: ``module:attr`` of its
    :class:`~skillci.runners.harness_remote.HarnessEnvironment` subclass (design 431)."""

    def environment_class(self) -> type[HarnessEnvironment]:
        """The class running this runner's trials remotely (imported now)."""
        from skillci.runners.harness_remote import HarnessEnvironment

        made: object = _load(self.environment, f"runner {self.name!r}", RUNNER_GROUP)
        if not (isinstance(made, type) and issubclass(made, HarnessEnvironment)):
            raise ConfigError(
                f"runner {self.name!r}: {self.environment} is not a HarnessEnvironment",
                hint="point it at a subclass of skillci.runners.harness_remote.HarnessEnvironment",
            )
        return made

    def load(self) -> Runner | HarnessRunner:
        """A fresh runner (a trial runner keeps per-trial state: one per trial)."""
        from skillci.runners.base import Runner

        made: object = _load(self.target, f"runner {self.name!r}", RUNNER_GROUP)()
        kind: type[Any] = HarnessRunner if self.harness else Runner
        if not isinstance(made, (Runner, HarnessRunner)) or not isinstance(made, kind):
            raise ConfigError(
                f"runner {self.name!r} ({self.target}) made a {type(made).__name__}, not a "
                f"{kind.__name__}",
                hint="its factory must return a trial runner: subclass "
                "skillci.runners.local.TrialRunner or LocalRunner (or implement the Runner protocol)",
            )
        return made


@dataclass(frozen=True)
class SandboxEntry:
    """One registered sandbox of the local runner."""

    name: str
    summary: str
    target: str
    """``module:attr`` of its shell factory, imported only when a shell opens."""

    def shell_factory(self) -> ShellFactory:
        factory: ShellFactory = _load(self.target, f"sandbox {self.name!r}", SANDBOX_GROUP)
        return factory


def _load(target: str, what: str, group: str) -> Any:
    module, _, attr = target.partition(":")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError) as exc:
        raise ConfigError(
            f"{what}: cannot load {target} ({exc})",
            hint=f"install the package that provides it, or fix its {group} entry point",
        ) from exc


BUILTIN_RUNNERS = (
    RunnerEntry(
        LOCAL,
        "this machine, under bubblewrap (as the sandbox policy allows)",
        "skillci.runners.local:LocalRunner",
    ),
    RunnerEntry(
        "docker", "containers of the task's own image", "skillci.runners.docker:DockerRunner"
    ),
    RunnerEntry(
        "benchflow",
        "BenchFlow's bench CLI and its agents",
        "skillci.runners.benchflow:BenchflowRunner",
        harness=True,
        remote=True,
        environment="skillci.runners.benchflow_remote:BenchflowEnvironment",
    ),
    RunnerEntry(
        "harbor",
        "Harbor's harbor CLI and its agents",
        "skillci.runners.harbor:HarborRunner",
        harness=True,
        remote=True,
        environment="skillci.runners.harbor_remote:HarborEnvironment",
    ),
)

BUILTIN_SANDBOXES = (
    SandboxEntry(
        "auto",
        "bubblewrap if it works, else a plain subprocess (the sandbox policy decides)",
        "skillci.runners.sandbox:auto_shell",
    ),
    SandboxEntry("bwrap", "bubblewrap, or fail", "skillci.runners.sandbox:bwrap_shell"),
    SandboxEntry(
        "none",
        "a plain subprocess: no sandbox, you accept the risk",
        "skillci.runners.sandbox:plain_shell",
    ),
)


@functools.cache
def _all_entry_points() -> object:
    """Every installed entry point, read once for both groups (one scan, ~20 ms)."""
    return entry_points()


def _group(name: str) -> list[EntryPoint]:
    """The entry points of group ``name`` (``select`` on 3.11's groups and 3.12's list)."""
    found: Any = _all_entry_points()
    return list(found.select(group=name))


@functools.lru_cache(maxsize=1)
def runners() -> dict[str, RunnerEntry]:
    """Every runner by name: the built-in table, then the ``skillci.runners`` entry points."""
    out = {e.name: e for e in BUILTIN_RUNNERS}
    for ep in _group(RUNNER_GROUP):
        if ep.name not in out:
            out[ep.name] = RunnerEntry(ep.name, f"entry point {ep.value}", ep.value)
    return out


@functools.lru_cache(maxsize=1)
def sandboxes() -> dict[str, SandboxEntry]:
    """Every sandbox by name: the built-in table, then the ``skillci.sandboxes`` entry points."""
    out = {e.name: e for e in BUILTIN_SANDBOXES}
    for ep in _group(SANDBOX_GROUP):
        if ep.name not in out and ep.name not in runners():
            out[ep.name] = SandboxEntry(ep.name, f"entry point {ep.value}", ep.value)
    return out


def runner_names() -> list[str]:
    return list(runners())


def trial_runners() -> list[str]:
    """``--runner`` values of the trial commands: :data:`LOCAL` (this machine, the
    default), then every runner that runs them on a remote environment."""
    return [LOCAL, *(n for n, e in runners().items() if e.remote)]


def remote_runners() -> dict[str, RunnerEntry]:
    """The runners that run the trial commands' trials remotely (``--runner NAME``)."""
    return {n: e for n, e in runners().items() if e.remote}


def runner_entry(name: str) -> RunnerEntry:
    """The runner ``name`` (a usage error listing the registered ones otherwise)."""
    entry = runners().get(name)
    if entry is None:
        raise UsageError(f"unknown runner {name!r}", hint=f"use one of: {', '.join(runners())}")
    return entry


def sandbox_entry(name: str) -> SandboxEntry:
    """The local runner's sandbox ``name``."""
    entry = sandboxes().get(name)
    if entry is None:
        raise UsageError(f"unknown sandbox {name!r}", hint=f"use one of: {', '.join(sandboxes())}")
    return entry


def modes() -> dict[str, str]:
    """Every trial mode (``TrialSpec.sandbox``) with its one-line summary: the sandboxes of
    the local runner, then each other trial runner under its own name (harness runners run
    no :class:`~skillci.runners.base.TrialSpec`: they are not modes)."""
    out = {name: e.summary for name, e in sandboxes().items()}
    for name, e in runners().items():
        if name != LOCAL and not e.harness and name not in out:
            out[name] = f"the {name} runner: {e.summary}"
    return out


def check_mode(name: str) -> str:
    """``name`` when it is a trial mode, else a ValueError listing them (pydantic fields)."""
    if name not in modes():
        raise ValueError(f"unknown sandbox {name!r}; registered: {', '.join(modes())}")
    return name


def is_local_mode(mode: str) -> bool:
    """Whether trials of ``mode`` run on the local runner (in one of its sandboxes)."""
    return mode in sandboxes()


def mode_of_runner(name: str) -> str:
    """The trial mode of trial runner ``name``: the local runner's default sandbox, or the
    runner's own name."""
    return DEFAULT_MODE if name == LOCAL else name


def runner_for_mode(mode: str) -> Runner:
    """A fresh trial runner for trial mode ``mode`` (the one dispatch from a mode to its
    runner: the local runner for its sandboxes, else the runner of that name)."""
    return trial_runner(LOCAL if is_local_mode(mode) else mode)


def trial_runner(name: str) -> Runner:
    """A fresh trial runner ``name``; a usage error for a harness runner."""
    from skillci.runners.base import Runner

    entry = runner_entry(name)
    if entry.harness:
        raise UsageError(
            f"runner {name!r} drives an external harness: it runs under eval raw-task only",
            hint=f"use one of: {', '.join(modes())}",
        )
    made = entry.load()
    assert isinstance(made, Runner)
    return made


def harness_runner(name: str) -> HarnessRunner:
    """A fresh harness runner ``name`` (a built-in with ``harness=True``)."""
    entry = runner_entry(name)
    assert entry.harness, name
    made = entry.load()
    assert isinstance(made, HarnessRunner)
    return made


def open_shell(
    mounts: list[Mount], *, sandbox: str, allow_network: bool, env: dict[str, str] | None
) -> tuple[Shell, list[str]]:
    """A shell of the local runner's sandbox ``sandbox`` for ``mounts``."""
    factory = sandbox_entry(sandbox).shell_factory()
    return factory(mounts, allow_network=allow_network, env=env)


__all__ = [
    "BUILTIN_RUNNERS",
    "BUILTIN_SANDBOXES",
    "DEFAULT_MODE",
    "LOCAL",
    "RUNNER_GROUP",
    "SANDBOX_GROUP",
    "HarnessAttempt",
    "HarnessRunner",
    "RunnerEntry",
    "SandboxEntry",
    "check_mode",
    "harness_runner",
    "is_local_mode",
    "mode_of_runner",
    "modes",
    "open_shell",
    "remote_runners",
    "runner_entry",
    "runner_for_mode",
    "runner_names",
    "runners",
    "sandbox_entry",
    "sandboxes",
    "trial_runner",
]
