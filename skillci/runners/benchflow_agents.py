"""A real agent baked into the task image BenchFlow runs (design 436).

BenchFlow 0.7.11 installs its ACP agents inside the sandbox before each rollout: its
``install_cmd`` downloads Node.js into ``/opt/benchflow/node`` (skipped when
``/opt/benchflow/node/bin/node`` exists), then runs ``/opt/benchflow/node/bin/npm install -g
--prefix /opt/benchflow/js-agents <package>@<pin>`` and launches
``/opt/benchflow/js-agents/bin/<binary>``. A sandbox with no network fails at the download.

:func:`agent_image` adds a layer to skillci's task image holding what that step would have
fetched, from this machine: the host's ``node`` at BenchFlow's node path, the agent from
skillci's agents cache (``$SKILLCI_AGENTS_DIR``, ``skillci agents install``) at BenchFlow's
prefix, and in place of ``npm`` a short script that answers ``install`` of a preinstalled
package with success and anything else with an error (no registry to reach). BenchFlow's own
install command then runs unchanged and succeeds offline; the agent version is skillci's
installed one, not BenchFlow's pin (recorded as ``metadata.benchflow_agent_version``).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from skillci.errors import RunnerError

#: BenchFlow's prefixes inside the sandbox (``benchflow.agents.registry``).
NODE_PREFIX = "/opt/benchflow/node"
JS_AGENT_PREFIX = "/opt/benchflow/js-agents"


@dataclass(frozen=True)
class AgentLayer:
    """How BenchFlow finds one agent: its npm package dir under ``lib/node_modules``, and the
    file of skillci's install (relative to its ``node_modules``) it runs as ``bin/<binary>``."""

    skillci_agent: str
    package: str
    binary: str
    executable: str


#: BenchFlow agents skillci can bake into the image -> what to copy from skillci's install.
#: OpenCode ships a native executable (BenchFlow's wrapper runs it directly, not via node).
LAYERS: dict[str, AgentLayer] = {
    "opencode": AgentLayer("opencode", "opencode-ai", "opencode", "opencode-ai/bin/opencode.exe"),
}

#: ``npm`` in the image: BenchFlow's ``npm --version`` and ``npm install -g --prefix P SPEC``
#: of a package already under ``P/lib/node_modules`` succeed; anything else fails loudly.
NPM_SHIM = """#!/bin/sh
# skillci (design 436): the agent is preinstalled in this image; the sandbox has no network
if [ "$1" = "--version" ] || [ "$1" = "-v" ]; then echo "0.0.0-skillci-offline"; exit 0; fi
if [ "$1" != "install" ]; then
  echo "skillci offline npm: only 'install' of a preinstalled agent works here: $*" >&2
  exit 1
fi
shift
prefix=/usr/local
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2; continue ;;
    --prefix=*) prefix=${1#--prefix=} ;;
    -*) ;;
    *)
      name=$1
      case "$name" in
        @*/*@*) name=${name%@*} ;;
        @*) ;;
        *@*) name=${name%%@*} ;;
      esac
      if [ ! -d "$prefix/lib/node_modules/$name" ]; then
        echo "skillci offline npm: $1 is not preinstalled under $prefix (no network)" >&2
        exit 1
      fi
      echo "skillci offline npm: $name preinstalled under $prefix (asked for $1)" ;;
  esac
  shift
done
exit 0
"""


def layer_for(bench_agent: str) -> AgentLayer | None:
    """The layer that runs BenchFlow agent ``bench_agent`` offline (None: none yet)."""
    return LAYERS.get(bench_agent)


def _node() -> Path:
    found = shutil.which("node")
    if found is None:
        raise RunnerError(
            "no node on PATH to put into the BenchFlow image",
            hint="install Node.js 18+ on this machine (the image gets the host's node)",
        )
    return Path(found).resolve()


def _place(src: Path, dest: Path) -> None:
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)  # the agent is ~180 MB: no copy when on one filesystem
    except OSError:
        shutil.copy2(src, dest)


def context(layer: AgentLayer, install: Path, base: str, where: Path) -> Path:
    """The build context of ``base`` + ``layer`` (from skillci's install dir ``install``)."""
    exe = install / "node_modules" / layer.executable
    if not exe.is_file():
        raise RunnerError(
            f"{exe} is missing from skillci's {layer.skillci_agent} install",
            hint=f"reinstall it: skillci agents install {layer.skillci_agent}",
        )
    opt = where / "opt"
    pkg = install / "node_modules" / layer.package / "package.json"
    _place(pkg, opt / "js-agents" / "lib" / "node_modules" / layer.package / "package.json")
    _place(exe, opt / "js-agents" / "bin" / layer.binary)
    _place(_node(), opt / "node" / "bin" / "node")
    npm = opt / "node" / "bin" / "npm"
    npm.write_text(NPM_SHIM)
    npm.chmod(0o755)
    (where / "Dockerfile").write_text(
        f"FROM {base}\nCOPY opt/ /opt/benchflow/\n"
        f'LABEL skillci.benchflow-agent="{layer.skillci_agent}"\n'
    )
    return where


def agent_image(base: str, bench_agent: str, version: str | None = None) -> tuple[str, str]:
    """``base`` with BenchFlow agent ``bench_agent`` baked in (built once per base image,
    agent version and node): the image's tag and the agent version in it. RunnerError (a
    measurement error) when the agent is not installed or the build fails."""
    from skillci.agents.install import AgentNotInstalled, resolve
    from skillci.runners.docker import _docker_errors, client

    layer = layer_for(bench_agent)
    if layer is None:
        raise RunnerError(f"BenchFlow agent {bench_agent!r} has no offline image layer")
    try:
        found = resolve(layer.skillci_agent, version)
    except AgentNotInstalled as exc:
        raise RunnerError(exc.message, hint=exc.hint) from None
    errors = _docker_errors()
    base_id = str(client().images.get(base).id)
    key = f"{base_id}|{layer}|{found.version}|{_node()}"
    tag = f"skillci-benchflow-agent:{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    try:
        client().images.get(tag)
        return tag, found.version
    except errors.ImageNotFound:
        pass
    with tempfile.TemporaryDirectory(prefix="skillci-bf-agent-", dir=found.path.parent) as tmp:
        ctx = context(layer, found.path, base, Path(tmp))
        try:
            client().images.build(
                path=str(ctx),
                tag=tag,
                rm=True,
                forcerm=True,
                pull=False,
                network_mode=os.environ.get("SKILLCI_DOCKER_BUILD_NETWORK") or None,
                labels={"skillci.benchflow-agent": layer.skillci_agent},
            )
        except (errors.BuildError, errors.APIError) as exc:
            raise RunnerError(
                f"adding {layer.skillci_agent} {found.version} to {base} failed: {exc}"
            ) from exc
    return tag, found.version


__all__ = ["LAYERS", "NPM_SHIM", "AgentLayer", "agent_image", "context", "layer_for"]
