"""A tiny in-memory environment that answers the sim's tool calls in unit tests.

It stands where the agent loop and the sandbox stand in a real trial, so the tests talk to
the simulated model exactly as litellm would: messages in, one response out.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from skillci.agents.tools import TOOL_SCHEMAS
from skillci.providers.sim.provider import respond

Runner = Callable[[str, dict[str, str]], tuple[int, str]]


def system_with(skill_text: str | None) -> str:
    head = "You are a software agent working on one task in a repository at /app."
    return (
        head
        if skill_text is None
        else f'{head}\n<skill name="t" version="0.1.0">\n{skill_text}\n</skill>\n'
    )


@dataclass
class World:
    files: dict[str, str]
    run: Runner
    skill_files: dict[str, str] = field(default_factory=dict)
    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def answer(self, tool: str, args: dict[str, Any]) -> str:
        self.calls.append((tool, args))
        if tool == "read_file":
            return self.files.get(args["path"], f"error: {args['path']}: no such file")
        if tool == "list_files":
            return "\n".join(sorted(self.files))
        if tool == "search_code":
            hits = [
                f"{p}:{i}: {ln.strip()}"
                for p, t in sorted(self.files.items())
                for i, ln in enumerate(t.splitlines(), 1)
                if args["pattern"] in ln
            ]
            return "\n".join(hits) or "(no matches)"
        if tool == "apply_patch":
            text = self.files.get(args["path"], "")
            if text.count(args["old"]) != 1:
                return "error: old text must match exactly once"
            self.files[args["path"]] = text.replace(args["old"], args["new"])
            return f"ok: patched {args['path']}"
        if tool == "write_file":
            self.files[args["path"]] = args["content"]
            return "ok"
        if tool == "load_skill_file":
            return self.skill_files.get(args["path"], "error: no such skill file")
        if tool == "run":
            code, out = self.run(args["command"], self.files)
            return f"exit_code: {code}\n{out}"
        return f"error: unknown tool {tool}"

    def play(
        self,
        instruction: str,
        skill_text: str | None = None,
        *,
        role: str = "student",
        seed: int = 0,
        max_steps: int = 60,
        extra: dict[str, Any] | None = None,
    ) -> str:
        """Drive the sim to its final answer; returns it."""
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system_with(skill_text)},
            {"role": "user", "content": instruction},
        ]
        params = {"tools": TOOL_SCHEMAS, "seed": seed, "extra_body": extra or {}}
        for _ in range(max_steps):
            msg = respond(f"sim/{role}", messages, params)["choices"][0]["message"]
            if not msg.get("tool_calls"):
                return str(msg["content"])
            messages.append(msg)
            for tc in msg["tool_calls"]:
                out = self.answer(tc["function"]["name"], json.loads(tc["function"]["arguments"]))
                messages.append({"role": "tool", "tool_call_id": tc["id"], "content": out})
        return "<max steps>"

    def tools(self) -> list[str]:
        return [t for t, _ in self.calls]

    def commands(self) -> list[str]:
        return [a["command"] for t, a in self.calls if t == "run"]
