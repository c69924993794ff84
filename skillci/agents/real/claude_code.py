"""Claude Code (``@anthropic-ai/claude-code``) through ``claude -p``.

Skills: ``.claude/skills/<name>/SKILL.md`` in the workspace; the agent lists them to the
model and loads one with its ``Skill`` tool. Model: Anthropic Messages at
``$ANTHROPIC_BASE_URL`` (the gateway) with ``$ANTHROPIC_API_KEY`` (the gateway's token).
Stream: ``--output-format stream-json --verbose``: ``system/init``, ``assistant`` messages
with ``tool_use`` blocks (full input), ``user`` messages with ``tool_result`` blocks, and a
last ``result`` (final text, turns, usage).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillci.agents.acp import AcpAdapter
from skillci.agents.base import EventLog
from skillci.agents.headless import HeadlessAdapter, StreamState, add_tool_call, obj
from skillci.providers.gateway import Gateway
from skillci.trace.models import MessageEvent, ToolResultEvent


def block_text(content: Any) -> str:
    """Text of a message content: a string or a list of blocks."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            str(b.get("text", "")) for b in content if isinstance(b, dict) and "text" in b
        )
    return ""


class ClaudeCode(HeadlessAdapter):
    name = "claude-code"
    package = "@anthropic-ai/claude-code"
    binary = "claude"
    skills_dir = ".claude/skills"
    wire_api = "anthropic"

    def environment(self, home: Path, gateway: Gateway, model: str) -> dict[str, str]:
        return {
            "ANTHROPIC_BASE_URL": gateway.base_url,
            "ANTHROPIC_API_KEY": gateway.token,
            "ANTHROPIC_MODEL": model,
            "ANTHROPIC_SMALL_FAST_MODEL": model,
            "CLAUDE_CONFIG_DIR": str(home / ".claude"),
            # --dangerously-skip-permissions is refused as root unless the host says sandbox
            "IS_SANDBOX": "1",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_TELEMETRY": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_ERROR_REPORTING": "1",
            "CLAUDE_CODE_MAX_RETRIES": "2",
        }

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [
            exe,
            "-p",
            prompt,
            "--output-format",
            "stream-json",
            "--verbose",
            "--dangerously-skip-permissions",
            "--model",
            model,
        ]

    def parse(self, record: dict[str, Any], log: EventLog, state: StreamState) -> None:
        kind = record.get("type")
        message = obj(record.get("message"))
        if kind == "assistant":
            for b in message.get("content") or []:
                if not isinstance(b, dict):
                    continue
                if b.get("type") == "text" and b.get("text"):
                    log.add(MessageEvent, role="assistant", content=str(b["text"]))
                elif b.get("type") == "tool_use":
                    add_tool_call(log, state, str(b.get("id")), str(b.get("name")), b.get("input"))
        elif kind == "user" and isinstance(message.get("content"), list):
            for b in message["content"]:
                if isinstance(b, dict) and b.get("type") == "tool_result":
                    call_id = str(b.get("tool_use_id"))
                    log.add(
                        ToolResultEvent,
                        call_id=call_id,
                        tool=state.tool_names.get(call_id),
                        output=block_text(b.get("content"))[:20_000],
                        error="tool error" if b.get("is_error") else None,
                    )
        elif kind == "result":
            if isinstance(record.get("result"), str):
                state.final_output = record["result"]
            state.turns = record.get("num_turns")
            if record.get("is_error"):
                state.reported_error = str(record.get("result") or record.get("subtype"))


class ClaudeCodeAcp(AcpAdapter, ClaudeCode):
    """Claude Code through Zed's ACP adapter (``@zed-industries/claude-agent-acp``: Claude
    Code's agent SDK, its own install): the environment and skills directory of
    :class:`ClaudeCode`; the model is ``$ANTHROPIC_MODEL``."""

    name = "claude-code-acp"
    package = "@zed-industries/claude-agent-acp"
    binary = "claude-agent-acp"

    def tool_name(self, call: dict[str, Any]) -> str:
        """Claude Code's own tool name, in ``_meta.claudeCode.toolName`` (titles are human:
        ``Terminal``, then the command)."""
        name = obj(obj(call.get("_meta")).get("claudeCode")).get("toolName")
        return name if isinstance(name, str) and name else super().tool_name(call)


__all__ = ["ClaudeCode", "ClaudeCodeAcp"]
