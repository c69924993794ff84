"""A real agent baked into the task image BenchFlow runs (design 436).

BenchFlow 0.7.11 installs its ACP agents inside the sandbox before each rollout: its
``install_cmd`` downloads Node.js into ``/opt/benchflow/node`` (skipped when
``/opt/benchflow/node/bin/node`` exists), then runs ``/opt/benchflow/node/bin/npm install -g
--prefix /opt/benchflow/js-agents <package>@<pin>`` and launches
``/opt/benchflow/js-agents/bin/<binary>``. A sandbox with no network fails at the download.

:func:`agent_image` adds a layer to skillci's task image holding what that step would have
fetched, from this machine: the host's ``node`` at BenchFlow's node path, the agent from
skillci's agents cache (``$SKILLCI_AGENTS_DIR``, ``skillci agents install``) at BenchFlow's
prefix, the host's ``rg`` beside node (on the agent's PATH: OpenCode's skill tool needs it),
and in place of ``npm`` a short script that answers ``install`` of a preinstalled
package with success and anything else with an error (no registry to reach). BenchFlow's own
install command then runs unchanged and succeeds offline; the agent version is skillci's
installed one, not BenchFlow's pin (recorded as ``metadata.benchflow_agent_version``).
Claude Code's and Codex's ACP adapters are node scripts: their whole npm tree (BenchFlow's
package at its pin, ``$SKILLCI_AGENTS_DIR/benchflow-<binary>-<version>``) is baked, and
BenchFlow's wrapper runs them with the baked node (design 440).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from skillci.errors import RunnerError

if TYPE_CHECKING:
    from skillci.providers.client import ModelClient
    from skillci.providers.gateway import GatewayCall
    from skillci.runners.base import TrialSpec
    from skillci.trace.models import Cost

#: BenchFlow's prefixes inside the sandbox (``benchflow.agents.registry``).
NODE_PREFIX = "/opt/benchflow/node"
JS_AGENT_PREFIX = "/opt/benchflow/js-agents"


@dataclass(frozen=True)
class AgentLayer:
    """How BenchFlow finds one agent: its npm package dir under ``lib/node_modules`` and its
    ``bin/<binary>``. A native agent (``executable`` set: that file of skillci's install,
    relative to its ``node_modules``) is copied alone; a node agent (``pin`` set: BenchFlow's
    pinned version of ``package``) is its whole npm tree, from
    ``$SKILLCI_AGENTS_DIR/benchflow-<binary>-<version>`` (:func:`js_install_dir`)."""

    skillci_agent: str
    package: str
    binary: str
    executable: str = ""
    pin: str = ""
    #: files the image also gets (absolute path, text) and variables the agent gets
    files: tuple[tuple[str, str], ...] = ()
    env: tuple[tuple[str, str], ...] = ()


#: Claude Code's machine-wide settings (read whatever ``$HOME`` is): the adapter starts in
#: ``bypassPermissions``, as skillci runs Claude Code locally (``--dangerously-skip-
#: permissions``). Else it asks for each tool, BenchFlow answers ``allow_always``, and Claude
#: Code writes that rule to the workspace's ``.claude/settings.local.json`` -- a file the
#: task's verifier counts as an unrelated change (design 440).
CLAUDE_MANAGED_SETTINGS = "/etc/claude-code/managed-settings.json"
CLAUDE_BYPASS = '{"permissions": {"defaultMode": "bypassPermissions"}}\n'

#: BenchFlow agents skillci can bake into the image -> what to copy from skillci's install.
#: OpenCode ships a native executable (BenchFlow's wrapper runs it directly, not via node);
#: Claude Code's and Codex's ACP adapters are node scripts BenchFlow runs with its node,
#: BenchFlow's own packages at its pins (``benchflow.agents.registry``, design 440).
LAYERS: dict[str, AgentLayer] = {
    "opencode": AgentLayer("opencode", "opencode-ai", "opencode", "opencode-ai/bin/opencode.exe"),
    "claude-agent-acp": AgentLayer(
        "claude-code",
        "@agentclientprotocol/claude-agent-acp",
        "claude-agent-acp",
        pin="0.73.0",
        files=((CLAUDE_MANAGED_SETTINGS, CLAUDE_BYPASS),),
        env=(("IS_SANDBOX", "1"),),  # bypassPermissions is refused as root without it
    ),
    "codex-acp": AgentLayer("codex", "@agentclientprotocol/codex-acp", "codex-acp", pin="2.0.1"),
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


#: The image's entrypoint: BenchFlow's host LiteLLM proxy is at ``host.docker.internal``
#: (on Linux it asks for the engine's default bridge, which this engine may lack); the name
#: is made the container's gateway -- the host -- before the container's command runs.
ENTRYPOINT = """#!/bin/sh
# skillci (design 436): host.docker.internal is the container's gateway (the host)
if command -v python3 >/dev/null 2>&1 && ! grep -q host.docker.internal /etc/hosts; then
  python3 - <<'PY' || true
import socket, struct
for line in open("/proc/net/route").read().splitlines()[1:]:
    f = line.split()
    if f[1] == "00000000" and int(f[3], 16) & 2:
        ip = socket.inet_ntoa(struct.pack("<L", int(f[2], 16)))
        open("/etc/hosts", "a").write(ip + " host.docker.internal\\n")
        break
PY
fi
exec "$@"
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


def _place(src: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
    Path(dest).parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(src, dest)  # the agent is ~180 MB: no copy when on one filesystem
    except OSError:
        shutil.copy2(src, dest)


def js_install_dir(layer: AgentLayer, version: str | None = None) -> Path:
    """Where a node agent's npm tree is (``npm install --prefix`` of ``package@version``,
    BenchFlow's pin when None) in skillci's agents cache."""
    from skillci.agents.install import agents_dir

    return agents_dir() / f"benchflow-{layer.binary}-{version or layer.pin}"


def js_install_hint(layer: AgentLayer, version: str | None = None) -> str:
    where = js_install_dir(layer, version)
    return f"install it: npm install --prefix {where} {layer.package}@{version or layer.pin}"


def _bin_target(pkg_json: Path, binary: str) -> str:
    """The file ``binary`` runs, relative to the package dir (its package.json's ``bin``)."""
    import json

    bins = json.loads(pkg_json.read_text()).get("bin")
    target = bins.get(binary) if isinstance(bins, dict) else bins
    if not isinstance(target, str):
        raise RunnerError(f"{pkg_json} names no bin {binary!r}")
    return target.removeprefix("./")


def _place_agent(layer: AgentLayer, install: Path, opt: Path) -> None:
    """The agent at BenchFlow's prefix ``opt/js-agents``, from skillci's install dir."""
    modules = install / "node_modules"
    pkg = modules / layer.package / "package.json"
    if not pkg.is_file():
        raise RunnerError(
            f"{pkg} is missing from skillci's {layer.skillci_agent} install",
            hint=js_install_hint(layer) if layer.pin else None,
        )
    lib = opt / "js-agents" / "lib" / "node_modules"
    bin_ = opt / "js-agents" / "bin" / layer.binary
    if layer.pin:  # a node script: its whole npm tree (the deps resolve as siblings)
        shutil.copytree(modules, lib, symlinks=True, copy_function=_place)
        bin_.parent.mkdir(parents=True, exist_ok=True)
        target = _bin_target(pkg, layer.binary)
        bin_.symlink_to(f"../lib/node_modules/{layer.package}/{target}")
        return
    exe = modules / layer.executable
    if not exe.is_file():
        raise RunnerError(
            f"{exe} is missing from skillci's {layer.skillci_agent} install",
            hint=f"reinstall it: skillci agents install {layer.skillci_agent}",
        )
    _place(pkg, lib / layer.package / "package.json")
    _place(exe, bin_)


def context(layer: AgentLayer, install: Path, base: str, where: Path) -> Path:
    """The build context of ``base`` + ``layer`` (from skillci's install dir ``install``)."""
    opt = where / "opt"
    _place_agent(layer, install, opt)
    copies = ""
    for i, (dest, text) in enumerate(layer.files):
        (where / f"file-{i}").write_text(text)
        copies += f"COPY file-{i} {dest}\n"
    _place(_node(), opt / "node" / "bin" / "node")
    rg = shutil.which("rg")
    if rg is not None:  # OpenCode's skill tool lists the skill's files with it (else it
        # downloads one, and with no network the tool answers "ripgrep execution failed")
        _place(Path(rg).resolve(), opt / "node" / "bin" / "rg")
    npm = opt / "node" / "bin" / "npm"
    npm.write_text(NPM_SHIM)
    npm.chmod(0o755)
    entry = opt / "skillci-entrypoint"
    entry.write_text(ENTRYPOINT)
    entry.chmod(0o755)
    (where / "Dockerfile").write_text(
        f"FROM {base}\nCOPY opt/ /opt/benchflow/\n{copies}"
        'ENTRYPOINT ["/opt/benchflow/skillci-entrypoint"]\n'
        f'LABEL skillci.benchflow-agent="{layer.skillci_agent}"\n'
    )
    return where


def _installed(layer: AgentLayer, version: str | None) -> tuple[Path, str]:
    """skillci's install dir of ``layer`` at ``version`` and that version; RunnerError (the
    install hint) when it is absent."""
    from skillci.agents.install import AgentNotInstalled, resolve

    if layer.pin:
        where = js_install_dir(layer, version)
        if not (where / "node_modules" / layer.package / "package.json").is_file():
            raise RunnerError(
                f"BenchFlow's {layer.package}@{version or layer.pin} is not in {where.parent}",
                hint=js_install_hint(layer, version),
            )
        return where, version or layer.pin
    try:
        found = resolve(layer.skillci_agent, version)
    except AgentNotInstalled as exc:
        raise RunnerError(exc.message, hint=exc.hint) from None
    return found.path, found.version


def agent_image(base: str, bench_agent: str, version: str | None = None) -> tuple[str, str]:
    """``base`` with BenchFlow agent ``bench_agent`` baked in (built once per base image,
    agent version and node): the image's tag and the agent version in it. RunnerError (a
    measurement error) when the agent is not installed or the build fails."""
    from docker import errors

    from skillci.runners.docker import client

    layer = layer_for(bench_agent)
    if layer is None:
        raise RunnerError(f"BenchFlow agent {bench_agent!r} has no offline image layer")
    path, found_version = _installed(layer, version)
    base_id = str(client().images.get(base).id)
    key = f"{base_id}|{layer}|{path}|{found_version}|{_node()}|{shutil.which('rg')}|{NPM_SHIM}|{ENTRYPOINT}"
    tag = f"skillci-benchflow-agent:{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    try:
        client().images.get(tag)
        return tag, found_version
    except errors.ImageNotFound:
        pass
    # beside the install when it is writable: the ~180 MB executable is then hard-linked
    where = path.parent if os.access(path.parent, os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="skillci-bf-agent-", dir=where) as tmp:
        ctx = context(layer, path, base, Path(tmp))
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
                f"adding {layer.skillci_agent} {found_version} to {base} failed: {exc}"
            ) from exc
    return tag, found_version


@contextmanager
def run_alias(image: str, name: str) -> Iterator[str]:
    """A tag of ``image`` for one BenchFlow run: BenchFlow removes the image it ran when the
    rollout ends, which then drops only this tag (the baked image stays for the next run)."""
    from skillci.runners.docker import client

    repo, _, tag = image.rpartition(":")
    alias = f"{repo}:{tag}-{name}"[:128]
    client().images.get(image).tag(alias)
    try:
        yield alias
    finally:
        with suppress(Exception):  # BenchFlow usually removed it already
            client().images.remove(alias, noprune=True)


def gateway_cost(cost: Cost, calls: list[GatewayCall]) -> Cost:
    """``cost`` with its model calls, tokens and dollars from skillci's gateway (every call
    the agent made on the route; BenchFlow's LiteLLM count saw fewer, design 440)."""
    answered = [c for c in calls if c.error is None]
    priced = [c.usd for c in answered if c.usd is not None]
    return cost.model_copy(
        update={
            "model_calls": len(answered),
            "cached_model_calls": len([c for c in answered if c.cached]),
            "input_tokens": sum(c.input_tokens for c in answered),
            "output_tokens": sum(c.output_tokens for c in answered),
            "usd": sum(priced) if priced else None,
        }
    )


def route_client(spec: TrialSpec) -> ModelClient:
    """The client of the trial's route (its budget, no response cache: a student's calls
    vary) that skillci's gateway answers BenchFlow's LiteLLM proxy with."""
    from skillci.providers.budget import BudgetMeter
    from skillci.providers.client import ModelClient

    a = spec.agent
    if a.route is None or a.route_name is None:
        raise RunnerError(
            f"agent {a.kind} on BenchFlow needs a model route", hint="pass --model ROUTE"
        )
    return ModelClient(a.route_name, a.route, meter=BudgetMeter(a.budget, name="run"))


__all__ = [
    "ENTRYPOINT",
    "LAYERS",
    "NPM_SHIM",
    "AgentLayer",
    "agent_image",
    "context",
    "gateway_cost",
    "js_install_dir",
    "js_install_hint",
    "layer_for",
    "route_client",
    "run_alias",
]
