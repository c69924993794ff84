"""A task as skillci hands it to Harbor's docker environment (design 413).

Harbor 0.25's docker environment enforces a ``no-network`` task (``allow_internet = false``,
every bundled task) only with its egress-control sidecar, which needs two images from Docker
Hub (a pinned ``alpine`` to probe the kernel, ``gogost/gost`` for the proxy); on an offline
engine the probe fails and Harbor refuses the task. skillci closes the network itself
instead, the way its own Docker runner does: a Compose overlay (``--extra-docker-compose``)
gives the task's ``main`` service ``network_mode: none`` (loopback only — stricter than the
sidecar's deny-all), and the task is exported to the attempt's dir with its
``[environment]`` network line flipped to public, so Harbor neither probes nor refuses. The
export differs from the task in that one line (checked by re-parsing both); ``environment/``
is copied unchanged, so what the agent's workspace holds is the task's.

``build_network`` (``$SKILLCI_DOCKER_BUILD_NETWORK``, as the Docker runner reads it) is the
network of the image build's ``RUN`` steps: ``none`` on an engine without a default bridge
(scripts/ci_docker.sh's), whose BuildKit otherwise fails with "network bridge not found".

A task that brings its own ``environment/docker-compose.yaml``, an allowlist, or network
settings per verifier or step is passed as it is: Harbor's own rules apply to it.
"""

from __future__ import annotations

import json
import re
import shutil
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillci.errors import RunnerError

#: The task.toml ``[environment]`` lines that ask for no network -> the public line skillci
#: writes in the export (the overlay closes the network instead).
NO_NETWORK_LINES = {
    re.compile(r"^(\s*)allow_internet\s*=\s*false\s*(#.*)?$"): "allow_internet = true",
    re.compile(r"^(\s*)network_mode\s*=\s*[\"']no-network[\"']\s*(#.*)?$"): (
        'network_mode = "public"'
    ),
}
COMPOSE_FILES = ("docker-compose.yaml", "docker-compose.yml", "compose.yaml", "compose.yml")


@dataclass(frozen=True)
class DockerTask:
    """What ``harbor run -e docker`` gets: the task dir (``-p``) and the Compose overlays
    (``--extra-docker-compose``), empty when the task goes as it is."""

    path: Path
    overlays: tuple[Path, ...] = ()


def _own_network_rules(cfg: dict[str, Any]) -> bool:
    """True when the task sets networking Harbor must handle itself (an allowlist, or a
    verifier's or step's own network)."""
    env = cfg.get("environment") or {}
    if env.get("allowed_hosts") or env.get("network_mode") == "allowlist":
        return True
    verifier_env = (cfg.get("verifier") or {}).get("environment") or {}
    if "allow_internet" in verifier_env or "network_mode" in verifier_env:
        return True
    return bool(cfg.get("steps"))


def _no_network(cfg: dict[str, Any]) -> bool:
    env = cfg.get("environment") or {}
    return env.get("allow_internet") is False or env.get("network_mode") == "no-network"


def _public_toml(text: str) -> str:
    """``text`` with its ``[environment]`` no-network line made public."""
    out, section = [], ""
    for line in text.splitlines(keepends=True):
        if m := re.match(r"^\s*\[([^\]]+)\]", line):
            section = m.group(1).strip()
        if section == "environment":
            for pat, repl in NO_NETWORK_LINES.items():
                if m := pat.match(line.rstrip("\r\n")):
                    line = f"{m.group(1)}{repl}\n"
        out.append(line)
    return "".join(out)


def docker_task(task_root: Path, where: Path, build_network: str | None = None) -> DockerTask:
    """The task ``task_root`` as Harbor's docker environment should run it; any export and
    overlay are written under ``where``."""
    toml_path = task_root / "task.toml"
    try:
        text = toml_path.read_text()
        cfg = tomllib.loads(text)
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise RunnerError(f"{toml_path}: cannot read it: {exc}", file=toml_path) from exc
    own_compose = any((task_root / "environment" / n).exists() for n in COMPOSE_FILES)
    if own_compose or _own_network_rules(cfg):
        return DockerTask(task_root)
    main: dict[str, Any] = {}
    path = task_root
    if _no_network(cfg):
        main["network_mode"] = "none"
        path = where / "task" / task_root.name
        shutil.copytree(task_root, path, symlinks=True)
        public = _public_toml(text)
        env = dict(cfg.get("environment") or {})
        env.update(
            {"allow_internet": True} if "allow_internet" in env else {"network_mode": "public"}
        )
        if tomllib.loads(public) != {**cfg, "environment": env}:
            raise RunnerError(
                f"{toml_path}: cannot rewrite its [environment] network line for Harbor's "
                "docker environment",
                hint="write it as `allow_internet = false` on a line of its own",
                file=toml_path,
            )
        (path / "task.toml").write_text(public)
    if build_network:
        main["build"] = {"network": build_network}
    if not main:
        return DockerTask(task_root)
    overlay = where / "compose-overlay.json"
    overlay.parent.mkdir(parents=True, exist_ok=True)
    overlay.write_text(json.dumps({"services": {"main": main}}, indent=2) + "\n")
    return DockerTask(path, (overlay,))


__all__ = ["COMPOSE_FILES", "NO_NETWORK_LINES", "DockerTask", "docker_task"]
