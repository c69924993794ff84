"""OpenCode (``opencode-ai``) through ``opencode run --format json``.

Skills: ``.opencode/skills/<name>/SKILL.md`` in the workspace (it would also read
``.claude/skills``; ``OPENCODE_DISABLE_CLAUDE_CODE=1`` keeps the catalogue to ours); the
system message lists them and the agent loads one with its ``skill`` tool (which needs
``rg`` on PATH). Model: OpenAI chat completions through the bundled
``@ai-sdk/openai-compatible`` provider, configured in a config file named by
``$OPENCODE_CONFIG``. Stream: ``step_start``, ``tool_use`` (tool, input, output, status),
``text``, ``step_finish`` (reason, tokens).
"""

from __future__ import annotations

import json
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

PROVIDER = "skillci"


class OpenCode(HeadlessAdapter):
    name = "opencode"
    package = "opencode-ai"
    binary = "opencode"
    skills_dir = ".opencode/skills"
    wire_api = "chat"

    def environment(self, home: Path, gateway: Gateway, model: str) -> dict[str, str]:
        config = {
            "$schema": "https://opencode.ai/config.json",
            "autoupdate": False,
            "share": "disabled",
            "model": f"{PROVIDER}/{model}",
            "small_model": f"{PROVIDER}/{model}",
            "provider": {
                PROVIDER: {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "skillci gateway",
                    "options": {"baseURL": gateway.base_url + "/v1", "apiKey": gateway.token},
                    "models": {model: {"name": model}},
                }
            },
        }
        path = write_home_config(home / ".config" / "opencode" / "opencode.json", config)
        return {
            "OPENCODE_CONFIG": str(path),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            "OPENCODE_DISABLE_CLAUDE_CODE": "1",
        }

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [exe, "run", "--format", "json", "-m", f"{PROVIDER}/{model}", prompt]

    def parse(self, record: dict[str, Any], log: EventLog, state: StreamState) -> None:
        kind = record.get("type")
        part = obj(record.get("part"))
        if kind == "text" and part.get("text"):
            text = str(part["text"])
            log.add(MessageEvent, role="assistant", content=text)
            state.final_output = text
        elif kind == "tool_use":
            st = obj(part.get("state"))
            call_id, tool = str(part.get("callID") or part.get("id")), str(part.get("tool"))
            add_tool_call(log, state, call_id, tool, st.get("input"))
            failed = st.get("status") == "error"
            log.add(
                ToolResultEvent,
                call_id=call_id,
                tool=tool,
                output=str(st.get("error") if failed else st.get("output") or "")[:20_000],
                error=str(st.get("error"))[:500] if failed else None,
            )
        elif kind == "error":
            state.reported_error = json.dumps(record.get("error"))[:1000]


class OpenCodeAcp(AcpAdapter, OpenCode):
    """OpenCode through its ACP server, ``opencode acp`` (skillci.agents.acp): the same
    install, HOME, configuration and skills directory as :class:`OpenCode`; the model is
    the configuration's default (``model``). Its ``tool_call`` updates are titled with the
    tool's name first (``skill``, ``bash``), a human title once done."""

    name = "opencode-acp"
    install_name = "opencode"

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [exe, "acp", "--cwd", cwd]


__all__ = ["OpenCode", "OpenCodeAcp"]
