"""What each runner can provide, as :class:`~skillci.tasks.environment.RunnerCapabilities`.

The decision is pure (:func:`skillci.tasks.environment.check_environment`); this module
probes the machine for the facts it needs — only the executables and Python packages a
task's requirements name, the CPU count, the memory, whether bubblewrap works:

- **local** (bubblewrap, or ``--sandbox none``): no image build; ``/app``; the network is
  closed with bubblewrap's ``--unshare-net`` unless the task sets ``allow_internet`` (a plain
  subprocess cannot close it); no GPUs; the host's tools on the sandbox PATH and the
  packages of the Python skillci runs on.
- **docker**: builds the task's Dockerfile (or runs ``docker_image``); ``/app`` (the runner
  exports and mounts the image's ``/app``); ``network_mode="none"`` unless ``allow_internet``;
  no GPUs attached; the task's ``cpus`` must fit the machine.
- **harbor** (``-e local``, skillci's bubblewrap environment): no ``RUN`` step, any ``WORKDIR``,
  network as ``allow_internet``. Other Harbor environments and **benchflow** (``--sandbox
  docker``) build the image themselves and read ``task.toml`` themselves.
"""

from __future__ import annotations

import functools
import importlib.metadata
import os
import shutil
from pathlib import Path

from skillci.runners.sandbox import _path_env, bwrap_path
from skillci.tasks.environment import WORKSPACE, EnvRequirements, RunnerCapabilities


def _memory_mb() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return int(line.split()[1]) // 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


@functools.cache
def _machine() -> tuple[float | None, int | None]:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (float(cpus) if cpus else None), _memory_mb()


def _tools(names: list[str]) -> list[str]:
    path = _path_env()
    return sorted(n for n in names if shutil.which(n, path=path) is not None)


@functools.cache
def _installed(name: str) -> str | None:
    """Installed version of distribution ``name`` (None: absent); reading package metadata
    costs milliseconds, and a command asks once per trial."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def _python(req: EnvRequirements) -> dict[str, str]:
    out = {}
    for p in req.python:
        key = p.name.lower().replace("_", "-")
        if (version := _installed(key)) is not None:
            out[key] = version
    return out


def local_capabilities(req: EnvRequirements, *, sandbox: str = "auto") -> RunnerCapabilities:
    """The local runner with ``sandbox`` (auto, bwrap or none) on this machine."""
    cpus, memory = _machine()
    bwrap = sandbox != "none" and bwrap_path() is not None
    return RunnerCapabilities(
        runner="local",
        builds_images=False,
        workdirs=[WORKSPACE],
        network_closed=bwrap,
        network_open=True,
        cpus=cpus,
        memory_mb=memory,
        tools=_tools(req.tools),
        python=_python(req),
    )


def docker_capabilities() -> RunnerCapabilities:
    """The Docker runner (the engine's machine is this one: remote engines are refused)."""
    cpus, _ = _machine()
    return RunnerCapabilities(
        runner="docker",
        builds_images=True,
        workdirs=[WORKSPACE],
        network_closed=True,
        network_open=True,
        cpus=cpus,
    )


def harness_capabilities(
    runner: str, req: EnvRequirements, *, env: str = "docker"
) -> RunnerCapabilities:
    """BenchFlow or Harbor: ``env`` local is skillci's bubblewrap environment (no build,
    any WORKDIR, this machine's tools)."""
    if runner == "harbor" and env == "local":
        local = local_capabilities(req)
        return local.model_copy(update={"runner": "harbor", "workdirs": None})
    return RunnerCapabilities(
        runner=runner, builds_images=True, compose=True, network_closed=True, network_open=True
    )


def capabilities(req: EnvRequirements, sandbox: str) -> RunnerCapabilities:
    """Capabilities of the runner a trial with ``sandbox`` runs on."""
    if sandbox == "docker":
        return docker_capabilities()
    return local_capabilities(req, sandbox=sandbox)


__all__ = [
    "capabilities",
    "docker_capabilities",
    "harness_capabilities",
    "local_capabilities",
]
