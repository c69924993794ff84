"""What each runner can provide, as :class:`~skillci.tasks.environment.RunnerCapabilities`.

Each runner asks for its own (``LocalRunner.capabilities``, ``DockerRunner.capabilities``,
a harness runner's ``capabilities``): there is no table of runner names here
(:mod:`skillci.runners.registry` holds them).

The decision is pure (:func:`skillci.tasks.environment.check_environment`); this module
probes the machine for the facts it needs — only the executables and Python packages a
task's requirements name, the CPU count, the memory, whether bubblewrap works:

- **local** (bubblewrap, or ``--sandbox none``): no image build; ``/app``; the network is
  closed with bubblewrap's ``--unshare-net`` unless the task sets ``allow_internet`` (a plain
  subprocess cannot close it); no GPUs; the host's tools on the sandbox PATH and the
  packages of the Python skillci runs on. Without bubblewrap the workspace is a host dir,
  not ``/app``: a task whose instruction, tests or solution name ``/app`` is unsupported.
- **docker**: builds the task's Dockerfile (or runs ``docker_image``); any working directory
  it can bind-mount (the runner exports the image's WORKDIR and mounts the workspace there;
  not ``/`` nor a system directory); ``network_mode="none"`` unless ``allow_internet``; the
  task's ``cpus`` and ``memory_mb`` must fit what the engine reports (``docker info``: NCPU,
  MemTotal), and its ``gpus`` the NVIDIA GPUs the engine can attach (an ``nvidia`` runtime or
  CDI devices; none otherwise); ``allow_internet`` needs the engine's ``bridge`` network, and
  the images the task names must be in the engine (nothing is pulled).
- **harbor** (``-e local``, skillci's bubblewrap environment): no ``RUN`` step, any ``WORKDIR``,
  network as ``allow_internet``. Other Harbor environments and **benchflow** (``--sandbox
  docker``) build the image themselves and read ``task.toml`` themselves.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata
import os
import re
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import skillci.runners.sandbox as _sandbox
from skillci.runners.sandbox import path_env
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
    path = path_env()
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
    bwrap = sandbox != "none" and _sandbox.bwrap_path() is not None
    return RunnerCapabilities(
        runner="local",
        builds_images=False,
        workdirs=[WORKSPACE],
        workdir_is_path=bwrap,
        network_closed=bwrap,
        network_open=True,
        cpus=cpus,
        memory_mb=memory,
        tools=_tools(req.tools),
        python=_python(req),
    )


_CDI_GPU = re.compile(r"^nvidia\.com/gpu=(\d+|GPU-[\w-]+)$")


def engine_gpus(info: Mapping[str, Any], dev: Path = Path("/dev")) -> int:
    """NVIDIA GPUs the engine of ``docker info`` can attach: its CDI devices
    (``DiscoveredDevices``, one ``nvidia.com/gpu=N`` each) or, with an ``nvidia`` runtime,
    this machine's ``/dev/nvidiaN`` (the engine is local: remote engines are refused)."""
    cdi = {
        str(d.get("ID", ""))
        for d in info.get("DiscoveredDevices") or []
        if isinstance(d, Mapping) and _CDI_GPU.match(str(d.get("ID", "")))
    }
    if cdi:
        return len(cdi)
    if "nvidia" not in (info.get("Runtimes") or {}):
        return 0
    with contextlib.suppress(OSError):
        return sum(1 for p in dev.iterdir() if re.fullmatch(r"nvidia\d+", p.name))
    return 0


def docker_capabilities(
    info: Mapping[str, Any] | None = None,
    *,
    networks: list[str] | None = None,
    missing_images: list[str] | None = None,
) -> RunnerCapabilities:
    """The Docker runner given its engine's ``docker info`` (``None``: no engine answered, so
    this machine's CPUs and memory, and no GPUs), its ``networks`` (``None``: not known; a
    trial with ``allow_internet`` needs ``bridge``) and the task's images it lacks."""
    cpus, memory = _machine()
    gpus = 0
    if info is not None:
        if isinstance(info.get("NCPU"), int) and info["NCPU"] > 0:
            cpus = float(info["NCPU"])
        if isinstance(info.get("MemTotal"), int) and info["MemTotal"] > 0:
            memory = info["MemTotal"] // 2**20
        gpus = engine_gpus(info)
    return RunnerCapabilities(
        runner="docker",
        builds_images=True,
        mounts_workdir=True,
        network_closed=True,
        network_open=networks is None or "bridge" in networks,
        gpus=gpus,
        missing_images=missing_images or [],
        cpus=cpus,
        memory_mb=memory,
        resources_of="the Docker engine" if info is not None else "this machine",
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


__all__ = [
    "docker_capabilities",
    "engine_gpus",
    "harness_capabilities",
    "local_capabilities",
]
