"""Codex CLI (``@openai/codex``) through ``codex exec --json``.

Skills: ``.agents/skills/<name>/SKILL.md`` in the workspace (a git repository); the
developer message lists each skill with its path, and the agent loads one by reading that
file with a shell command — there is no skill tool. Model: OpenAI Responses
(``wire_api = "responses"``) at the gateway, configured in ``$CODEX_HOME/config.toml`` with
the gateway token in ``$SKILLCI_GATEWAY_TOKEN``. Stream: ``thread.started``, ``item.*`` of
type ``command_execution`` (command, output, exit code), ``file_change``,
``agent_message``, and ``turn.completed`` (usage).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillci.agents.acp import AcpAdapter
from skillci.agents.base import EventLog
from skillci.agents.headless import HeadlessAdapter, StreamState, obj
from skillci.providers.gateway import Gateway
from skillci.trace.models import MessageEvent, ToolCallEvent, ToolResultEvent

TOKEN_ENV = "SKILLCI_GATEWAY_TOKEN"  # noqa: S105 - a variable name, not a secret
#: Item types that are tool calls, and the item fields that are their arguments.
TOOL_ITEMS = {
    "command_execution": ("command",),
    "file_change": ("changes",),
    "mcp_tool_call": ("server", "tool", "arguments"),
    "web_search": ("query",),
}


def config_toml(base_url: str, model: str) -> str:
    """Codex's configuration: the gateway as the one provider, everything that would
    reach another host switched off (plugins, apps, update checks, analytics, search)."""
    q = json.dumps  # a TOML basic string is a JSON string
    return "\n".join(
        [
            f"model = {q(model)}",
            'model_provider = "skillci"',
            'approval_policy = "never"',
            'sandbox_mode = "danger-full-access"',
            "check_for_update_on_startup = false",
            'web_search = "disabled"',
            "",
            "[model_providers.skillci]",
            'name = "skillci gateway"',
            f"base_url = {q(base_url + '/v1')}",
            'wire_api = "responses"',
            f"env_key = {q(TOKEN_ENV)}",
            "",
            "[features]",
            *(
                f"{k} = false"
                for k in (
                    "plugins",
                    "remote_plugin",
                    "apps",
                    "api_key_model_discovery",
                    "tool_suggest",
                    "image_generation",
                )
            ),
            "",
            "[analytics]",
            "enabled = false",
            "",
        ]
    )


class Codex(HeadlessAdapter):
    name = "codex"
    package = "@openai/codex"
    binary = "codex"
    skills_dir = ".agents/skills"
    wire_api = "responses"

    def environment(self, home: Path, gateway: Gateway, model: str) -> dict[str, str]:
        codex_home = home / ".codex"
        codex_home.mkdir(parents=True, exist_ok=True)
        (codex_home / "config.toml").write_text(config_toml(gateway.base_url, model))
        return {"CODEX_HOME": str(codex_home), TOKEN_ENV: gateway.token}

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [
            exe,
            "exec",
            "--json",
            "--skip-git-repo-check",
            "--dangerously-bypass-approvals-and-sandbox",
            "-C",
            cwd,
            "-m",
            model,
            prompt,
        ]

    def parse(self, record: dict[str, Any], log: EventLog, state: StreamState) -> None:
        kind = record.get("type")
        item = obj(record.get("item"))
        itype, item_id = str(item.get("type")), str(item.get("id"))
        if kind in ("item.started", "item.completed") and itype in TOOL_ITEMS:
            if item_id not in state.tool_names:
                state.tool_names[item_id] = itype
                args = {k: item[k] for k in TOOL_ITEMS[itype] if k in item}
                log.add(ToolCallEvent, tool=itype, arguments=args, call_id=item_id)
            if kind == "item.completed":
                status = item.get("status")
                code = item.get("exit_code")
                log.add(
                    ToolResultEvent,
                    call_id=item_id,
                    tool=itype,
                    exit_code=code if isinstance(code, int) else None,
                    output=str(item.get("aggregated_output") or "")[:20_000],
                    error=None if status in (None, "completed") else str(status),
                )
        elif kind == "item.completed" and itype == "agent_message":
            text = str(item.get("text") or "")
            log.add(MessageEvent, role="assistant", content=text)
            state.final_output = text
        elif kind == "turn.failed":
            error = record.get("error")
            state.reported_error = str(error.get("message") if isinstance(error, dict) else error)
        elif kind == "error":
            state.reported_error = str(record.get("message"))


class CodexAcp(AcpAdapter, Codex):
    """Codex through Zed's ACP adapter (``@zed-industries/codex-acp``: a native binary
    built on Codex's crates, shipped as a platform package; its own install): the
    ``$CODEX_HOME/config.toml`` and skills directory of :class:`Codex`."""

    name = "codex-acp"
    package = "@zed-industries/codex-acp"
    binary = "codex-acp"

    def tool_name(self, call: dict[str, Any]) -> str:
        """Codex's item type, as its headless stream names it: ``rawInput`` is the exec
        begin event (``command``, ``parsed_cmd``) or the patch (``changes``)."""
        raw = obj(call.get("rawInput"))
        for itype, fields in TOOL_ITEMS.items():
            if fields[0] in raw:
                return itype
        return super().tool_name(call)

    def tool_arguments(self, call: dict[str, Any]) -> dict[str, Any]:
        """The item's arguments (as headless), not the event's ids and clocks."""
        raw = obj(call.get("rawInput"))
        fields = TOOL_ITEMS.get(self.tool_name(call), ())
        return {k: raw[k] for k in fields if k in raw} or super().tool_arguments(call)


__all__ = ["Codex", "CodexAcp", "config_toml"]
