"""What a simulated model has seen: the messages, parsed back into steps.

The agent sends the whole conversation on every call. The simulator is stateless: it
rebuilds its situation from these messages alone (system prompt, task instruction, its own
earlier tool calls and their results), exactly what a real model would have.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

_SKILL_RE = re.compile(r"<skill\b[^>]*>\n?(.*?)</skill>", re.DOTALL)
_EXIT_RE = re.compile(r"^exit_code: (-?\d+)", re.MULTILINE)


@dataclass(frozen=True)
class Step:
    """One earlier tool call of the model and what came back."""

    tool: str
    args: dict[str, Any]
    result: str

    @property
    def exit_code(self) -> int | None:
        m = _EXIT_RE.search(self.result)
        return int(m.group(1)) if m else None

    @property
    def ok(self) -> bool:
        return not self.result.startswith("error:") and self.exit_code in (None, 0)


@dataclass
class Transcript:
    system: str
    instruction: str
    steps: list[Step] = field(default_factory=list)
    tool_names: frozenset[str] = frozenset()

    @property
    def bootstrap_skill(self) -> str:
        """The skill text the harness put in the system prompt ('' when none)."""
        return "\n".join(m.group(1) for m in _SKILL_RE.finditer(self.system))


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # OpenAI content parts
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


def read_transcript(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
) -> Transcript:
    system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") == "system")
    users = [_text(m.get("content")) for m in messages if m.get("role") == "user"]
    results = {
        m.get("tool_call_id"): _text(m.get("content")) for m in messages if m.get("role") == "tool"
    }
    steps: list[Step] = []
    for m in messages:
        if m.get("role") != "assistant":
            continue
        for tc in m.get("tool_calls") or []:
            fn = tc.get("function", {}) if isinstance(tc, dict) else {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except json.JSONDecodeError:
                args = {}
            steps.append(
                Step(
                    str(fn.get("name", "")),
                    args if isinstance(args, dict) else {},
                    results.get(tc.get("id"), ""),
                )
            )
    names = frozenset(
        str(t.get("function", {}).get("name")) for t in tools or [] if isinstance(t, dict)
    )
    return Transcript(system, users[0] if users else "", steps, names)


__all__ = ["Step", "Transcript", "read_transcript"]
