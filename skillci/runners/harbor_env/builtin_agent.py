"""skillci's built-in agent as a Harbor agent: the loop stays in skillci, the commands run here.

    harbor run -p TASK --agent-import-path skillci.runners.harbor_env.builtin_agent:SkillciBuiltinAgent
        -m ROUTE --ak bridge=127.0.0.1:PORT --ak token=T [--ak skills=DIR] [--ak version=V] ...

This module is loaded by *Harbor's* interpreter (its own venv), so it imports nothing from
skillci: only Harbor and the standard library. It is a Harbor *external* agent (like
Terminus): it runs in Harbor's process on this host and reaches the trial's container only
through ``environment.exec`` and ``upload_dir``. The agent loop itself — model calls, tools,
the trajectory — runs in the skillci process that started ``harbor run``
(:mod:`skillci.runners.harbor_builtin`), which listens on ``bridge`` (loopback) and speaks
newline-delimited JSON:

    agent -> skillci   {"token": T, "cwd": "<pwd of the container>", "logs_dir": "<host path>"}
    skillci -> agent   {"op": "exec", "command": C, "cwd": D, "timeout": S}
    agent -> skillci   {"stdout": ..., "stderr": ..., "return_code": N} | {"error": "..."}
    skillci -> agent   {"op": "done", "files": {NAME: TEXT}, "context": {n_input_tokens, ...}}
    agent -> skillci   {"ok": true}

So no model key and no route ever enters the container, and skillci's model client (its
routes, response cache, budgets, ``sim/*`` models) is the one a local trial uses. ``setup``
uploads each skill dir under ``skills`` to ``/skills/<name>``, where a local trial mounts it.
``done``'s files (the trajectory) are written to the agent's logs dir, where Harbor's
importer reads them back.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from harbor.agents.base import BaseAgent  # type: ignore[import-not-found]
from harbor.agents.capabilities import AgentCapabilities  # type: ignore[import-not-found]

NAME = "skillci-builtin"
#: Where a skill is installed in the container (as the local runner mounts it).
SKILLS_ROOT = "/skills"
#: Longest JSON line either side sends (a write_file chunk, a long command output).
LINE_LIMIT = 64 * 1024 * 1024
#: Files ``done`` may write into the logs dir.
FILES = frozenset({"trajectory.json", "skillci-run.json"})


class SkillciBuiltinAgent(BaseAgent):  # type: ignore[misc]
    """The Harbor side of skillci's built-in agent (see the module docstring)."""

    capabilities = AgentCapabilities()

    def __init__(
        self,
        logs_dir: Path,
        model_name: str | None = None,
        *args: Any,
        bridge: str = "",
        token: str = "",
        skills: str | None = None,
        version: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(logs_dir, model_name, *args, **kwargs)
        host, _, port = bridge.rpartition(":")
        if not host or not port.isdigit() or not token:
            raise ValueError(
                "skillci-builtin needs --ak bridge=HOST:PORT and --ak token=T "
                "(skillci passes them when it runs this agent)"
            )
        self._host, self._port, self._token = host, int(port), token
        self._skills = Path(skills) if skills else None
        self._version = version

    @staticmethod
    def name() -> str:
        return NAME

    def version(self) -> str | None:
        return self._version

    async def setup(self, environment: Any) -> None:
        if self._skills is None or not self._skills.is_dir():
            return
        dirs = sorted(d for d in self._skills.iterdir() if d.is_dir())
        for d in dirs:
            await environment.upload_dir(source_dir=d, target_dir=f"{SKILLS_ROOT}/{d.name}")
        if dirs:
            await environment.exec(f"chmod -R a+rX {SKILLS_ROOT}", user="root")

    async def run(self, instruction: str, environment: Any, context: Any) -> None:
        reader, writer = await asyncio.open_connection(self._host, self._port, limit=LINE_LIMIT)
        try:
            pwd = await environment.exec("pwd")
            hello = {"token": self._token, "cwd": (pwd.stdout or "").strip() or "/",
                     "logs_dir": str(self.logs_dir)}  # fmt: skip
            await _send(writer, hello)
            while True:
                line = await reader.readline()
                if not line:
                    raise RuntimeError("skillci's agent loop closed the connection")
                msg = json.loads(line)
                if msg.get("op") == "exec":
                    await _send(writer, await _exec(environment, msg))
                elif msg.get("op") == "done":
                    self._finish(msg, context)
                    await _send(writer, {"ok": True})
                    return
                else:
                    raise RuntimeError(f"unknown message from skillci: {msg.get('op')!r}")
        finally:
            writer.close()

    def _finish(self, msg: dict[str, Any], context: Any) -> None:
        self.logs_dir.mkdir(parents=True, exist_ok=True)
        for name, text in (msg.get("files") or {}).items():
            if name in FILES:
                (self.logs_dir / name).write_text(str(text), encoding="utf-8")
        for key, value in (msg.get("context") or {}).items():
            if key in ("n_input_tokens", "n_output_tokens", "cost_usd") and value is not None:
                setattr(context, key, value)


async def _exec(environment: Any, msg: dict[str, Any]) -> dict[str, Any]:
    try:
        res = await environment.exec(
            str(msg["command"]), cwd=msg.get("cwd"), timeout_sec=msg.get("timeout")
        )
    except Exception as exc:  # the environment failed: skillci reports it to the model
        return {"error": f"{type(exc).__name__}: {exc}"}
    return {"stdout": res.stdout or "", "stderr": res.stderr or "", "return_code": res.return_code}


async def _send(writer: asyncio.StreamWriter, msg: dict[str, Any]) -> None:
    writer.write(json.dumps(msg).encode() + b"\n")
    await writer.drain()


__all__ = ["NAME", "SKILLS_ROOT", "SkillciBuiltinAgent"]
