"""A real agent (Claude Code, Codex, OpenCode, ...) run through its headless CLI.

:class:`HeadlessAdapter` is what one agent differs in — its npm package and binary, where
it discovers skills, how it is pointed at a model (environment and config files in its
fresh HOME), its command line, and how its JSON stream becomes run-record events. The
common part is :class:`HeadlessAgent`, an :class:`~skillci.agents.base.Agent`:

1. install the skill under test and its companions where the agent discovers them, in the
   trial's workspace (``<skills_dir>/<name>/``); they are removed again before the
   verifier looks at the workspace (a task's "no unrelated changes" check must not see them);
2. start the trial's :class:`~skillci.providers.gateway.Gateway` on loopback (the route's
   key stays in this process; the agent gets a per-trial gateway token);
3. write the agent's configuration into a fresh HOME and launch it through the runner's
   :attr:`~skillci.agents.base.AgentContext.launch` (the trial's sandbox, with loopback
   reachable), its stdout (the JSON stream) to ``/logs/agent/<name>.jsonl``;
4. stop it at the deadline, or shortly after the gateway reports the route cannot answer;
5. parse the stream into events; a skill tool call or a read of a file under an installed
   skill is a :class:`~skillci.trace.models.SkillLoadEvent`.

An agent that cannot start, crashes, never reaches the model or whose model calls fail is
an infrastructure error of the trial (:attr:`AgentResult.infra_error`), never a failure.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import select
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Protocol

from skillci.agents.base import AgentContext, AgentResult, EventLog
from skillci.providers.client import ModelClient
from skillci.providers.gateway import Gateway, GatewayCall
from skillci.skill.render import RenderedSkill
from skillci.trace.models import MessageEvent, SkillLoadEvent, ToolCallEvent

#: Seconds an agent may go on after the gateway failed a call (then it is stopped).
FATAL_GRACE_SEC = 3.0
#: Where the stream and the gateway log go, relative to the trial's agent logs dir.
STDERR_TAIL = 1500
#: ``stop_reason`` of an agent stopped at its first load of the skill under test.
SKILL_LOADED = "skill_loaded"
#: A proxy nobody listens on: an agent's traffic to anything but the gateway fails fast.
DEAD_PROXY = "http://127.0.0.1:9"


#: The fresh HOME's login profile: /etc/profile resets PATH for ``bash -l``; the launcher
#: passes the sandbox's PATH in ``$SKILLCI_SANDBOX_PATH``.
PROFILE = '[ -n "$SKILLCI_SANDBOX_PATH" ] && export PATH="$SKILLCI_SANDBOX_PATH"\n'


@dataclass
class Launch:
    """How the runner starts the agent: argv, extra environment, cwd as the agent sees it."""

    argv: list[str]
    env: dict[str, str]
    stdout: Path
    stderr: Path
    pipes: bool = False
    """Give the agent pipes for stdin and stdout (a protocol over stdio, e.g. ACP) instead
    of no stdin and ``stdout`` as its output file; the caller then keeps ``stdout``."""
    gateway_port: int | None = None
    """The loopback port of the trial's model gateway: a sandbox without network carries
    it in through a relay (:mod:`skillci.runners.netrelay`); None: nothing to carry."""


@dataclass
class StreamState:
    """What an adapter's parser fills while reading the agent's stream."""

    final_output: str | None = None
    turns: int | None = None
    reported_error: str | None = None
    tool_names: dict[str, str] = field(default_factory=dict)


class LoadWatch(Protocol):
    """Says once the running agent loaded the skill under test."""

    def loaded(self) -> bool: ...


class HeadlessAdapter:
    """One real agent's specifics. Subclasses set the class attributes and the methods."""

    name: ClassVar[str]
    """Registry name (``--agent``), e.g. ``claude-code``."""
    package: ClassVar[str]
    """npm package it installs from."""
    binary: ClassVar[str]
    """Executable under ``node_modules/.bin``."""
    skills_dir: ClassVar[str]
    """Workspace-relative directory the agent discovers skills in."""
    wire_api: ClassVar[str]
    """What it sends the gateway: anthropic, responses, chat or gemini."""
    skill_tools: ClassVar[tuple[str, ...]] = ("skill",)
    """Its tools that load a skill by name (``{"skill": N}`` or ``{"name": N}``), lower case."""
    interface: ClassVar[str] = "headless"
    """How skillci drives it: ``headless`` (its CLI's JSON stream) or ``acp``."""
    install_name: ClassVar[str | None] = None
    """The agent whose install it runs (``<install_name>-<version>`` in the agents cache),
    when another interface of the same CLI is registered under that name; None: its own."""

    @property
    def installs_as(self) -> str:
        return self.install_name or self.name

    def agent(self, client: ModelClient, **kw: Any) -> HeadlessAgent:
        """The :class:`~skillci.agents.base.Agent` that runs this adapter's agent."""
        return HeadlessAgent(self, client, **kw)

    def environment(self, home: Path, gateway: Gateway, model: str) -> dict[str, str]:
        """Environment for the agent (besides HOME, PATH and the proxy settings); may write
        config files under ``home``."""
        raise NotImplementedError

    def after_install(self, exe: Path) -> None:
        """Once per install, after ``npm install`` (and on ``agents install`` of an
        installed version): prepare what every trial would otherwise redo in its fresh HOME."""

    def install_env(self, exe: Path) -> dict[str, str]:
        """Environment that points the agent at what :meth:`after_install` prepared in its
        install dir (read-only in the sandbox)."""
        return {}

    def command(self, exe: str, prompt: str, model: str, cwd: str) -> list[str]:
        raise NotImplementedError

    def parse(self, record: dict[str, Any], log: EventLog, state: StreamState) -> None:
        """Turn one JSON line of the agent's stream into events on ``log``."""
        raise NotImplementedError


def agent_env(
    adapter: HeadlessAdapter, home: Path, gateway: Gateway, model: str, exe: Path | None = None
) -> dict[str, str]:
    """The agent's environment (on top of the sandbox's cleared one), with its config
    written into the fresh ``home``: HOME and XDG dirs there, the dead proxy for every
    host but loopback, the adapter's own settings (gateway URL and token) and those of its
    install dir (``exe``)."""
    home.mkdir(parents=True, exist_ok=True)
    for name in (".bash_profile", ".profile"):  # login shells keep the sandbox's PATH
        (home / name).write_text(PROFILE)
    return {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local/share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local/state"),
        "HTTP_PROXY": DEAD_PROXY,
        "HTTPS_PROXY": DEAD_PROXY,
        "http_proxy": DEAD_PROXY,
        "https_proxy": DEAD_PROXY,
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        **adapter.environment(home, gateway, model),
        **(adapter.install_env(exe) if exe is not None else {}),
    }


def write_home_config(path: Path, data: dict[str, Any]) -> Path:
    """Write an agent's JSON configuration ``data`` at ``path`` in the trial's fresh HOME."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1))
    return path


def obj(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else ``{}`` (stream records are untrusted data)."""
    return value if isinstance(value, dict) else {}


def add_tool_call(log: EventLog, state: StreamState, call_id: str, tool: str, args: Any) -> None:
    """One tool call of the agent's stream, remembered by id (its result names only the
    id); arguments that are not a JSON object are kept under ``input``."""
    state.tool_names[call_id] = tool
    arguments = args if isinstance(args, dict) else {"input": args}
    log.add(ToolCallEvent, tool=tool, arguments=arguments, call_id=call_id)


def install_skills(workspace: Path, skills_dir: str, skills: list[RenderedSkill]) -> list[Path]:
    """Write each skill to ``workspace/<skills_dir>/<name>/``; the dirs created, for
    :func:`remove_skills`."""
    created: list[Path] = []
    base = workspace / skills_dir
    # the first missing dir on the way: `.github/skills` in a task that has `.github/`
    parts = Path(skills_dir).parts
    missing = (workspace.joinpath(*parts[: i + 1]) for i in range(len(parts)))
    first = next((d for d in missing if not d.exists()), None)
    if first is not None:
        created.append(first)
    for skill in skills:
        root = base / skill.name
        if root.exists():  # the task's own copy: leave the workspace as the task made it
            continue
        for f in skill.files:
            (root / f.path).parent.mkdir(parents=True, exist_ok=True)
            (root / f.path).write_bytes(f.content)
        created.append(root)
    return created


def remove_skills(created: list[Path]) -> None:
    for path in reversed(created):
        shutil.rmtree(path, ignore_errors=True)


def skill_loads(
    text: str, skills: list[RenderedSkill], skills_dir: str
) -> list[tuple[RenderedSkill, str]]:
    """Installed skill files that ``text`` (a tool call's arguments) names by path:
    ``<skills_dir>/<skill>/<file>``."""
    hits: list[tuple[RenderedSkill, str]] = []
    for skill in skills:
        prefix = f"{skills_dir}/{skill.name}/"
        for f in skill.files:
            if prefix + f.path in text:
                hits.append((skill, f.path))
    return hits


def add_skill_load(log: EventLog, skill: RenderedSkill, path: str) -> None:
    f = skill.file(path)
    log.add(
        SkillLoadEvent,
        path=path,
        on_demand=True,
        tokens=f.tokens if f is not None else None,
        content_hash=hashlib.sha256(f.content).hexdigest() if f is not None else None,
    )


@dataclass
class Started:
    """One trial's agent process once started, and what its run fills."""

    ctx: AgentContext
    gateway: Gateway
    skills: list[RenderedSkill]
    res: AgentResult
    log: EventLog
    proc: subprocess.Popen[bytes]
    stream: Path
    """The agent's stream (headless) or the protocol transcript (ACP)."""
    stderr: Path


class HeadlessAgent:
    """Runs one :class:`HeadlessAdapter`'s agent on a trial, through a gateway."""

    role = "student"
    pipes: ClassVar[bool] = False
    """Start the agent with stdin and stdout pipes (it speaks a protocol on them)."""

    def __init__(
        self,
        adapter: HeadlessAdapter,
        client: ModelClient,
        *,
        exe: Path,
        version: str,
        role: str = "student",
        companions: list[RenderedSkill] | None = None,
        stop_at_load: bool = False,
    ) -> None:
        """``stop_at_load``: stop the agent as soon as its stream shows a load of the skill
        under test (``stop_reason`` ``skill_loaded``): a trigger decision needs no more."""
        self.adapter = adapter
        self.client = client
        self.exe = exe
        self.name = adapter.name
        self.version = version
        self.role = role
        self.companions = companions or []
        self.stop_at_load = stop_at_load

    def run(self, ctx: AgentContext) -> AgentResult:
        start = time.monotonic()
        res = AgentResult(model_params=self.client.route.sampling_params())
        log = EventLog(res.events, start)
        if ctx.launch is None or ctx.home is None or ctx.logs is None:
            res.stop_reason, res.infra_error = "agent_start_failed", "runner gave no launcher"
            return res
        skills = [s for s in [ctx.skill, *self.companions] if s is not None]
        created = install_skills(ctx.workspace, self.adapter.skills_dir, skills)
        try:
            with Gateway(self.client, seed=ctx.seed) as gateway:
                self._run(ctx, gateway, skills, res, log)
                res.cost.model_calls = len([c for c in gateway.calls if c.error is None])
                res.cost.cached_model_calls = sum(c.cached for c in gateway.calls)
                res.cost.input_tokens = sum(c.input_tokens for c in gateway.calls)
                res.cost.output_tokens = sum(c.output_tokens for c in gateway.calls)
                usd = [c.usd for c in gateway.calls if c.usd is not None]
                res.cost.usd = sum(usd) if usd else None
                self._write_calls(ctx.logs / "gateway.jsonl", gateway.calls)
        finally:
            remove_skills(created)
        res.cost.tool_calls = sum(1 for e in res.events if e.kind == "tool_call")
        res.cost.wall_time_sec = round(time.monotonic() - start, 4)
        return res

    def _run(
        self,
        ctx: AgentContext,
        gateway: Gateway,
        skills: list[RenderedSkill],
        res: AgentResult,
        log: EventLog,
    ) -> None:
        started = self._start(ctx, gateway, res, log, pipes=self.pipes)
        if started is None:
            return
        proc, stream, stderr = started
        self._drive(Started(ctx, gateway, skills, res, log, proc, stream, stderr))

    def _drive(self, run: Started) -> None:
        """Wait for the headless agent, then read its stream into ``run.res``."""
        ctx, gateway, skills, res, log = run.ctx, run.gateway, run.skills, run.res, run.log
        watch = _LoadWatch(self.adapter, run.stream, skills[0]) if self._watch(ctx) else None
        code, why = self._wait(run.proc, ctx, gateway, watch)
        waiting = gateway.waiting_sec()  # a call still waiting for the route when it stopped
        state = StreamState()
        for line in _lines(run.stream):
            self._parse_line(line, log, state, skills, under_test=ctx.skill is not None)
        res.final_output = state.final_output
        res.stop_reason = why or "final_answer"
        failed = code != 0 and state.final_output is None and why != SKILL_LOADED
        said = state.reported_error
        self._judge(
            res, log, gateway, why, waiting, failed=failed, said=said, err=run.stderr, code=code
        )

    def _start(
        self,
        ctx: AgentContext,
        gateway: Gateway,
        res: AgentResult,
        log: EventLog,
        *,
        pipes: bool = False,
    ) -> tuple[subprocess.Popen[bytes], Path, Path] | None:
        """Launch the agent in the trial's sandbox with its fresh HOME's configuration: the
        process, its stream file and its stderr file; None (``res`` says why) when it did
        not start."""
        assert ctx.launch is not None and ctx.home is not None and ctx.logs is not None
        model = self.client.route_name
        env = agent_env(self.adapter, ctx.home, gateway, model, self.exe)
        stream = ctx.logs / f"{self.adapter.name}.jsonl"
        stderr = ctx.logs / f"{self.adapter.name}.stderr.txt"
        argv = self.adapter.command(str(self.exe), ctx.instruction, model, ctx.agent_cwd)
        log.add(MessageEvent, role="user", content=ctx.instruction, untrusted=False)
        job = Launch(
            argv=argv, env=env, stdout=stream, stderr=stderr, pipes=pipes, gateway_port=gateway.port
        )
        try:
            return ctx.launch(job), stream, stderr
        except OSError as exc:
            res.stop_reason = "agent_start_failed"
            res.infra_error = f"{self.adapter.name} did not start: {exc}"
            log.error("AgentStartFailed", res.infra_error)
            return None

    def _judge(
        self,
        res: AgentResult,
        log: EventLog,
        gateway: Gateway,
        why: str | None,
        waiting: float | None,
        *,
        failed: bool,
        said: str | None,
        err: Path,
        code: int | None,
    ) -> None:
        """Whose outcome the run is: set :attr:`AgentResult.infra_error` when the agent
        could not do its part (the route failed, nothing answered within the time limit,
        never reached the model, ``failed`` — it ended without an answer)."""
        model = self.client.route_name
        err_tail = _tail(err)
        answered = [c for c in gateway.calls if c.error is None]
        if gateway.fatal is not None:
            res.infra_error = f"the model route failed: {gateway.fatal}"
        elif why == "timeout" and not answered:
            # nothing was measured: the agent never got an answer within the limit (design 419)
            res.infra_error = (
                f"the agent's time limit was reached before {model} answered any call"
                + (f" (its first call had waited {waiting:.0f} s)" if waiting is not None else "")
                + ": the route is too slow for this task's [agent] timeout_sec; use a faster "
                "route or raise the limit"
            )
        elif why == "timeout":
            log.error("Timeout", "agent time limit reached")
        elif not answered:
            res.infra_error = (
                f"{self.adapter.name} never reached the model (exit {code}): {err_tail}"
            )
        elif failed:
            res.infra_error = f"{self.adapter.name} exited {code}: {said or err_tail}"
        if res.infra_error is not None:
            res.stop_reason = "agent_error"
            log.error("AgentError", res.infra_error)

    def _parse_line(
        self,
        line: str,
        log: EventLog,
        state: StreamState,
        skills: list[RenderedSkill],
        *,
        under_test: bool,
    ) -> None:
        try:
            record = json.loads(line)
        except (ValueError, RecursionError):  # not a record (nesting too deep to parse)
            return
        if not isinstance(record, dict):
            return
        before = len(log.events)
        self.adapter.parse(record, log, state)
        for ev in list(log.events[before:]):
            if ev.kind != "tool_call":
                continue
            text = json.dumps(ev.arguments)
            # loads of the skill under test are events; companions' stay tool calls
            for skill, path in skill_hits(ev.tool, ev.arguments, text, skills, self.adapter):
                if skill is skills[0] and under_test:
                    add_skill_load(log, skill, path)

    def _watch(self, ctx: AgentContext) -> bool:
        return self.stop_at_load and ctx.skill is not None

    def _wait(
        self,
        proc: subprocess.Popen[bytes],
        ctx: AgentContext,
        gateway: Gateway,
        watch: _LoadWatch | None = None,
    ) -> tuple[int, str | None]:
        """Wait for the agent; stop it at the deadline, after a fatal gateway error, or
        (``watch``) once it loaded the skill under test."""
        why: str | None = None
        fatal_at: float | None = None
        with _ExitWatch(proc) as exited:
            while True:
                if exited(timeout=0.2):
                    return proc.wait(), why
                why, fatal_at = self._stop_why(ctx, gateway, watch, fatal_at)
                if why is not None:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.killpg(proc.pid, signal.SIGKILL)
                    return proc.wait(), why

    @staticmethod
    def _stop_why(
        ctx: AgentContext, gateway: Gateway, watch: LoadWatch | None, fatal_at: float | None
    ) -> tuple[str | None, float | None]:
        """Why the agent is to be stopped now (None: let it run), and when the gateway
        first failed a call."""
        why: str | None = None
        if gateway.fatal_event.is_set() and fatal_at is None:
            fatal_at = time.monotonic()
        if watch is not None and watch.loaded():
            why = SKILL_LOADED
        elif ctx.time_left() <= 0:
            why = "timeout"
        elif fatal_at is not None and time.monotonic() - fatal_at > FATAL_GRACE_SEC:
            why = "agent_error"
        return why, fatal_at

    @staticmethod
    def _write_calls(path: Path, calls: list[GatewayCall]) -> None:
        path.write_text("".join(c.model_dump_json() + "\n" for c in calls))


class _ExitWatch:
    """Waits up to ``timeout`` for a process to exit and wakes the moment it does: a Linux
    pidfd in ``poll`` (``Popen.wait(timeout)`` sleeps in steps of up to 50 ms instead),
    else ``Popen.wait``."""

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        self.fd: int | None = None
        self.poller: select.poll | None = None

    def __enter__(self) -> _ExitWatch:
        pidfd_open = getattr(os, "pidfd_open", None)
        if pidfd_open is not None:
            with contextlib.suppress(OSError):
                self.fd = pidfd_open(self.proc.pid)
                self.poller = select.poll()
                self.poller.register(self.fd, select.POLLIN)
        return self

    def __call__(self, *, timeout: float) -> bool:
        """True once the process has exited (not yet reaped)."""
        if self.poller is None:
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                return False
            return True
        return bool(self.poller.poll(timeout * 1000))

    def __exit__(self, *exc: object) -> None:
        if self.fd is not None:
            os.close(self.fd)


class _LoadWatch:
    """Reads the agent's stream as it grows and says once a tool call loaded ``skill``."""

    def __init__(self, adapter: HeadlessAdapter, stream: Path, skill: RenderedSkill) -> None:
        self.adapter, self.stream, self.skill = adapter, stream, skill
        self.offset = 0
        self.log = EventLog([], time.monotonic())
        self.state = StreamState()

    def loaded(self) -> bool:
        try:
            with self.stream.open("rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return False
        end = data.rfind(b"\n") + 1  # whole lines only; the rest is read next time
        self.offset += end
        for line in data[:end].decode("utf-8", errors="replace").splitlines():
            try:
                record = json.loads(line)
            except (ValueError, RecursionError):  # not a record (nesting too deep to parse)
                continue
            if not isinstance(record, dict):
                continue
            before = len(self.log.events)
            self.adapter.parse(record, self.log, self.state)
            for ev in self.log.events[before:]:
                if ev.kind == "tool_call" and skill_hits(
                    ev.tool, ev.arguments, json.dumps(ev.arguments), [self.skill], self.adapter
                ):
                    return True
        return False


def skill_hits(
    tool: str,
    arguments: dict[str, Any],
    text: str,
    skills: list[RenderedSkill],
    adapter: HeadlessAdapter,
) -> list[tuple[RenderedSkill, str]]:
    """Skill files one tool call loads: a skill tool naming an installed skill (its
    SKILL.md), or any call naming an installed skill file by path."""
    if tool.lower() in adapter.skill_tools:
        wanted = str(arguments.get("skill") or arguments.get("name") or "")
        named = [s for s in skills if s.name == wanted.split(":")[-1]]
        if named:
            return [(named[0], "SKILL.md")]
    return skill_loads(text, skills, adapter.skills_dir)


def _lines(path: Path) -> list[str]:
    try:
        return path.read_text(errors="replace").splitlines()
    except OSError:
        return []


def _tail(path: Path) -> str:
    try:
        text = path.read_text(errors="replace").strip()
    except OSError:
        return "(no stderr)"
    return " ".join(text[-STDERR_TAIL:].split()) or "(no stderr)"


__all__ = [
    "DEAD_PROXY",
    "SKILL_LOADED",
    "HeadlessAdapter",
    "HeadlessAgent",
    "Launch",
    "Started",
    "StreamState",
    "agent_env",
    "install_skills",
    "obj",
    "remove_skills",
    "skill_hits",
    "skill_loads",
    "write_home_config",
]
