"""GitHub Copilot CLI (``@github/copilot``) through ``copilot -p --output-format json``.

Skills: ``.github/skills/<name>/SKILL.md`` in the workspace (``project`` skills, listed in
``session.skills_loaded`` beside its built-in ones); the agent loads one with its
``skill`` tool (``{"skill": NAME}``). Model: its "bring your own key" mode —
``COPILOT_OFFLINE=true`` (no GitHub sign-in, telemetry, web tools or update checks) with
``COPILOT_PROVIDER_BASE_URL`` (the gateway, OpenAI chat completions) and
``COPILOT_PROVIDER_API_KEY`` (the gateway's token). The npm package is a launcher for a
native binary that unpacks its JavaScript (~235 MB) on first start, 6-9 s on this machine:
``skillci agents install`` unpacks it once into the install dir (:meth:`Copilot.after_install`)
and each trial points ``COPILOT_PKG_CACHE_HOME`` there (read-only in the sandbox), so a
fresh HOME does not pay it again. The install also warms Node's compile cache with one short
session against a canned loopback model (:func:`warm_compile_cache`); each trial points
``NODE_COMPILE_CACHE`` at it (read-only in the sandbox; Node reads it and writes nothing),
instead of compiling Copilot's JavaScript afresh in its private ``/tmp``.
Stream (JSON lines): ``assistant.message`` (``content``, ``toolRequests`` with
``toolCallId``, ``name``, ``arguments``), ``tool.execution_complete`` (``toolCallId``,
``success``, ``result.content``, ``error``), ``session.error`` (``message``) and a last
``result`` (``exitCode``); events marked ``ephemeral`` are progress, not the run.
docs/agents/copilot.md, docs/design/437.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from skillci.agents.acp import AcpAdapter
from skillci.agents.base import EventLog
from skillci.agents.headless import HeadlessAdapter, StreamState, add_tool_call, obj
from skillci.providers.client import ModelClient
from skillci.providers.gateway import Gateway
from skillci.providers.routes import ModelRoute
from skillci.providers.types import Completion
from skillci.trace.models import MessageEvent, ToolResultEvent

#: Where in its install dir the unpacked package lives (``COPILOT_PKG_CACHE_HOME``).
PKG_CACHE = "copilot-pkg"
#: Where in its install dir Node's compile cache, warmed at install, lives (``NODE_COMPILE_CACHE``).
COMPILE_CACHE = "node-compile-cache"
#: The warm-up session's prompt; the canned model answers it in one plain text message.
WARM_PROMPT = "Reply with the word done."
#: Its headless flags: the JSON-lines stream, tools without asking (the sandbox holds them).
FLAGS = (
    "--output-format",
    "json",
    "--allow-all-tools",
    "--disable-client-telemetry",
    "--no-auto-update",
)
#: Its tool behind an ACP ``tool_call`` ``kind`` (1.0.102; ``other`` is not one tool).
ACP_KINDS = {"execute": "bash", "read": "view", "edit": "edit", "search": "grep"}
#: What reaches ``copilot`` besides PATH when it unpacks itself at install.
_QUIET = {"COPILOT_AUTO_UPDATE": "false", "COPILOT_OFFLINE": "true"}


def _prefix(exe: Path) -> Path:
    """The npm ``--prefix`` dir of ``<prefix>/node_modules/.bin/copilot``."""
    return exe.parent.parent.parent


class CannedModel(ModelClient):
    """A model that answers every call with one plain text message, at once, in-process:
    the install's warm-up session runs on it behind a :class:`Gateway` (loopback, no key,
    no network)."""

    def __init__(self) -> None:
        super().__init__("skillci-warm-up", ModelRoute(model="skillci/warm-up"))

    def complete(self, *args: Any, **kw: Any) -> Completion:
        return Completion(content="done", finish_reason="stop", input_tokens=1, output_tokens=1)


class Copilot(HeadlessAdapter):
    name = "copilot"
    package = "@github/copilot"
    binary = "copilot"
    skills_dir = ".github/skills"
    wire_api = "chat"

    def after_install(self, exe: Path) -> None:
        """Unpack the package into the install dir once (``copilot --version`` does it),
        then warm Node's compile cache there (:meth:`warm_compile_cache`)."""
        cache = _prefix(exe) / PKG_CACHE
        if not (cache / "pkg").is_dir():
            with tempfile.TemporaryDirectory(prefix="skillci-copilot-") as home:
                env = {"PATH": os.environ.get("PATH", ""), "HOME": home, **_QUIET}
                env["COPILOT_PKG_CACHE_HOME"] = str(cache)
                subprocess.run(
                    [str(exe), "--version"], env=env, capture_output=True, check=False, timeout=300
                )
        if (cache / "pkg").is_dir() and not (_prefix(exe) / COMPILE_CACHE).is_dir():
            self.warm_compile_cache(exe)

    def warm_compile_cache(self, exe: Path) -> None:
        """Run one short session (``copilot -p``) on a :class:`CannedModel` behind a
        loopback :class:`Gateway`, in a throw-away HOME and workspace, with
        ``NODE_COMPILE_CACHE`` in a temporary dir of the install that becomes
        ``<install>/node-compile-cache`` only when the session succeeded. A ``--help`` run
        warms too little (112 KB against 2.4 MB); the canned model calls no tool, so the
        session runs nothing in the workspace. A failure leaves no cache: trials then
        compile in their private ``/tmp`` (slower, never wrong)."""
        prefix = _prefix(exe)
        staging = Path(tempfile.mkdtemp(prefix=f".{COMPILE_CACHE}-", dir=prefix))
        try:
            with (
                tempfile.TemporaryDirectory(prefix="skillci-copilot-") as home,
                Gateway(CannedModel()) as gw,
            ):
                env = {
                    "PATH": os.environ.get("PATH", ""),
                    "HOME": home,
                    "TMPDIR": home,
                    **Copilot.environment(self, Path(home), gw, "skillci-warm-up"),
                    **self.install_env(exe),
                    "NODE_COMPILE_CACHE": str(staging),
                }
                done = subprocess.run(
                    [str(exe), "-p", WARM_PROMPT, *FLAGS],
                    cwd=home,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    check=False,
                    timeout=300,
                )
            if done.returncode == 0 and gw.calls and any(staging.iterdir()):
                for path in [staging, *staging.rglob("*")]:  # Node writes them owner-only
                    path.chmod(0o755 if path.is_dir() else 0o644)
                staging.rename(prefix / COMPILE_CACHE)
        except (OSError, subprocess.TimeoutExpired):
            pass
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def install_env(self, exe: Path) -> dict[str, str]:
        prefix = _prefix(exe)
        env: dict[str, str] = {}
        if (prefix / PKG_CACHE / "pkg").is_dir():
            env["COPILOT_PKG_CACHE_HOME"] = str(prefix / PKG_CACHE)
        if (prefix / COMPILE_CACHE).is_dir():
            env["NODE_COMPILE_CACHE"] = str(prefix / COMPILE_CACHE)
        return env

    def environment(self, home: Path, gateway: Gateway, model: str) -> dict[str, str]:
        return {
            **_QUIET,
            "COPILOT_HOME": str(home / ".copilot"),
            "COPILOT_PROVIDER_BASE_URL": gateway.base_url + "/v1",
            "COPILOT_PROVIDER_TYPE": "openai",
            "COPILOT_PROVIDER_API_KEY": gateway.token,
            "COPILOT_MODEL": model,
        }

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [exe, "-p", prompt, *FLAGS]

    def parse(self, record: dict[str, Any], log: EventLog, state: StreamState) -> None:
        kind = record.get("type")
        data = obj(record.get("data"))
        if kind == "assistant.message":
            text = str(data.get("content") or "")
            requests = [r for r in data.get("toolRequests") or [] if isinstance(r, dict)]
            if text:
                log.add(MessageEvent, role="assistant", content=text)
            state.final_output = None if requests else (text or state.final_output)
            for r in requests:
                add_tool_call(
                    log, state, str(r.get("toolCallId")), str(r.get("name")), r.get("arguments")
                )
        elif kind == "tool.execution_complete":
            call_id = str(data.get("toolCallId"))
            result, error = obj(data.get("result")), obj(data.get("error"))
            failed = data.get("success") is False
            log.add(
                ToolResultEvent,
                call_id=call_id,
                tool=state.tool_names.get(call_id),
                output=str(result.get("content") or error.get("message") or "")[:20_000],
                error=str(error.get("message") or "tool error") if failed else None,
            )
        elif kind == "session.error":
            state.reported_error = str(data.get("message") or data.get("errorType") or "error")
            log.error("CopilotError", state.reported_error, untrusted=True)
        elif kind == "result" and record.get("exitCode") not in (0, None):
            state.reported_error = state.reported_error or f"exit code {record.get('exitCode')}"


class CopilotAcp(AcpAdapter, Copilot):
    """Copilot CLI through its ACP server, ``copilot --acp`` (skillci.agents.acp): the same
    install, HOME, environment and skills directory as :class:`Copilot`."""

    name = "copilot-acp"
    install_name = "copilot"

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [exe, "--acp", *FLAGS[2:]]

    def tool_name(self, call: dict[str, Any]) -> str:
        """Its ``tool_call``s carry no tool name (the title is a description: "Using skill:
        NAME", "Run the failing check"): the name its headless stream gives the same call,
        from the ACP ``kind`` and a skill call's ``rawInput``."""
        raw = obj(call.get("rawInput"))
        if "skill" in raw and str(call.get("first_title") or "").startswith("Using skill"):
            return "skill"
        return ACP_KINDS.get(str(call.get("kind")), "") or super().tool_name(call)


__all__ = ["COMPILE_CACHE", "PKG_CACHE", "CannedModel", "Copilot", "CopilotAcp"]
