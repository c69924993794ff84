"""Qwen Code (``@qwen-code/qwen-code``) through ``qwen -o stream-json``.

Skills: ``.qwen/skills/<name>/SKILL.md`` in the workspace (``project`` skills); the first
user message lists them in a ``<system-reminder>`` beside its bundled skills, and the agent
loads one with its ``skill`` tool (``{"skill": NAME}``). Model: OpenAI chat completions,
streamed, at ``$OPENAI_BASE_URL`` with ``$OPENAI_API_KEY`` (the gateway's token) and
``--auth-type openai``. Its settings (``$HOME/.qwen/settings.json``) switch off usage
statistics, telemetry, auto-update and the managed auto-memory (a side call after each
turn that would write memories into the HOME). Stream: Claude Code's ``stream-json``
shape (``system/init``, ``assistant`` messages with ``tool_use`` blocks, ``user`` messages
with ``tool_result`` blocks, a last ``result``), so it is parsed as Claude Code's is.
"""

from __future__ import annotations

from pathlib import Path

from skillci.agents.headless import write_home_config
from skillci.agents.real.claude_code import ClaudeCode
from skillci.providers.gateway import Gateway

SETTINGS = {
    "general": {"disableAutoUpdate": True, "enableAutoUpdate": False},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "memory": {"enableManagedAutoMemory": False},
}


class QwenCode(ClaudeCode):
    name = "qwen"
    package = "@qwen-code/qwen-code"
    binary = "qwen"
    skills_dir = ".qwen/skills"
    wire_api = "chat"

    def environment(self, home: Path, gateway: Gateway, model: str) -> dict[str, str]:
        write_home_config(home / ".qwen" / "settings.json", SETTINGS)
        return {
            "OPENAI_BASE_URL": gateway.base_url + "/v1",
            "OPENAI_API_KEY": gateway.token,
            "OPENAI_MODEL": model,
            # it warns on stderr that --approval-mode yolo runs without its own sandbox:
            # the trial's sandbox is the one that holds it
            "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1",
        }

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        return [
            exe,
            "--output-format",
            "stream-json",
            "--approval-mode",
            "yolo",
            "--auth-type",
            "openai",
            "--model",
            model,
            prompt,
        ]


__all__ = ["QwenCode"]
