"""The agent registry: every kind of student by name (``--agent NAME``).

One :class:`AgentEntry` per agent: skillci's own (``builtin``, ``oracle``, ``noop``) and
the real agents run through their headless CLI (``claude-code``, ``codex``, ``copilot``,
``opencode``, ``qwen``, ``gemini``) or their Agent Client Protocol server (``opencode-acp``,
``gemini-acp``: the same install as ``opencode``, ``gemini``; ``claude-code-acp``,
``codex-acp``: Zed's adapter packages).
Outside packages add agents through the entry-point group ``skillci.agents``: the entry
point's name is the agent's name and its value a
:class:`~skillci.agents.headless.HeadlessAdapter` subclass (``pkg.module:Class``). CLI
choices, ``skillci agents ls`` and the runner all read this one table (the model for the
runner and forge registries: name -> adapter, loaded lazily).
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import TYPE_CHECKING

from skillci.errors import UsageError

if TYPE_CHECKING:
    from skillci.agents.headless import HeadlessAdapter

ENTRY_POINT_GROUP = "skillci.agents"


@dataclass(frozen=True)
class AgentEntry:
    """One registered agent."""

    name: str
    summary: str
    target: str
    """``module:attr`` of its class, imported only when the agent is used."""
    real: bool
    """A real agent (an installed CLI driven through a :class:`HeadlessAdapter`)."""

    def load(self) -> type:
        module, _, attr = self.target.partition(":")
        cls: type = getattr(importlib.import_module(module), attr)
        return cls


BUILTIN = (
    AgentEntry(
        "builtin",
        "skillci's tool-calling loop on the model route",
        "skillci.agents.loop:BuiltinAgent",
        False,
    ),
    AgentEntry(
        "oracle",
        "the task's solution/solve.sh (no model)",
        "skillci.agents.oracle:OracleAgent",
        False,
    ),
    AgentEntry(
        "noop", "changes nothing (overhead baseline)", "skillci.agents.oracle:NoopAgent", False
    ),
    AgentEntry(
        "claude-code",
        "Claude Code, claude -p (Anthropic Messages via the gateway)",
        "skillci.agents.real.claude_code:ClaudeCode",
        True,
    ),
    AgentEntry(
        "codex",
        "Codex CLI, codex exec --json (OpenAI Responses via the gateway)",
        "skillci.agents.real.codex:Codex",
        True,
    ),
    AgentEntry(
        "copilot",
        "GitHub Copilot CLI, copilot -p --output-format json (chat completions via the gateway)",
        "skillci.agents.real.copilot:Copilot",
        True,
    ),
    AgentEntry(
        "copilot-acp",
        "GitHub Copilot CLI over ACP, copilot --acp (chat completions via the gateway)",
        "skillci.agents.real.copilot:CopilotAcp",
        True,
    ),
    AgentEntry(
        "opencode",
        "OpenCode, opencode run (chat completions via the gateway)",
        "skillci.agents.real.opencode:OpenCode",
        True,
    ),
    AgentEntry(
        "opencode-acp",
        "OpenCode over ACP, opencode acp (chat completions via the gateway)",
        "skillci.agents.real.opencode:OpenCodeAcp",
        True,
    ),
    AgentEntry(
        "claude-code-acp",
        "Claude Code over ACP, Zed's claude-agent-acp (Anthropic Messages via the gateway)",
        "skillci.agents.real.claude_code:ClaudeCodeAcp",
        True,
    ),
    AgentEntry(
        "codex-acp",
        "Codex over ACP, Zed's codex-acp (OpenAI Responses via the gateway)",
        "skillci.agents.real.codex:CodexAcp",
        True,
    ),
    AgentEntry(
        "qwen",
        "Qwen Code, qwen -o stream-json (chat completions via the gateway)",
        "skillci.agents.real.qwen_code:QwenCode",
        True,
    ),
    AgentEntry(
        "gemini",
        "Gemini CLI, gemini -p --output-format stream-json (Gemini API via the gateway)",
        "skillci.agents.real.gemini_cli:GeminiCli",
        True,
    ),
    AgentEntry(
        "gemini-acp",
        "Gemini CLI over ACP, gemini --acp (Gemini API via the gateway)",
        "skillci.agents.real.gemini_cli:GeminiCliAcp",
        True,
    ),
)


@functools.lru_cache(maxsize=1)
def registry() -> dict[str, AgentEntry]:
    """Every agent by name: the built-in table, then the ``skillci.agents`` entry points
    (an entry point cannot replace a built-in name)."""
    out = {e.name: e for e in BUILTIN}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in out:
            out[ep.name] = AgentEntry(ep.name, f"plug-in ({ep.value})", ep.value, True)
    return out


def names() -> list[str]:
    return list(registry())


def real_names() -> list[str]:
    """The real agents' names, sorted (help texts and ``agents ls`` list them this way)."""
    return sorted(n for n, e in registry().items() if e.real)


def adapter(name: str) -> HeadlessAdapter:
    """The adapter of real agent ``name``."""
    from skillci.agents.headless import HeadlessAdapter

    entry = registry().get(name)
    if entry is None or not entry.real:
        raise UsageError(
            f"unknown real agent {name!r}",
            hint=f"use one of: {', '.join(real_names())} (skillci agents ls)",
        )
    cls = entry.load()
    if not (isinstance(cls, type) and issubclass(cls, HeadlessAdapter)):
        raise UsageError(
            f"agent {name!r} ({entry.target}) is not a HeadlessAdapter subclass",
            hint="fix the skillci.agents entry point of the package that provides it",
        )
    return cls()


__all__ = [
    "BUILTIN",
    "ENTRY_POINT_GROUP",
    "AgentEntry",
    "adapter",
    "names",
    "real_names",
    "registry",
]
