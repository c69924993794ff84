"""The built-in agent's tools: schemas (versioned and hashed) and execution.

Result text conventions (what the model reads): ``run`` answers ``exit_code: N`` on the
first line and then the combined output; file tools answer the content or ``ok: ...``;
any tool error is ``error: ...``. Long outputs are cut, keeping head and tail, and marked.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from skillci.agents.base import Shell
from skillci.agents.workspace import Files, ToolError
from skillci.skill.render import RenderedSkill

TOOL_SCHEMA_VERSION = "skillci-tools-1"
MAX_OUTPUT_CHARS = 12000
MAX_READ_CHARS = 20000


def _fn(name: str, description: str, props: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": props, "required": required},
        },
    }


_S = {"type": "string"}
TOOL_SCHEMAS: list[dict[str, Any]] = [
    _fn("read_file", "Read a text file of the workspace.", {"path": _S}, ["path"]),
    _fn("list_files", "List files under a workspace directory, recursively.", {"path": _S}, []),
    _fn(
        "search_code",
        "Find lines containing a fixed string; answers path:line: text.",
        {"pattern": _S, "path": _S},
        ["pattern"],
    ),
    _fn(
        "run",
        "Run a shell command in the workspace (no network). Answers exit_code and output.",
        {"command": _S, "timeout_sec": {"type": "number"}},
        ["command"],
    ),
    _fn(
        "write_file",
        "Create or overwrite a workspace file.",
        {"path": _S, "content": _S},
        ["path", "content"],
    ),
    _fn(
        "apply_patch",
        "Replace the single occurrence of `old` with `new` in a file.",
        {"path": _S, "old": _S, "new": _S},
        ["path", "old", "new"],
    ),
    _fn(
        "load_skill_file",
        "Load a file of your skill (see the skill's on-demand index).",
        {"path": _S},
        ["path"],
    ),
]


def schema_hash(schemas: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(schemas, sort_keys=True).encode()).hexdigest()


def clip(text: str, limit: int = MAX_OUTPUT_CHARS) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    head, tail = limit // 5, limit - limit // 5
    cut = len(text) - head - tail
    return f"{text[:head]}\n[... {cut} characters cut ...]\n{text[-tail:]}", True


@dataclass
class ToolOutcome:
    text: str
    exit_code: int | None = None
    error: str | None = None
    truncated: bool = False
    skill_path: str | None = None
    skill_tokens: int | None = None
    skill_hash: str | None = None


def _with_network(schema: dict[str, Any]) -> dict[str, Any]:
    fn = schema["function"]
    if fn["name"] != "run":
        return schema
    text = fn["description"].replace("(no network)", "(with network: the task allows it)")
    return {**schema, "function": {**fn, "description": text}}


class Toolbox:
    """Executes tool calls against one workspace, shell and rendered skill."""

    def __init__(
        self,
        workspace: Files,
        shell: Shell,
        skill: RenderedSkill | None,
        *,
        tool_timeout: float,
        network: bool = False,
    ) -> None:
        self.ws = workspace
        self.shell = shell
        self.skill = skill
        self.tool_timeout = tool_timeout
        self.network = network

    @property
    def schemas(self) -> list[dict[str, Any]]:
        out = TOOL_SCHEMAS
        if self.skill is None:
            out = [s for s in out if s["function"]["name"] != "load_skill_file"]
        if self.network:  # the task's allow_internet opened it: say so, not "(no network)"
            out = [_with_network(s) for s in out]
        return out

    def execute(self, name: str, args: dict[str, Any], *, time_left: float) -> ToolOutcome:
        try:
            return self._dispatch(name, args, time_left)
        except ToolError as exc:
            return ToolOutcome(f"error: {exc}", error=str(exc))
        except (TypeError, KeyError) as exc:
            return ToolOutcome(
                f"error: bad arguments for {name}: {exc}", error=f"bad arguments: {exc}"
            )

    def _dispatch(self, name: str, a: dict[str, Any], time_left: float) -> ToolOutcome:
        if name == "read_file":
            text, cut = clip(self.ws.read(str(a["path"])), MAX_READ_CHARS)
            return ToolOutcome(text, truncated=cut)
        if name == "list_files":
            return ToolOutcome("\n".join(self.ws.files(str(a.get("path") or "."))))
        if name == "search_code":
            hits = self.ws.search(str(a["pattern"]), str(a.get("path") or "."))
            return ToolOutcome("\n".join(hits) if hits else "(no matches)")
        if name == "write_file":
            n = self.ws.write(str(a["path"]), str(a["content"]))
            return ToolOutcome(f"ok: wrote {n} bytes to {a['path']}")
        if name == "apply_patch":
            line = self.ws.replace(str(a["path"]), str(a["old"]), str(a["new"]))
            return ToolOutcome(f"ok: patched {a['path']} at line {line}")
        if name == "run":
            return self._run(str(a["command"]), a.get("timeout_sec"), time_left)
        if name == "load_skill_file":
            return self._load(str(a["path"]))
        raise ToolError(f"unknown tool {name!r}")

    def _run(self, command: str, timeout: Any, time_left: float) -> ToolOutcome:
        limit = self.tool_timeout
        if isinstance(timeout, int | float) and timeout > 0:
            limit = min(limit, float(timeout))
        limit = max(0.1, min(limit, time_left))
        res = self.shell.run(command, timeout=limit)
        body, cut = clip(res.output)
        note = f"[timed out after {limit:g}s]\n" if res.timed_out else ""
        return ToolOutcome(
            f"exit_code: {res.exit_code}\n{note}{body}",
            exit_code=res.exit_code,
            error="timeout" if res.timed_out else None,
            truncated=cut,
        )

    def _load(self, path: str) -> ToolOutcome:
        if self.skill is None:
            raise ToolError("no skill is installed")
        f = self.skill.file(path.strip().lstrip("./"))
        if f is None or f.kind == "index":
            names = ", ".join(x.path for x in self.skill.files if x.kind == "on_demand")
            raise ToolError(
                f"{path}: not a file of skill {self.skill.name} (on-demand files: {names})"
            )
        text = f.content.decode("utf-8", errors="replace")
        return ToolOutcome(
            text,
            skill_path=f.path,
            skill_tokens=f.tokens,
            skill_hash=hashlib.sha256(f.content).hexdigest(),
        )


__all__ = ["TOOL_SCHEMAS", "TOOL_SCHEMA_VERSION", "ToolOutcome", "Toolbox", "clip", "schema_hash"]
