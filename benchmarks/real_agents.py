"""Real agents as students: a skillci trial vs the same agent run bare, per agent.

    SKILLCI_AGENTS_DIR=~/.cache/skillci-tests/agents \\
      .venv/bin/python -m benchmarks.real_agents [--agents claude-code,codex] [--n 3] \\
      [--latency 0.5] [--reads 2]

Both sides run the installed agent CLI on the bundled task cfg-log-level with the bundled
skill repo-debugger, against the scripted competent model (tests/fakes/scripted_agents.py)
behind skillci's gateway (the only thing here that speaks the agents' formats): the same
prompt, the same skill files in the same skills directory, the same model server, the same
agent environment, and both are checked by the task's verifier:

- trial: ``run_eval(agent=NAME)``, as ``skillci eval run --agent NAME`` runs it, in one
  process with one state dir per agent and mode (``rerun=all``; its first trial, which
  also builds the cached workspace template, is a discarded warm-up). Everything skillci
  adds is inside the time: the workspace copy, the skill install, the fresh HOME and its
  config, the gateway's start and stop, bubblewrap, the verifier in its own sandbox,
  redaction, the trial dir, the record and its SQLite index.
- bare: a workspace prepared like the trial's with the skill installed, a fresh HOME with
  the same config, the sandbox's PATH and a gateway already running (all untimed), then,
  timed: the same CLI and command line as a host subprocess, removing the skill dirs, and
  the task's ``tests/test.sh`` as a host subprocess (the verifier, timed on its own too).

Trials and bare runs alternate, so a change in the machine's load falls on both. Two
models: the scripted one answering at once, and the same one with ``--latency`` seconds
of sleep before each answer (a stand-in for a real model's latency, labelled as such: the
SmolLM2 llama.cpp server needs a ~15 min source build, see scripts/ci_llama.sh).

Printed per agent and model: median wall times, their ratio (goal <= 1.2x), the absolute
overhead in seconds per trial, the model calls the records hold vs the calls the endpoint
saw (equal), and then (``--reads`` trials per agent under ``strace -f``, untimed) the
skill-load events in the record vs the opens of the skill's SKILL.md the kernel saw from the
agent's process tree, with a control trial whose model loads nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import skillci.runners.agent_launch as agent_launch
from skillci.agents.acp import PROTOCOL_VERSION, serve
from skillci.agents.acp_client import AcpConnection
from skillci.agents.headless import Launch, agent_env, install_skills, obj, remove_skills
from skillci.agents.install import resolve
from skillci.agents.registry import adapter
from skillci.flows.evalrun import EvalRequest, run_eval
from skillci.providers.client import ModelClient
from skillci.providers.gateway import Gateway
from skillci.providers.routes import ModelRoute
from skillci.runners.local import prepare_workspace
from skillci.runners.sandbox import BwrapShell, PlainShell, base_env
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.trace.models import RunRecord
from tests.fakes.openai_server import FakeOpenAI, ToolCalls
from tests.fakes.scripted_agents import solve_cfg_log_level

ROOT = Path(__file__).resolve().parents[1]
TASK, SKILL = "cfg-log-level", ROOT / "skills" / "repo-debugger"
KEY_ENV = "SKILLCI_BENCH_SCRIPTED_KEY"
STRACE_LOG = "strace.txt"
Model = Callable[[dict[str, Any]], "str | ToolCalls"]


@dataclass
class Trial:
    wall: float
    agent: float
    calls: int
    seen: int
    loads: int
    state: str
    trial_dir: Path


def route_for(fake: FakeOpenAI) -> dict[str, object]:
    return {
        "model": "openai/scripted",
        "api_base": fake.base_url,
        "api_key_env": KEY_ENV,
        "timeout": 30,
        "input_cost_per_token": 0.0,
        "output_cost_per_token": 0.0,
    }


def slow(latency: float) -> Model:
    """The scripted model, answering each call after ``latency`` seconds."""

    def model(body: dict[str, Any]) -> str | ToolCalls:
        time.sleep(latency)
        return solve_cfg_log_level(body)

    return model


def no_load(body: dict[str, Any]) -> str | ToolCalls:
    """A model that loads no skill: it answers in prose at once (the reads' control)."""
    return "Nothing to do."


@contextmanager
def scripted(model: Model, tmp: Path) -> Iterator[FakeOpenAI]:
    with FakeOpenAI([model]) as fake:
        routes = tmp / f"routes-{id(fake)}.json"
        routes.write_text(
            json.dumps({"schema_version": 1, "routes": {"scripted": route_for(fake)}})
        )
        os.environ["SKILLCI_PROVIDER_ROUTES"] = str(routes)
        yield fake


#: How long each trial's agent process ran (launch to exit), appended by :func:`agent_clock`.
AGENT_SECONDS: list[float] = []


@contextmanager
def agent_clock() -> Iterator[None]:
    """Time every real agent's process inside its trial: from its launch in the sandbox
    to its exit (what the bare run's subprocess is, less the sandbox's start)."""
    original = agent_launch.launcher

    def launcher(shell: BwrapShell | PlainShell) -> Callable[[Launch], subprocess.Popen[bytes]]:
        launch = original(shell)

        def timed(job: Launch) -> subprocess.Popen[bytes]:
            start = time.perf_counter()
            proc = launch(job)
            wait = proc.wait

            def waited(timeout: float | None = None) -> int:
                code = wait(timeout)  # returns once the agent has exited
                if AGENT_SECONDS[-1] < 0:
                    AGENT_SECONDS[-1] = time.perf_counter() - start
                return code

            proc.wait = waited  # type: ignore[method-assign]
            return proc

        return timed

    agent_launch.launcher = launcher
    try:
        yield
    finally:
        agent_launch.launcher = original


def trial(name: str, fake: FakeOpenAI, home: Path) -> Trial:
    """One trial: wall, the agent process's part, calls recorded, calls the endpoint saw,
    skill loads, state."""
    seen = len(fake.requests)
    AGENT_SECONDS.append(-1.0)
    req = EvalRequest(
        root=ROOT, tasks=[TASK], skill=SKILL, agent=name, model="scripted", home=home, rerun="all"
    )
    start = time.perf_counter()
    res = run_eval(req)
    wall = time.perf_counter() - start
    [t] = res.trials
    record = RunRecord.model_validate_json((Path(t.trial_dir) / "record.json").read_text())
    loads = sum(1 for e in record.events if e.kind == "skill_load")
    return Trial(
        wall,
        AGENT_SECONDS[-1],
        record.cost.model_calls,
        len(fake.requests) - seen,
        loads,
        t.state,
        Path(t.trial_dir),
    )


def acp_session(argv: list[str], cwd: Path, env: dict[str, str], prompt: str) -> bytes:
    """Drive an ACP server bare: a host subprocess and the three calls of a session
    (``initialize``, ``session/new``, ``session/prompt``) through skillci's JSON-RPC
    client, every permission allowed, until the prompt is answered; then it is stopped.
    The session's transcript."""
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, start_new_session=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    conn = AcpConnection(
        proc.stdin, proc.stdout, cwd.parent / "acp.jsonl", serve=serve, notify=lambda m, p: None
    ).start()
    caps = {"fs": {"readTextFile": False, "writeTextFile": False}, "terminal": False}
    init = {"protocolVersion": PROTOCOL_VERSION, "clientCapabilities": caps}
    conn.call("initialize", init).done.wait(600)
    new = conn.call("session/new", {"cwd": str(cwd), "mcpServers": []})
    new.done.wait(600)
    session = obj(new.result).get("sessionId")
    text = [{"type": "text", "text": prompt}]
    conn.call("session/prompt", {"sessionId": session, "prompt": text}).done.wait(600)
    conn.close()
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    conn.join(5.0)
    proc.stdout.close()
    return (cwd.parent / "acp.jsonl").read_bytes()


def bare(name: str, fake: FakeOpenAI, tmp: Path) -> tuple[float, float, int, bool, int]:
    """The agent alone, then the verifier: wall (both), the verifier's part, the calls
    the endpoint saw, whether the verifier passed it, and how often its output says
    "command not found" (0: it ran the commands the trial's agent runs). An agent driven
    over ACP runs bare as the same ACP server driven by a bare session
    (:func:`acp_session`, host process)."""
    a, exe = adapter(name), resolve(name).exe
    task = load_task(ROOT / "evals" / "tasks" / TASK, purpose=Purpose.optimize)
    ws, home, logs = tmp / "ws", tmp / "home", tmp / "logs"
    prepare_workspace(task.environment_dir, ws)
    created = install_skills(ws, a.skills_dir, [render(SkillPackage.from_dir(SKILL), "folder")])
    route = ModelRoute.model_validate(route_for(fake))
    (logs / "verifier").mkdir(parents=True)
    seen = len(fake.requests)
    with Gateway(ModelClient("scripted", route)) as gw:
        env = base_env(agent_env(a, home, gw, "scripted", exe))
        # the sandbox's PATH, as the launcher gives the agent (its HOME's login profile
        # restores it in every `bash -l` command): without it the bare agent's `python ...`
        # commands end at once in "command not found" while the trial's run (design 433)
        env.setdefault(agent_launch.PATH_ENV, base_env()["PATH"])
        argv = a.command(str(exe), task.instruction, "scripted", str(ws))
        start = time.perf_counter()
        if a.interface == "acp":
            said = acp_session(argv, ws, env, task.instruction)
        else:
            said = subprocess.run(
                argv, cwd=ws, env=env, stdin=subprocess.DEVNULL, capture_output=True, timeout=600
            ).stdout
        remove_skills(created)
        verifier_start = time.perf_counter()
        subprocess.run(
            ["bash", str(task.verifier_dir / "test.sh")],
            cwd=ws,
            env=base_env({"LOGS_DIR": str(logs)}),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=600,
        )
        end = time.perf_counter()
    reward = (logs / "verifier" / "reward.txt").read_text().strip()
    shutil.rmtree(tmp, ignore_errors=True)
    missing = said.count(b"command not found")
    passed = float(reward) == 1.0
    return end - start, end - verifier_start, len(fake.requests) - seen, passed, missing


@contextmanager
def straced() -> Iterator[None]:
    """Every real agent launched meanwhile runs under ``strace -f``, its file opens logged
    to ``<trial>/logs/agent/strace.txt`` (inside the sandbox: ``/logs/agent``)."""
    strace = shutil.which("strace")
    if strace is None:
        raise SystemExit("--reads needs strace on PATH (apt-get install strace)")
    original = agent_launch.launcher

    def launcher(shell: BwrapShell | PlainShell) -> Callable[[Launch], subprocess.Popen[bytes]]:
        launch = original(shell)
        where = "/logs/agent" if isinstance(shell, BwrapShell) else None

        def wrapped(job: Launch) -> subprocess.Popen[bytes]:
            log = f"{where or job.stdout.parent}/{STRACE_LOG}"
            trace = [strace, "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", log]
            job.argv = [*trace, *job.argv]
            return launch(job)

        return wrapped

    agent_launch.launcher = launcher
    try:
        yield
    finally:
        agent_launch.launcher = original


def skill_md_opens(trial_dir: Path, skills_dir: str) -> int:
    """Successful read opens of the skill's SKILL.md in the trial's strace log (a call
    another thread interrupted is two lines: ``<unfinished ...>``, then ``resumed``)."""
    log = trial_dir / "logs" / "agent" / STRACE_LOG
    path = f'{skills_dir}/{SKILL.name}/SKILL.md"'
    pending: set[str] = set()
    opens = 0
    for line in log.read_text(errors="replace").splitlines():
        pid, _, rest = line.partition(" ")
        if (
            path in rest
            and re.match(r"\s*open(at2?)?\(", rest)
            and not re.search(r"O_WRONLY|O_RDWR|O_PATH", rest)
        ):
            if rest.endswith("<unfinished ...>"):
                pending.add(pid)
                continue
            opens += bool(re.search(r"\)\s*= \d+$", rest))
        elif pid in pending and re.match(r"\s*<\.\.\. open(at2?)? resumed>", rest):
            pending.discard(pid)
            opens += bool(re.search(r"\)\s*= \d+$", rest))
    return opens


def timing(name: str, model: Model, label: str, n: int, tmp: Path) -> None:
    tag = re.sub(r"[^a-z0-9.]+", "-", label)
    with scripted(model, tmp) as fake, agent_clock():
        home = tmp / f"state-{name}-{tag}"
        trial(name, fake, home)  # warm-up: builds the workspace template; not counted
        trials: list[Trial] = []
        bares: list[tuple[float, float, int, bool, int]] = []
        for i in range(n):
            trials.append(trial(name, fake, home))
            bares.append(bare(name, fake, tmp / f"bare-{name}-{tag}-{i}"))
    tw = statistics.median(t.wall for t in trials)
    bw = statistics.median(b[0] for b in bares)
    vw = statistics.median(b[1] for b in bares)
    ta = statistics.median(t.agent for t in trials)
    ba = statistics.median(b[0] - b[1] for b in bares)
    rec, saw = sum(t.calls for t in trials), sum(t.seen for t in trials)
    states = ",".join(sorted({t.state for t in trials}))
    ok = sum(b[3] for b in bares)
    print(
        f"{name:<15} {label:<14} {tw:8.2f} {bw:7.2f} {vw:6.2f} {tw / bw:5.2f}x {tw - bw:+6.2f}"
        f" {ta:7.2f} {ba:7.2f}  {rec:>3}/{saw:<3} {states}"
        f" (bare: {ok}/{n} passed, {sum(b[2] for b in bares)} calls,"
        f" {sum(b[4] for b in bares)} 'command not found')"
    )


def reads(name: str, n: int, tmp: Path) -> None:
    """Per straced trial: skill-load events and SKILL.md read opens, with the model loading
    the skill (``solve``) and with a model that loads nothing (the control: the opens an
    agent makes anyway, to list its skills)."""
    skills_dir = adapter(name).skills_dir
    got: dict[str, tuple[list[int], list[int]]] = {}
    with straced():
        for label, model, runs in (("solve", slow(0.0), n), ("control", no_load, n)):
            with scripted(model, tmp) as fake:
                ts = [trial(name, fake, tmp / f"reads-{name}-{label}-{i}") for i in range(runs)]
            got[label] = (
                [t.loads for t in ts],
                [skill_md_opens(t.trial_dir, skills_dir) for t in ts],
            )
    (ev, op), (cev, cop) = got["solve"], got["control"]
    extra = statistics.median(op) - statistics.median(cop)
    print(f"{name:<15} {ev!s:<10} {op!s:<10} {cev!s:<10} {cop!s:<10} {extra:+g}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--agents", default="claude-code,codex")
    ap.add_argument("--n", type=int, default=3)
    ap.add_argument("--latency", type=float, default=0.5, help="seconds per call (0: skip)")
    ap.add_argument("--reads", type=int, default=2, help="straced trials per agent (0: skip)")
    args = ap.parse_args()
    os.environ[KEY_ENV] = "bench-route-key"
    names = args.agents.split(",")
    models: list[tuple[str, Model]] = [("instant", slow(0.0))]
    if args.latency > 0:
        models.append((f"+{args.latency:g}s/call", slow(args.latency)))
    print(
        f"task {TASK}, skill {SKILL.name}, {args.n} trials + {args.n} bare runs each "
        f"(alternating, after 1 warm-up trial), load {os.getloadavg()[0]:.2f}"
    )
    print("model: scripted on loopback; '+Xs/call' = the same, sleeping X s before each answer")
    print(
        "bare s = agent + verifier as host subprocesses; verif = its verifier part; over s = "
        "trial - bare; agent t = the agent process in the trial (launch to exit), agent b = "
        "the bare agent (bare s - verif)"
    )
    print(
        f"{'agent':<15} {'model':<14} {'trial s':>8} {'bare s':>7} {'verif':>6} {'ratio':>6}"
        f" {'over s':>6} {'agent t':>7} {'agent b':>7}  calls rec/seen  states"
    )
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for name in names:
            for label, model in models:
                timing(name, model, label, args.n, tmp)
        if args.reads > 0:
            print(
                "skill-load events in the record vs read opens of the skill's SKILL.md by the "
                "agent's process tree (strace -f, untimed trials); control = a model that "
                "loads nothing"
            )
            print(
                f"{'agent':<15} {'events':<10} {'opens':<10} {'ctl ev':<10} {'ctl opens':<10}"
                " opens beyond the control"
            )
            for name in names:
                reads(name, args.reads, tmp)
    print("versions: " + ", ".join(f"{n} {resolve(n).version}" for n in names))


if __name__ == "__main__":
    main()
