"""The Docker runner on a real engine: same verdicts as the local runner, container rules."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from skillci.errors import RunnerError
from skillci.providers.routes import resolve_route
from skillci.runners import docker as dr
from skillci.runners.base import DEFAULT_MAX_STEPS, AgentSpec, TrialSpec, plan
from skillci.runners.outcome import EvalResult
from skillci.runners.sandbox import Mount
from skillci.runners.scheduler import Scheduler
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose, Task
from skillci.trace.models import RunRecord

ROOT = Path(__file__).resolve().parents[3]
TASKS = ROOT / "evals" / "tasks"
BUNDLED = sorted(p.name for p in TASKS.iterdir() if (p / "task.toml").is_file())
ORACLE = AgentSpec(kind="oracle", role="oracle")
#: A few tasks per family for the (slower) model-driven comparison.
SIM_TASKS = ["py-window-end", "py-helper-raise", "cfg-two-errors", "sec-secret-reveal"]

pytestmark = pytest.mark.usefixtures("docker_engine")


def _task(task_id: str) -> Task:
    return load_task(TASKS / task_id, purpose=Purpose.final_report)


def _run(
    task_ids: list[str],
    agent: AgentSpec,
    state: Path,
    *,
    sandbox: str,
    pkg: SkillPackage | None = None,
    seed: int = 0,
) -> EvalResult:
    specs = plan(
        [_task(t) for t in task_ids],
        agent,
        repeats=1,
        state_dir=state,
        skill=render(pkg, "builtin") if pkg is not None else None,
        skill_package_hash=pkg.content_hash if pkg is not None else None,
        sandbox=sandbox,  # type: ignore[arg-type]
        seed=seed,
    )
    return Scheduler(parallel=1).run(specs)


def _states(res: EvalResult) -> dict[str, str]:
    return {t.task_id: t.state for t in res.trials}


def _leftovers() -> list[str]:
    return [c.name for c in dr.client().containers.list(all=True, filters={"label": dr.LABEL})]


def test_oracle_verdicts_agree_with_the_local_runner_on_every_bundled_task(
    tmp_path: Path,
) -> None:
    local = _run(BUNDLED, ORACLE, tmp_path / "local", sandbox="auto")
    docker = _run(BUNDLED, ORACLE, tmp_path / "docker", sandbox="docker")
    assert len(BUNDLED) >= 20
    assert _states(docker) == _states(local)
    assert set(_states(docker).values()) == {"passed"}
    assert docker.errors == 0
    assert _leftovers() == []


def test_noop_verdicts_agree_too(tmp_path: Path) -> None:
    noop = AgentSpec(kind="noop", role="student")
    few = BUNDLED[::4]
    local = _run(few, noop, tmp_path / "local", sandbox="auto")
    docker = _run(few, noop, tmp_path / "docker", sandbox="docker")
    assert _states(docker) == _states(local) == dict.fromkeys(few, "failed")


@pytest.mark.parametrize("with_skill", [True, False])
def test_sim_student_trials_agree_with_the_local_runner(tmp_path: Path, with_skill: bool) -> None:
    agent = AgentSpec(
        kind="builtin",
        role="student",
        route_name="sim/student",
        route=resolve_route("sim/student"),
        max_steps=DEFAULT_MAX_STEPS["student"],
    )
    pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger") if with_skill else None
    local = _run(SIM_TASKS, agent, tmp_path / "local", sandbox="auto", pkg=pkg)
    docker = _run(SIM_TASKS, agent, tmp_path / "docker", sandbox="docker", pkg=pkg)
    assert _states(docker) == _states(local)
    assert set(_states(docker).values()) <= {"passed", "failed"}
    # the same agent did the same things: same tool calls in the same order
    for lo, do in zip(local.trials, docker.trials, strict=True):
        lrec = RunRecord.model_validate_json((Path(lo.trial_dir or "") / "record.json").read_text())
        drec = RunRecord.model_validate_json((Path(do.trial_dir or "") / "record.json").read_text())
        assert [e.kind for e in drec.events] == [e.kind for e in lrec.events], lo.task_id
        assert drec.runtime.runner is not None and drec.runtime.runner.startswith("docker")
        assert drec.runtime.sandbox == "docker"
        assert (drec.runtime.environment_image or "").startswith(dr.IMAGE_PREFIX)


def _spec(state: Path, task_id: str = "py-window-end", **kw: object) -> TrialSpec:
    return plan([_task(task_id)], ORACLE, repeats=1, state_dir=state, sandbox="docker", **kw)[0]  # type: ignore[arg-type]


def test_agent_container_limits_mounts_and_cleanup(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    runner = dr.DockerRunner()
    ws = tmp_path / "ws"
    runner.prepare_workspace(spec, ws)
    assert (ws / ".git").is_dir() and not (ws / "Dockerfile").exists()
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "SKILL.md").write_text("skill\n")
    logs = tmp_path / "logs"
    logs.mkdir()
    shell, warnings = runner.open_shell(
        spec,
        [Mount(ws, "/app", True), Mount(logs, "/logs/agent", True), Mount(skill, "/skills/s")],
        phase="agent",
    )
    assert warnings == [] and shell.kind == "docker"
    (c,) = runner._containers
    c.reload()
    host = c.attrs["HostConfig"]
    env = spec.task.config.environment
    assert host["NetworkMode"] == "none"
    assert host["NanoCpus"] == int(env.cpus * 1e9)
    assert host["Memory"] == env.memory_mb * 1024 * 1024
    out = shell.run(
        "cat /sys/fs/cgroup/memory/memory.limit_in_bytes 2>/dev/null || cat /sys/fs/cgroup/memory.max",
        timeout=10,
    )
    assert out.output.strip() == str(env.memory_mb * 1024 * 1024)
    assert shell.run("pwd && ls", timeout=10).output.startswith("/app\n")
    assert shell.run("test -e /tests || test -e /solution", timeout=10).exit_code == 1
    ro = shell.run("echo x > /skills/s/SKILL.md", timeout=10)
    assert ro.exit_code != 0 and "Read-only" in ro.output
    assert shell.run("echo hi > /app/new.txt", timeout=10).exit_code == 0
    assert (ws / "new.txt").read_text() == "hi\n"
    net = shell.run(
        "python3 -c 'import socket; socket.create_connection((\"1.1.1.1\", 53), 3)'", timeout=10
    )
    assert net.exit_code != 0
    runner._release_all()
    assert runner._containers == []
    assert _leftovers() == []


def test_command_timeout_kills_the_process_tree(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    runner = dr.DockerRunner()
    ws = tmp_path / "ws"
    runner.prepare_workspace(spec, ws)
    shell, _ = runner.open_shell(spec, [Mount(ws, "/app", True)], phase="agent")
    try:
        start = time.monotonic()
        out = shell.run("echo before; sleep 30; echo after", timeout=1.5)
        assert out.timed_out and out.exit_code == 124
        assert "before" in out.output and "after" not in out.output
        assert time.monotonic() - start < 10
        assert "sleep 30" not in shell.run("ps -eo args", timeout=10).output
        quick = shell.run("exit 124", timeout=30)  # a real exit code 124 is not a timeout
        assert not quick.timed_out
    finally:
        runner._release_all()


def test_failing_trial_still_removes_its_containers(tmp_path: Path) -> None:
    spec = _spec(tmp_path, image="skillci-does-not-exist:1")
    with pytest.raises(RunnerError, match="not in the engine"):
        dr.DockerRunner().run_trial(spec, tmp_path / "trial", "k" * 64)
    res = Scheduler().run([spec])
    assert res.errors == 1 and "not in the engine" in (res.trials[0].error or "")
    assert _leftovers() == []


def test_image_is_built_once_and_reused(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    tag = dr.resolve_image(spec)
    img = dr.client().images.get(tag)
    assert tag.startswith(f"{dr.IMAGE_PREFIX}/py-window-end:")
    assert dr.resolve_image(spec) == tag
    assert dr.client().images.get(tag).id == img.id
    assert img.labels.get("skillci.task") == "py-window-end"


def test_remote_engines_are_refused_up_front(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://203.0.113.1:2375")
    dr.client.cache_clear()
    try:
        why = dr.docker_available()
        assert why is not None and "remote engine" in why
    finally:
        monkeypatch.undo()
        dr.client.cache_clear()


def test_raw_task_attempts_under_the_docker_runner(tmp_path: Path) -> None:
    from skillci.flows.rawtask import RawTaskRequest, run_raw_task

    task = TASKS / "py-window-end"
    req = RawTaskRequest(
        harness="oracle",
        model="none",
        task=task,
        skill_source=None,
        output=tmp_path / "out",
        repeat=2,
        max_parallel=2,
        runner="docker",
    )
    res = run_raw_task(req)
    assert [a.name for a in res.attempts] == ["test-001", "test-002"] and res.errors == {}
    assert all(a.passed and a.runner == "docker" for a in res.attempts)
    tag = dr.resolve_image(_spec(tmp_path))
    pinned = run_raw_task(
        req.model_copy(update={"image": tag, "output": tmp_path / "pinned", "repeat": 1})
    )
    assert pinned.attempts[0].passed
    rec = RunRecord.model_validate_json(
        (tmp_path / "pinned" / "test-001" / "result.json").read_text()
    )
    assert rec.runtime.environment_image == tag
    assert _leftovers() == []
