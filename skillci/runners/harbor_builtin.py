"""skillci's built-in agent as the student on Harbor's environments (design 426).

Harbor runs :class:`~skillci.runners.harbor_env.builtin_agent.SkillciBuiltinAgent` (by
``--agent-import-path``; a directory holding only a ``skillci`` link is put on Harbor's
``PYTHONPATH``, as for the bwrap environment). That class is a thin shim: it connects back
to the :class:`AgentBridge` this process opened for the attempt (loopback, a one-time token)
and executes the commands it is sent with ``environment.exec`` in the trial's container.

The loop is skillci's own :class:`~skillci.agents.loop.BuiltinAgent`, made by the same
:func:`~skillci.runners.local.make_agent` as a local trial (the same model client, routes,
response cache, budgets, ``sim/*`` models), run here in a thread: model calls never leave
this process, and no key enters the container. Its ``run`` tool is :class:`BridgeShell`; its
file tools are :class:`~skillci.agents.shellfiles.ShellFiles` over the same shell. When the
loop ends, its events go back to the shim as ``agent/skillci-run.json``
(:class:`~skillci.trace.importers.harbor.SkillciRun`), which Harbor's importer reads: the
record has the events a local trial of the same agent records.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import math
import secrets
import shlex
import socket
import threading
import time
from pathlib import Path
from typing import IO, Any

from skillci.agents.base import AgentContext, AgentResult, CommandResult
from skillci.agents.shellfiles import ShellFiles
from skillci.agents.version import HARNESS_VERSION
from skillci.errors import RunnerError
from skillci.runners.base import TrialSpec
from skillci.trace.importers.harbor import SKILLCI_RUN, SkillciRun

IMPORT_PATH = "skillci.runners.harbor_env.builtin_agent:SkillciBuiltinAgent"
#: Seconds the loop stops before the task's agent timeout, so its record reaches Harbor
#: before Harbor cancels the agent.
DEADLINE_MARGIN = 10.0
#: Seconds a command's reply may take beyond its own timeout (``timeout -k`` and Harbor).
EXEC_SLACK = 30


class BridgeShell:
    """A :class:`~skillci.agents.base.Shell` whose commands run in the Harbor trial's
    container: sent to the shim, which runs them with ``environment.exec`` (cwd ``cwd``),
    stdout and stderr combined, under coreutils' ``timeout`` (exit 124: timed out)."""

    kind = "harbor"

    def __init__(self, rfile: IO[bytes], wfile: IO[bytes], cwd: str) -> None:
        self._r, self._w, self.cwd = rfile, wfile, cwd
        self._lock = threading.Lock()

    def request(self, msg: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self._w.write(json.dumps(msg).encode() + b"\n")
            self._w.flush()
            line = self._r.readline()
        if not line:
            raise RunnerError(
                "Harbor's agent closed the bridge", hint="read the attempt's harbor.log"
            )
        reply = json.loads(line)
        if not isinstance(reply, dict):
            raise RunnerError("Harbor's agent sent no JSON object", hint="read harbor.log")
        return reply

    def run(self, command: str, *, timeout: float) -> CommandResult:
        limit = max(1, math.ceil(timeout))
        wrapped = f"timeout -k 5 {limit} bash -c {shlex.quote(command)} 2>&1"
        start = time.monotonic()
        reply = self.request(
            {"op": "exec", "command": wrapped, "cwd": self.cwd, "timeout": limit + EXEC_SLACK}
        )
        if "error" in reply:  # the environment failed, not the command: no verdict
            raise RunnerError(f"Harbor's environment failed a command: {reply['error']}")
        code = int(reply.get("return_code", 1))
        return CommandResult(
            exit_code=code,
            output=str(reply.get("stdout") or "") + str(reply.get("stderr") or ""),
            timed_out=code == 124,
            duration_sec=round(time.monotonic() - start, 4),
        )


class AgentBridge:
    """One attempt's loopback server: accepts the shim's connection, runs the built-in loop
    over it (in its own thread), and hands the record back. :meth:`close` after ``harbor
    run`` ends: a Harbor that never started the agent leaves :attr:`result` None."""

    def __init__(self, spec: TrialSpec) -> None:
        self.spec = spec
        self.token = secrets.token_hex(16)
        self.result: AgentResult | None = None
        self._srv = socket.create_server(("127.0.0.1", 0))
        self._srv.settimeout(0.5)  # accept wakes to see close(): closing alone does not wake it
        self._closed = threading.Event()
        host, port = self._srv.getsockname()[:2]
        #: ``127.0.0.1:PORT``, where the shim connects
        self.address = f"{host}:{port}"
        self._thread = threading.Thread(target=self._serve, name="harbor-agent", daemon=True)
        self._thread.start()

    def agent_kwargs(self, skills: Path | None) -> dict[str, str]:
        """The shim's ``--ak`` kwargs (no secret but the one-time token)."""
        out = {"bridge": self.address, "token": self.token, "version": HARNESS_VERSION}
        if skills is not None:
            out["skills"] = str(skills)
        return out

    def close(self) -> None:
        """Stop waiting for the agent (it never connected) and wait for a loop that runs."""
        self._closed.set()
        self._thread.join()
        self._srv.close()

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            with conn, conn.makefile("rb") as rfile, conn.makefile("wb") as wfile:
                hello = json.loads(rfile.readline() or b"{}")
                if not isinstance(hello, dict) or not hmac.compare_digest(
                    str(hello.get("token")), self.token
                ):
                    continue  # not our agent: wait for the one that knows the token
                shell = BridgeShell(rfile, wfile, str(hello.get("cwd") or "/"))
                self.result = self._run(shell)
                with contextlib.suppress(RunnerError, OSError, ValueError):  # Harbor gave up
                    done = {SKILLCI_RUN.name: self._saved(self.result)}
                    shell.request({"op": "done", "files": done, "context": _usage(self.result)})
            return

    def _run(self, shell: BridgeShell) -> AgentResult:
        from skillci.runners.local import make_agent

        spec, task = self.spec, self.spec.task
        ctx = AgentContext(
            task_id=task.id,
            instruction=task.instruction,
            workspace=Path(shell.cwd),  # not on this host: the file tools use ``files``
            shell=shell,
            skill=spec.skill,
            seed=spec.seed,
            deadline=time.monotonic() + max(1.0, task.agent_timeout_sec - DEADLINE_MARGIN),
            network=task.config.environment.allow_internet,
            workdir=shell.cwd,
            agent_cwd=shell.cwd,
            files=ShellFiles(shell, shell.cwd),
        )
        try:
            return make_agent(spec).run(ctx)
        except Exception as exc:  # an agent bug or a lost bridge: this trial's infra error
            why = f"{type(exc).__name__}: {exc}"
            return AgentResult(
                stop_reason="agent_crash", warnings=[why], infra_error=f"agent crashed: {why}"
            )

    @staticmethod
    def _saved(res: AgentResult) -> str:
        return SkillciRun(
            events=res.events,
            final_output=res.final_output,
            stop_reason=res.stop_reason,
            system_prompt_hash=res.system_prompt_hash,
            tool_schema_version=res.tool_schema_version,
            tool_schema_hash=res.tool_schema_hash,
            infra_error=res.infra_error,
        ).model_dump_json()


def _usage(res: AgentResult) -> dict[str, Any]:
    """What Harbor's ``AgentContext`` (and so its TrialResult) says the run cost."""
    c = res.cost
    return {"n_input_tokens": c.input_tokens, "n_output_tokens": c.output_tokens,
            "cost_usd": c.usd}  # fmt: skip


__all__ = ["IMPORT_PATH", "AgentBridge", "BridgeShell"]
