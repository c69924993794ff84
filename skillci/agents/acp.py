"""A real agent driven over the Agent Client Protocol (ACP) instead of its headless CLI.

The agent's ACP server (e.g. ``opencode acp``) is started exactly like a headless agent —
:meth:`HeadlessAgent._start <skillci.agents.headless.HeadlessAgent>`: the trial's sandbox,
a fresh HOME with the agent's configuration pointing at the trial's loopback gateway, the
skill installed where the agent discovers it — but with pipes for stdin and stdout, over
which :class:`~skillci.agents.acp_client.AcpConnection` speaks JSON-RPC:

1. ``initialize`` (protocol version 1; the client offers neither file system nor terminal:
   the agent uses its own tools inside the sandbox);
2. ``session/new`` with ``cwd`` = the workspace as the agent sees it, no MCP servers;
3. ``session/prompt`` with the task's instruction, answered when the agent's turn ends
   (its ``stopReason``);
4. at the time limit, or once the skill loaded when that is all a trigger eval asks, a
   ``session/cancel`` and a short grace for the agent to end its turn (what it reports
   then is kept), then the agent's process group is killed;
5. meanwhile every ``session/request_permission`` is allowed (the sandbox is the
   boundary), and ``session/update`` notifications become the run record's events
   (:class:`Trajectory`): agent message chunks joined into messages, each tool call with
   its arguments (``rawInput``) and its result, plans; a tool call that loads the skill
   under test is followed by a :class:`~skillci.trace.models.SkillLoadEvent`.

A deadline, a crash, a protocol error (a line that is not JSON-RPC, an error answer to one
of our calls) or an unreachable model is an infrastructure error of the trial, never the
skill's failure (the same judgement as the headless agents', :meth:`HeadlessAgent._judge`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from typing import Any, ClassVar

from skillci import __version__
from skillci.agents.acp_client import METHOD_NOT_FOUND, AcpConnection, Pending, RpcError
from skillci.agents.base import AgentContext, EventLog
from skillci.agents.headless import (
    SKILL_LOADED,
    HeadlessAdapter,
    HeadlessAgent,
    Started,
    add_skill_load,
    obj,
    skill_hits,
)
from skillci.providers.client import ModelClient
from skillci.providers.gateway import Gateway
from skillci.skill.render import RenderedSkill
from skillci.trace.models import MessageEvent, ToolCallEvent, ToolResultEvent

#: The ACP version this client speaks.
PROTOCOL_VERSION = 1
#: Seconds an agent whose output ended gets to exit (its exit code is then the record's).
EXIT_GRACE_SEC = 2.0
#: Seconds a cancelled prompt gets to end its turn (its last tool results and the
#: ``cancelled`` stop reason arrive in that time) before the agent is killed.
CANCEL_GRACE_SEC = 1.0
#: Why the session ended when the agent exited before answering a call of ours.
EXITED = "exited"
#: Tool call statuses after which its result is known.
TERMINAL = ("completed", "failed")
#: ``rawOutput`` fields that are a tool's output (OpenCode's; Codex's exec end event).
OUTPUT_KEYS = ("output", "aggregated_output")


class AcpAdapter(HeadlessAdapter):
    """A real agent whose ACP server skillci drives (:class:`AcpAgent`)."""

    interface: ClassVar[str] = "acp"

    def agent(self, client: ModelClient, **kw: Any) -> HeadlessAgent:
        return AcpAgent(self, client, **kw)

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        """The line that starts its ACP server (the prompt goes in ``session/prompt``); by
        default the executable alone (an adapter package whose binary is the server)."""
        return [exe]

    def tool_name(self, call: dict[str, Any]) -> str:
        """The agent's own name of a tool call (``call``: the merged ``tool_call`` and
        ``tool_call_update`` fields); ACP has none, so by default its first title."""
        return str(call.get("first_title") or call.get("kind") or "tool")

    def tool_arguments(self, call: dict[str, Any]) -> dict[str, Any]:
        """A tool call's arguments (``call`` as for :meth:`tool_name`): its ``rawInput``."""
        raw = call.get("rawInput")
        return raw if isinstance(raw, dict) else {"input": raw} if raw is not None else {}


@dataclass
class _Call:
    fields: dict[str, Any] = field(default_factory=dict)
    first_title: str | None = None
    result_at: int | None = None


class Trajectory:
    """``session/update`` notifications in arrival order, turned into run-record events."""

    def __init__(self) -> None:
        self.slots: list[tuple[str, Any, float]] = []
        """("message", text) | ("call", id) | ("result", id) | ("plan", entries), each
        with the ``time.monotonic()`` it arrived at (a message: its first chunk)."""
        self.calls: dict[str, _Call] = {}
        self._chunks: list[str] = []
        self._chunks_at = 0.0

    def update(self, params: dict[str, Any]) -> None:
        u = obj(params.get("update"))
        kind = u.get("sessionUpdate")
        if kind == "agent_message_chunk":
            content = obj(u.get("content"))
            if content.get("type") == "text" and isinstance(content.get("text"), str):
                if not self._chunks:
                    self._chunks_at = time.monotonic()
                self._chunks.append(content["text"])
        elif kind in ("tool_call", "tool_call_update"):
            self._tool(u)
        elif kind == "plan":
            self._flush()
            self.slots.append(("plan", u.get("entries"), time.monotonic()))

    def _tool(self, u: dict[str, Any]) -> None:
        call_id = str(u.get("toolCallId"))
        call = self.calls.get(call_id)
        if call is None:
            self._flush()
            call = self.calls[call_id] = _Call()
            self.slots.append(("call", call_id, time.monotonic()))
        if call.first_title is None and isinstance(u.get("title"), str):
            call.first_title = u["title"]
        call.fields.update({k: v for k, v in u.items() if v not in (None, {}, [])})
        if call.result_at is None and call.fields.get("status") in TERMINAL:
            self._flush()
            call.result_at = len(self.slots)
            self.slots.append(("result", call_id, time.monotonic()))

    def _flush(self) -> None:
        if self._chunks:
            self.slots.append(("message", "".join(self._chunks), self._chunks_at))
            self._chunks = []

    def permission(self, params: dict[str, Any]) -> None:
        """A ``session/request_permission``: its ``toolCall`` is an update of that call
        (Gemini CLI announces a call needing permission only there)."""
        call = obj(params.get("toolCall"))
        if call.get("toolCallId") is not None:
            self._tool(call)

    def arguments(self, adapter: AcpAdapter, call_id: str) -> dict[str, Any]:
        c = self.calls[call_id]
        return adapter.tool_arguments({**c.fields, "first_title": c.first_title})

    def events(
        self,
        log: EventLog,
        adapter: AcpAdapter,
        skills: list[RenderedSkill],
        *,
        under_test: bool,
    ) -> str | None:
        """Append the events to ``log``, timed as they arrived; the agent's last message
        (its final output)."""
        self._flush()
        final: str | None = None
        for kind, value, at in self.slots:
            first = len(log.events)
            if kind == "message":
                log.add(MessageEvent, role="assistant", content=value)
                final = value
            elif kind == "plan":
                log.add(MessageEvent, role="assistant", content=_plan_text(value))
            elif kind == "call":
                self._call_event(log, adapter, value, skills, under_test=under_test)
            else:
                self._result_event(log, adapter, value)
            for ev in log.events[first:]:
                ev.t = round(max(0.0, at - log.start), 4)
        return final

    def _call_event(
        self,
        log: EventLog,
        adapter: AcpAdapter,
        call_id: str,
        skills: list[RenderedSkill],
        *,
        under_test: bool,
    ) -> None:
        tool, args = self.tool(adapter, call_id), self.arguments(adapter, call_id)
        log.add(ToolCallEvent, tool=tool, arguments=args, call_id=call_id)
        # loads of the skill under test are events; companions' stay tool calls
        for skill, path in skill_hits(tool, args, json.dumps(args), skills, adapter):
            if skill is skills[0] and under_test:
                add_skill_load(log, skill, path)

    def _result_event(self, log: EventLog, adapter: AcpAdapter, call_id: str) -> None:
        f = self.calls[call_id].fields
        failed = f.get("status") == "failed"
        output = _output(f)
        raw = obj(f.get("rawOutput"))
        exit_code = obj(raw.get("metadata")).get("exit", raw.get("exit_code"))
        log.add(
            ToolResultEvent,
            call_id=call_id,
            tool=self.tool(adapter, call_id),
            exit_code=exit_code if isinstance(exit_code, int) else None,
            output=output[:20_000],
            error=(output[:500] or "failed") if failed else None,
        )

    def tool(self, adapter: AcpAdapter, call_id: str) -> str:
        c = self.calls[call_id]
        return adapter.tool_name({**c.fields, "first_title": c.first_title})

    def loaded(self, adapter: AcpAdapter, skill: RenderedSkill) -> bool:
        """Whether a tool call so far loaded ``skill``."""
        for call_id in list(self.calls):
            args = self.arguments(adapter, call_id)
            if skill_hits(self.tool(adapter, call_id), args, json.dumps(args), [skill], adapter):
                return True
        return False


def _output(f: dict[str, Any]) -> str:
    raw = f.get("rawOutput")
    for key in OUTPUT_KEYS:  # OpenCode's output, Codex's exec end event
        if isinstance(obj(raw).get(key), str):
            return str(obj(raw)[key])
    if isinstance(raw, str):  # Claude Code's (its content is the same text, fenced)
        return raw
    texts = []
    for block in f.get("content") or []:
        inner = obj(obj(block).get("content"))
        if isinstance(inner.get("text"), str):
            texts.append(inner["text"])
    if texts:
        return "\n".join(texts)
    return json.dumps(raw) if raw is not None else ""


def _plan_text(entries: Any) -> str:
    lines = ["Plan:"]
    for e in entries if isinstance(entries, list) else []:
        e = obj(e)
        lines.append(f"- [{e.get('status', '?')}] {e.get('content', '')}")
    return "\n".join(lines)


class _Watch:
    """Says once the live trajectory loaded the skill under test (trigger evals)."""

    def __init__(self, trajectory: Trajectory, adapter: AcpAdapter, skill: RenderedSkill) -> None:
        self.trajectory, self.adapter, self.skill = trajectory, adapter, skill

    def loaded(self) -> bool:
        return self.trajectory.loaded(self.adapter, self.skill)


def serve(method: str, params: dict[str, Any], trajectory: Trajectory | None = None) -> Any:
    """Answer a request from the agent: allow every permission it asks for (the sandbox is
    the boundary; the tool call it names goes to ``trajectory``); nothing else is offered
    (no fs, no terminal)."""
    if method == "session/request_permission":
        if trajectory is not None:
            trajectory.permission(params)
        options = [obj(o) for o in params.get("options") or []]
        for kind in ("allow_once", "allow_always"):
            for o in options:
                if o.get("kind") == kind and o.get("optionId") is not None:
                    return {"outcome": {"outcome": "selected", "optionId": o["optionId"]}}
        return {"outcome": {"outcome": "cancelled"}}
    raise RpcError(METHOD_NOT_FOUND, f"skillci's ACP client does not offer {method}")


class AcpAgent(HeadlessAgent):
    """Runs an :class:`AcpAdapter`'s agent through one ACP session; see the module doc."""

    adapter: AcpAdapter
    pipes = True

    def _drive(self, run: Started) -> None:
        ctx, gateway, skills, res, log = run.ctx, run.gateway, run.skills, run.res, run.log
        proc, transcript, stderr = run.proc, run.stream, run.stderr
        assert proc.stdin is not None and proc.stdout is not None
        trajectory = Trajectory()
        conn = AcpConnection(
            proc.stdin,
            proc.stdout,
            transcript,
            serve=lambda m, p: serve(m, p, trajectory),
            notify=lambda m, p: trajectory.update(p) if m == "session/update" else None,
        ).start()
        watch = _Watch(trajectory, self.adapter, skills[0]) if self._watch(ctx) else None
        try:
            why, problem, stop = self._session(ctx, gateway, conn, watch)
        finally:
            code = _stop(proc, conn)
        waiting = gateway.waiting_sec()
        res.final_output = trajectory.events(
            log, self.adapter, skills, under_test=ctx.skill is not None
        )
        res.stop_reason = why or stop or "final_answer"
        if problem is not None and gateway.fatal is None:
            res.stop_reason = "agent_error"
            res.infra_error = f"{self.adapter.name}: {problem}"
            log.error("AgentError", res.infra_error)
            return
        failed = why is None and stop is None
        self._judge(
            res, log, gateway, why, waiting, failed=failed, said=None, err=stderr, code=code
        )

    def _session(
        self, ctx: AgentContext, gateway: Gateway, conn: AcpConnection, watch: _Watch | None
    ) -> tuple[str | None, str | None, str | None]:
        """Initialize, open a session and prompt it: (why it was stopped — timeout,
        agent_error, skill_loaded —, the protocol problem, the prompt's stop reason)."""
        caps = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
        steps: list[tuple[str, dict[str, Any]]] = [
            (
                "initialize",
                {
                    "protocolVersion": PROTOCOL_VERSION,
                    "clientCapabilities": caps,
                    "clientInfo": {"name": "skillci", "version": __version__},
                },
            ),
            ("session/new", {"cwd": ctx.agent_cwd, "mcpServers": []}),
            ("session/prompt", {"prompt": [{"type": "text", "text": ctx.instruction}]}),
        ]
        session: str | None = None
        result: dict[str, Any] = {}
        for method, params in steps:
            if session is not None:
                params = {"sessionId": session, **params}
            pending = conn.call(method, params)
            why, problem = self._await(pending, ctx, gateway, conn, watch)
            if why not in (None, EXITED) and session is not None:
                _cancel(conn, session, pending)
            if why == EXITED:
                return None, None, None
            if why is not None or problem is not None:
                return why, problem, None
            result = obj(pending.result)
            if method == "initialize" and result.get("protocolVersion") != PROTOCOL_VERSION:
                version = result.get("protocolVersion")
                return None, f"speaks ACP version {version!r}, not {PROTOCOL_VERSION}", None
            if method == "session/new":
                if not isinstance(result.get("sessionId"), str):
                    return None, "session/new answered without a sessionId", None
                session = result["sessionId"]
        stop = str(result.get("stopReason") or "end_turn")
        return None, None, "final_answer" if stop == "end_turn" else stop

    def _await(
        self,
        pending: Pending,
        ctx: AgentContext,
        gateway: Gateway,
        conn: AcpConnection,
        watch: _Watch | None,
    ) -> tuple[str | None, str | None]:
        """Wait for the answer to ``pending``: (why the agent is to be stopped, the
        protocol problem) — both None once it answered."""
        fatal_at: float | None = None
        while not pending.done.wait(0.2):
            why, fatal_at = self._stop_why(ctx, gateway, watch, fatal_at)
            if why is not None:
                return why, None
        if conn.broken is not None:
            return None, f"broke the ACP protocol: {conn.broken}"
        if pending.error is not None:
            err = pending.error
            said = str(err.get("message", ""))[:500]
            return None, f"answered {pending.method} with error {err.get('code')}: {said}"
        if not pending.answered:  # it exited mid-session: judged by its exit
            return (SKILL_LOADED if watch is not None and watch.loaded() else EXITED), None
        return None, None


def _cancel(conn: AcpConnection, session: str, pending: Pending) -> None:
    """Ask the agent to end its turn (``session/cancel``, a notification) and give it
    :data:`CANCEL_GRACE_SEC` to answer the prompt: what it reports meanwhile — the tool
    calls it interrupts, their last output — joins the record before it is killed."""
    conn.notify("session/cancel", {"sessionId": session})
    pending.done.wait(CANCEL_GRACE_SEC)


def _stop(proc: subprocess.Popen[bytes], conn: AcpConnection) -> int | None:
    """End the session: close the agent's stdin and kill its process group (the turn is
    over, nothing more is measured); its exit code when it had ended its output itself
    (exited or crashed), else None."""
    conn.close()
    code: int | None = None
    if conn.closed.is_set():  # its stdout ended: it is exiting, give it a moment
        with contextlib.suppress(subprocess.TimeoutExpired):
            code = proc.wait(timeout=EXIT_GRACE_SEC)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    conn.join(timeout=5.0)
    if proc.stdout is not None:
        proc.stdout.close()
    return code


__all__ = ["PROTOCOL_VERSION", "AcpAdapter", "AcpAgent", "Trajectory", "serve"]
