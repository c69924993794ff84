"""Gemini CLI (``@google/gemini-cli``) through ``gemini -p --output-format stream-json``.

Skills: ``.gemini/skills/<name>/SKILL.md`` in the workspace (workspace skills; it also
reads ``.agents/skills/`` and ``~/.gemini/skills/``); the system instruction lists them in
``<available_skills>`` beside its two built-in skills, and the agent loads one with its
``activate_skill`` tool (``{"name": NAME}``), whose result is the SKILL.md body. Model:
the Gemini API (``POST /v1beta/models/M:streamGenerateContent?alt=sse``) at
``$GOOGLE_GEMINI_BASE_URL`` (the gateway) with ``$GEMINI_API_KEY`` (the gateway's token),
auth type ``gemini-api-key`` in ``$HOME/.gemini/settings.json``; the same file switches off
usage statistics (Clearcut, ``play.googleapis.com``), telemetry and update checks.
Stream: ``init``, ``message`` (user; assistant text in ``delta`` chunks), ``tool_use``
(``tool_name``, ``tool_id``, ``parameters``), ``tool_result`` (``status``, ``output``,
``error``), ``error`` (warnings) and a last ``result`` (``status``, ``error``, ``stats``).
docs/agents/gemini.md, docs/design/430.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from skillci.agents.acp import AcpAdapter
from skillci.agents.base import EventLog
from skillci.agents.headless import (
    HeadlessAdapter,
    StreamState,
    add_tool_call,
    obj,
    write_home_config,
)
from skillci.providers.gateway import Gateway
from skillci.trace.models import MessageEvent, ToolResultEvent

#: The title of an ``activate_skill`` call over ACP: ``"NAME": description``.
ACTIVATED = re.compile(r'^"([^"]+)"')

SETTINGS = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
}


class GeminiCli(HeadlessAdapter):
    name = "gemini"
    package = "@google/gemini-cli"
    binary = "gemini"
    skills_dir = ".gemini/skills"
    wire_api = "gemini"
    skill_tools = ("activate_skill",)

    def environment(self, home: Path, gateway: Gateway, model: str) -> dict[str, str]:
        write_home_config(home / ".gemini" / "settings.json", SETTINGS)
        return {
            "GOOGLE_GEMINI_BASE_URL": gateway.base_url,
            "GEMINI_API_KEY": gateway.token,
            "GEMINI_MODEL": model,
            # headless in an untrusted folder it would drop the workspace's settings/skills
            "GEMINI_CLI_TRUST_WORKSPACE": "true",
            "GEMINI_TELEMETRY_ENABLED": "false",
        }

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [exe, "-p", prompt, "--output-format", "stream-json", "--yolo", "-m", model]

    def parse(self, record: dict[str, Any], log: EventLog, state: StreamState) -> None:
        kind = record.get("type")
        if kind == "message" and record.get("role") == "assistant":
            text = str(record.get("content") or "")
            last = log.events[-1] if log.events else None
            if isinstance(last, MessageEvent) and last.role == "assistant" and record.get("delta"):
                last.content += text  # one message from its chunks
            elif text:
                log.add(MessageEvent, role="assistant", content=text)
            state.final_output = (state.final_output or "") + text if record.get("delta") else text
        elif kind == "tool_use":
            call_id, tool = str(record.get("tool_id")), str(record.get("tool_name"))
            state.final_output = None  # text before a tool call is not the final answer
            add_tool_call(log, state, call_id, tool, record.get("parameters"))
        elif kind == "tool_result":
            call_id = str(record.get("tool_id"))
            error = obj(record.get("error"))
            failed = record.get("status") == "error"
            log.add(
                ToolResultEvent,
                call_id=call_id,
                tool=state.tool_names.get(call_id),
                output=str(record.get("output") or error.get("message") or "")[:20_000],
                error=str(error.get("message") or "tool error") if failed else None,
            )
        elif kind == "error":
            log.error(
                f"Gemini{str(record.get('severity') or 'error').title()}",
                str(record.get("message")),
                untrusted=True,
            )
        elif kind == "result" and record.get("status") == "error":
            error = obj(record.get("error"))
            state.reported_error = str(error.get("message") or error.get("type") or "error")


class GeminiCliAcp(AcpAdapter, GeminiCli):
    """Gemini CLI through its ACP server, ``gemini --acp`` (``--experimental-acp`` is its
    deprecated alias; skillci.agents.acp): the same install, HOME, settings, environment
    and skills directory as :class:`GeminiCli`; the model is ``-m``. ``--debug``: without
    it a shell call's result over ACP is empty (its display is terminal cells, which
    Gemini CLI does not send); with it, the command's output text. A call needing
    permission is announced only in ``session/request_permission``."""

    name = "gemini-acp"
    install_name = "gemini"

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [exe, "--acp", "--debug", "-m", model]

    def tool_name(self, call: dict[str, Any]) -> str:
        """Gemini CLI sends no tool name, but makes every call id ``<tool>__<id>``."""
        name, sep, _ = str(call.get("toolCallId") or "").partition("__")
        return name if sep and name else super().tool_name(call)

    def tool_arguments(self, call: dict[str, Any]) -> dict[str, Any]:
        """No ``rawInput`` either: the call's title (a shell command, a shortened file
        path; for ``activate_skill`` ``"NAME": description``, whose NAME is its argument)
        and the files it touches (``locations``: a read of SKILL.md by path)."""
        title = str(call.get("first_title") or "")
        if self.tool_name(call) == "activate_skill":
            named = ACTIVATED.match(title)
            return {"name": named.group(1)} if named else {"title": title}
        paths = [obj(x).get("path") for x in call.get("locations") or []]
        args: dict[str, Any] = {"title": title} if title else {}
        return args | ({"paths": paths} if paths else {})


__all__ = ["GeminiCli", "GeminiCliAcp"]
