"""A scripted competent model for real agents (Claude Code, Codex, OpenCode, Qwen Code,
Gemini CLI, GitHub Copilot CLI) on loopback.

Real agents reach a model only through skillci's gateway (skillci.providers.gateway),
which turns each agent's request (Anthropic Messages, OpenAI Responses, chat completions,
the Gemini API) into a chat-completions call on the trial's route and the answer back
into the agent's stream. The route here is :class:`~tests.fakes.openai_server.FakeOpenAI` answering with
:func:`solve_cfg_log_level`: it reads which agent is asking from the tools the agent
offers, and how far the agent got from the tool results in the conversation, and answers
with the tool calls that solve the bundled task ``cfg-log-level`` the way that agent
does it — load the skill (Claude's ``Skill`` tool, a shell read of SKILL.md for Codex,
OpenCode's and Copilot's ``skill`` tool, Gemini CLI's ``activate_skill``), print its environment (what
the tests check for keys), run the check, fix the file, say so.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

from tests.fakes.openai_server import ToolCalls

SKILL = "repo-debugger"
CHECK = "python tools/check_config.py config/service.ini"
FIX = "sed -i 's/^log_level = verbose$/log_level = debug/' config/service.ini"
ENV = "env | sort"
DONE = "Fixed config/service.ini: log_level is now debug and the check passes."


def tool_names(body: dict[str, Any]) -> set[str]:
    return {str(t.get("function", {}).get("name")) for t in body.get("tools") or []}


def tool_results(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages") or [] if m.get("role") == "tool")


def codex_skill_md(body: dict[str, Any]) -> str:
    """The SKILL.md Codex lists for :data:`SKILL` (``(file: r0/NAME/SKILL.md)`` with ``r0``
    expanded by its ``### Skill roots`` table), unless it is under ``.agents/skills`` -- the
    workspace's, where skillci puts it locally: that is read by its relative path."""
    text = json.dumps(body)
    listed = re.search(rf"\(file: ([^)\s]+)/{SKILL}/SKILL\.md\)", text)
    root = listed.group(1) if listed else ".agents/skills"
    alias = re.search(rf"- `{re.escape(root)}` = `([^`]+)`", text)
    root = alias.group(1) if alias else root
    if root.endswith(".agents/skills"):
        root = ".agents/skills"
    return f"{root}/{SKILL}/SKILL.md"


def _shell(names: set[str], command: str) -> tuple[str, dict[str, Any]]:
    """A shell call in whichever shell tool a Codex version offers."""
    if "exec_command" in names:
        return "exec_command", {"cmd": command}
    if "shell_command" in names:
        return "shell_command", {"command": command}
    return "shell", {"command": ["bash", "-lc", command]}


def solve_cfg_log_level(body: dict[str, Any]) -> str | ToolCalls:
    """The next answer of a competent model on cfg-log-level."""
    names, done = tool_names(body), tool_results(body)
    if not names:  # a side call (a title, a summary): plain text
        return "Fix the service config"
    if "Skill" in names and "Bash" in names:  # Claude Code
        steps: list[tuple[str, dict[str, Any]]] = [
            ("Skill", {"skill": SKILL}),
            ("Bash", {"command": ENV, "description": "Show the environment"}),
            ("Bash", {"command": CHECK, "description": "Run the failing check"}),
            ("Bash", {"command": f"{FIX} && {CHECK}", "description": "Fix and re-check"}),
        ]
    elif "activate_skill" in names and "run_shell_command" in names:  # Gemini CLI
        steps = [
            ("activate_skill", {"name": SKILL}),
            ("run_shell_command", {"command": ENV, "description": "Show the environment"}),
            ("run_shell_command", {"command": CHECK, "description": "Run the failing check"}),
            ("run_shell_command", {"command": f"{FIX} && {CHECK}", "description": "Fix"}),
        ]
    elif "skill" in names and "run_shell_command" in names:  # Qwen Code
        steps = [
            ("skill", {"skill": SKILL}),
            ("run_shell_command", {"command": ENV, "description": "Show the environment"}),
            ("run_shell_command", {"command": CHECK, "description": "Run the failing check"}),
            ("run_shell_command", {"command": f"{FIX} && {CHECK}", "description": "Fix"}),
        ]
    elif "skill" in names and "bash" in names and "view" in names:  # GitHub Copilot CLI
        steps = [
            ("skill", {"skill": SKILL}),
            ("bash", {"command": ENV, "description": "Show the environment"}),
            ("bash", {"command": CHECK, "description": "Run the failing check"}),
            ("bash", {"command": f"{FIX} && {CHECK}", "description": "Fix and re-check"}),
        ]
    elif "skill" in names and "bash" in names:  # OpenCode
        steps = [
            ("skill", {"name": SKILL}),
            ("bash", {"command": ENV, "description": "Show the environment"}),
            ("bash", {"command": CHECK, "description": "Run the failing check"}),
            ("bash", {"command": f"{FIX} && {CHECK}", "description": "Fix and re-check"}),
        ]
    elif names & {"exec_command", "shell", "shell_command"}:  # Codex
        steps = [
            _shell(names, f"cat {codex_skill_md(body)}"),
            _shell(names, ENV),
            _shell(names, CHECK),
            _shell(names, f"{FIX} && {CHECK}"),
        ]
    else:
        return "I have no tool I know: " + json.dumps(sorted(names))
    return [steps[done]] if done < len(steps) else DONE


#: What the trigger model does on one query: ``("skill", NAME)`` calls the agent's skill
#: tool (Codex has none: it reads the SKILL.md), ``("read", NAME)`` reads NAME's SKILL.md
#: with a file/shell tool, ``("say", TEXT)`` answers in prose and loads nothing.
TriggerAction = tuple[str, str]
SKILL_DIRS = {
    "claude-code": ".claude/skills",
    "codex": ".agents/skills",
    "opencode": ".opencode/skills",
    "qwen": ".qwen/skills",
    "gemini": ".gemini/skills",
    "copilot": ".github/skills",
}


def agent_of(names: set[str]) -> str | None:
    """Which real agent offers these tools."""
    if "Skill" in names and "Bash" in names:
        return "claude-code"
    if "skill" in names and "run_shell_command" in names:
        return "qwen"
    if "skill" in names and "bash" in names and "view" in names:
        return "copilot"
    if "skill" in names and "bash" in names:
        return "opencode"
    if names & {"exec_command", "shell", "shell_command"}:
        return "codex"
    if "activate_skill" in names and "read_file" in names:
        return "gemini"
    return None


def _load(agent: str, names: set[str], how: str, skill: str) -> tuple[str, dict[str, Any]]:
    path = f"{SKILL_DIRS[agent]}/{skill}/SKILL.md"
    if agent == "codex":
        return _shell(names, f"cat {path}")
    if agent == "gemini":
        if how == "skill":
            return "activate_skill", {"name": skill}
        return "read_file", {"file_path": f"/app/{path}"}
    if how == "skill":
        arg = {"name": skill} if agent == "opencode" else {"skill": skill}
        return ("Skill" if agent == "claude-code" else "skill"), arg
    if agent == "copilot":
        return "view", {"path": f"/app/{path}"}
    if agent == "claude-code":
        return "Read", {"file_path": f"/app/{path}"}
    if agent == "qwen":
        return "read_file", {"file_path": f"/app/{path}"}
    return "read", {"filePath": f"/app/{path}"}


def trigger_model(
    plan: dict[str, TriggerAction], fallback: Any = None, *, after_load: float = 0.0
) -> Any:
    """A model answering trigger queries as ``plan`` (query text -> action) says: the
    query is found in the conversation; after the load's tool result it says it is done,
    ``after_load`` seconds later (a model still working: an agent stopped at the load
    never gets that answer). A conversation with no planned query goes to ``fallback``."""

    def answer(body: dict[str, Any]) -> str | ToolCalls:
        names = tool_names(body)
        text = json.dumps(body.get("messages") or [])
        query = next((q for q in plan if json.dumps(q)[1:-1] in text), None)
        if query is None and fallback is not None:
            return fallback(body)  # type: ignore[no-any-return]
        if not names:  # a side call (a title, a summary): plain text
            return "Trigger query"
        agent = agent_of(names)
        if query is None or agent is None:
            return "No plan for this conversation."
        how, arg = plan[query]
        if how == "say":
            return arg
        if tool_results(body) > 0:
            time.sleep(after_load)
            return "Loaded the skill; ready to help."
        return [_load(agent, names, how, arg)]

    return answer


__all__ = [
    "CHECK",
    "DONE",
    "ENV",
    "FIX",
    "SKILL",
    "SKILL_DIRS",
    "TriggerAction",
    "agent_of",
    "solve_cfg_log_level",
    "tool_names",
    "trigger_model",
]
