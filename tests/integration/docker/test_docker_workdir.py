"""The Docker runner gives a task its own working directory (design 250): a task whose image
puts the data and WORKDIR at /root is environment_unsupported locally and passes under Docker,
with the oracle and with the built-in agent, whose prompt, file tools and commands all see
/root (a real engine; the model is a loopback OpenAI-compatible server)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.runners.base import AgentSpec, plan
from skillci.runners.sandbox import bwrap_path
from skillci.runners.scheduler import Scheduler
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.trace.store import TraceStore
from tests.fakes.openai_server import FAKE_KEY_ENV, FakeOpenAI, student_on

ROOT = Path(__file__).resolve().parents[3]
ROOT_WORKDIR = ROOT / "tests" / "fixtures" / "envcheck" / "root-workdir"
ORACLE = AgentSpec(kind="oracle", role="oracle")

pytestmark = pytest.mark.usefixtures("docker_engine")


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is not usable here")
def test_a_root_workdir_task_is_unsupported_locally_and_passes_in_docker(tmp_path: Path) -> None:
    task = load_task(ROOT_WORKDIR, purpose=Purpose.optimize)
    store = TraceStore(tmp_path / "home")
    runs = {
        sandbox: Scheduler(store=store).run(
            plan([task], ORACLE, repeats=1, state_dir=tmp_path / "home", sandbox=sandbox)  # type: ignore[arg-type]
        )
        for sandbox in ("auto", "docker")
    }
    [local] = runs["auto"].trials
    [docker] = runs["docker"].trials
    assert local.state == "environment_unsupported", local
    rec = store.get(local.run_id or "")
    assert (
        "working directory /root (the local runner gives /app)"
        in (rec.evaluation.details["environment"]["reasons"])
    )
    assert docker.state == "passed" and docker.reward == 1.0, docker


def test_the_builtin_agent_sees_the_tasks_workdir_in_prompt_tools_and_shell(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAKE_KEY_ENV, "sk-fake-not-a-secret")
    answer = "from-the-task\nimage-made\n"
    turns = [
        [("read_file", {"path": "/root/data/made.txt"}), ("run", {"command": "pwd"})],
        [("write_file", {"path": "/root/answer.txt", "content": answer})],
        "done",
    ]
    task = load_task(ROOT_WORKDIR, purpose=Purpose.optimize)
    with FakeOpenAI(turns) as server:  # type: ignore[arg-type]
        agent = student_on(server, max_steps=5)
        specs = plan([task], agent, repeats=1, state_dir=tmp_path / "home", sandbox="docker")
        [trial] = Scheduler(store=TraceStore(tmp_path / "home")).run(specs).trials
        requests = list(server.requests)
    assert trial.state == "passed" and trial.reward == 1.0, trial
    system = requests[0]["messages"][0]["content"]
    assert "repository at /root (your working directory)" in system
    assert "paths are relative to /root." in system and "/app" not in system
    results = [m["content"] for m in requests[1]["messages"] if m["role"] == "tool"]
    assert "image-made" in results[0]  # the file tool read the image's /root/data
    assert "/root" in results[1]  # the shell's cwd is /root
