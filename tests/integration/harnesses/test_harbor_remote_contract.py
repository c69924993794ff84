"""The exact ``harbor run`` skillci's remote Harbor environment makes for every environment it
names, against Harbor's own CLI parser, ``EnvironmentConfig`` model and credential preflight
(harbor_env_probe.py, in Harbor's venv); and a harness failure becoming an ``infra_error``
record. Nothing here starts a sandbox: no Docker, no cloud (issue 36, docs/design/409)."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path

import pytest

from skillci.runners import harbor as hb
from skillci.runners.base import AgentSpec, TrialSpec, plan
from skillci.runners.cliparse import script_python
from skillci.runners.harbor_remote import ENVIRONMENTS, HarborEnvironment
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.trace.models import EvalState

ROOT = Path(__file__).resolve().parents[3]
PROBE = Path(__file__).with_name("harbor_env_probe.py")
TASK = ROOT / "evals" / "tasks" / "cfg-bool-flag"


def _spec(tmp: Path, kind: str = "oracle", repeat: int = 1) -> TrialSpec:
    pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
    agent = AgentSpec(kind=kind, role="oracle" if kind == "oracle" else "student")
    return plan([load_task(TASK)], agent, repeats=repeat + 1, state_dir=tmp / ".skillci",
                skill=render(pkg, "builtin"), skill_package_hash=pkg.content_hash,
                suite="bench")[repeat]  # fmt: skip


def _probe(harbor: str, req: dict[str, object]) -> dict[str, object]:
    proc = subprocess.run([script_python(harbor), str(PROBE), json.dumps(req)],
                          capture_output=True, text=True, timeout=120, check=False)  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert isinstance(out, dict)
    return out


@pytest.mark.parametrize("name", sorted(ENVIRONMENTS))
def test_each_environments_harbor_run_is_what_harbors_models_accept(
    name: str, harbor: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for group in ENVIRONMENTS[name][:1]:
        for var in group:
            monkeypatch.setenv(var, "dummy")
    env = HarborEnvironment(name, tmp_path / "work", concurrency=2, harbor=harbor,
                            env_kwargs={"region": "eu"})  # fmt: skip
    try:
        spec = _spec(tmp_path)
        run = env.run_spec(spec, 1, tmp_path / "run")
        argv = run.argv(harbor)
        parsed = hb.parse_check(harbor, argv)
        # one trial per job: RemoteTrials owns concurrency, retries and the budget
        assert parsed["environment"] == name and parsed["agent_name"] == "oracle"
        assert (parsed["n_concurrent_trials"], parsed["n_attempts"]) == (1, 1)
        assert parsed["jobs_dir"] == str(tmp_path / "run/jobs")
        if name == "docker":  # the no-network task goes as an export plus a Compose overlay
            assert parsed["path"] == str(tmp_path / "run" / "task" / TASK.name)
            assert parsed["extra_docker_compose"] == [
                str(tmp_path / "run" / "compose-overlay.json")
            ]
        else:
            assert parsed["path"] == str(TASK) and not parsed["extra_docker_compose"]
        assert not parsed["skills"]  # Harbor's oracle refuses --skills
        assert "-m" not in argv  # the oracle takes no model
        kwargs = [str(k) for k in parsed["environment_kwargs"]]  # type: ignore[attr-defined]
        assert kwargs == ["region=eu"]  # never skillci's bwrap kwargs off this machine
        out = _probe(harbor, {"environment": parsed["environment"], "kwargs": kwargs,
                              "credentials": [list(g) for g in ENVIRONMENTS[name]]})  # fmt: skip
    finally:
        env.close()
    config = out["config"]
    assert isinstance(config, dict)
    assert config["type"] == name and config["import_path"] is None
    assert config["kwargs"] == {"region": "eu"}
    if name == "docker":  # no credentials; its preflight asks the engine (not here)
        return
    # Harbor's own preflight refuses without the credentials skillci names, and accepts
    # each group skillci lists alone; a group half set is refused
    without = out["without"]
    assert isinstance(without, str)
    for group in ENVIRONMENTS[name]:
        for var in group:
            assert var in without, (var, without)
    assert out["with"] == [None] * len(ENVIRONMENTS[name])
    assert all(isinstance(p, str) for p in out["partial"])  # type: ignore[attr-defined]


def test_a_real_agent_runs_as_harbors_agent_of_the_same_name_with_the_routes_model(
    harbor: str, tmp_path: Path
) -> None:
    from skillci.providers.routes import ModelRoute

    env = HarborEnvironment("docker", tmp_path / "work", harbor=harbor)
    try:
        spec = _spec(tmp_path, "oracle").model_copy(
            update={
                "agent": AgentSpec(
                    kind="claude-code",
                    role="student",
                    route_name="r",
                    route=ModelRoute(model="anthropic/claude-x"),
                )
            }
        )
        parsed = hb.parse_check(harbor, env.run_spec(spec, 1, tmp_path / "run").argv(harbor))
        assert parsed["agent_name"] == "claude-code"
        assert parsed["model_names"] == ["anthropic/claude-x"]
        assert parsed["skills"] == [str(tmp_path / "run" / "skills" / "repo-debugger")]
        assert (tmp_path / "run" / "skills" / "repo-debugger" / "SKILL.md").is_file()
    finally:
        env.close()


def test_a_harness_failure_is_an_infra_error_record_and_only_unstarted_attempts_cancel(
    harbor: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Harbor run against an engine that is not there: it exits without a trial dir."""
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    env = HarborEnvironment("docker", tmp_path / "work", concurrency=1, harbor=harbor,
                            timeout=120)  # fmt: skip
    try:
        spec = _spec(tmp_path, repeat=1)
        first, queued = env.submit(spec, 2), env.submit(spec, 3)
        # the one thread runs the first; the second waits: not started, so cancelled
        assert env.cancel(queued) and queued.cancelled()
        while not first.running() and not first.done():
            time.sleep(0.01)
        assert not env.cancel(first)  # started: it runs to its end and brings its record
        rec = first.result(timeout=180)
    finally:
        env.close()
    assert len(list((tmp_path / "work").iterdir())) == 1  # the cancelled one never ran
    assert rec.evaluation.state is EvalState.infra_error and not rec.passed
    assert rec.evaluation.state.is_error  # RemoteTrials retries it; the gate never counts it
    assert (rec.task_id, rec.repeat_index, rec.suite) == ("cfg-bool-flag", 1, "bench")
    assert rec.runtime.runner == "harbor" and rec.runtime.sandbox == "harbor:docker"
    assert "harbor exited" in rec.metadata["harness_error"]
    assert (
        rec.runtime.skill is not None and rec.runtime.skill.content_hash == spec.skill_package_hash
    )


FACTORY_PROBE = """
import json, sys
from pathlib import Path
from harbor.agents.factory import AgentFactory
from harbor.models.trial.config import AgentConfig
req = json.loads(sys.argv[1])
out = {}
for label, kwargs in (("given", req["kwargs"]), ("no_token", {"bridge": "127.0.0.1:1"})):
    cfg = AgentConfig(import_path=req["import_path"], model_name=req["model"], kwargs=kwargs)
    try:
        agent = AgentFactory.create_agent_from_config(cfg, logs_dir=Path(req["logs"]))
    except ValueError as exc:
        out[label] = str(exc)
        continue
    out[label] = {"name": agent.name(), "version": agent.version(),
                  "info": agent.to_agent_info().model_dump(mode="json"),
                  "skills_capability": agent.capabilities.skills}
print(json.dumps(out))
"""


def test_the_built_in_agent_runs_by_import_path_with_the_bridge_and_harbor_constructs_it(
    harbor: str, tmp_path: Path
) -> None:
    """skillci's own loop as the student (design 426): ``--agent-import-path`` of the shim,
    ``-m`` the route's name, the bridge and the skills as ``--ak``; Harbor's factory, in
    Harbor's venv with the PYTHONPATH skillci gives it, imports and builds that class."""
    import os

    from skillci.runners.base import builtin_agent
    from skillci.runners.harbor_builtin import IMPORT_PATH, AgentBridge

    env = HarborEnvironment("docker", tmp_path / "work", harbor=harbor)
    spec = _spec(tmp_path, "oracle").model_copy(update={"agent": builtin_agent("sim/student")})
    bridge = AgentBridge(spec)
    try:
        run = env.run_spec(spec, 1, tmp_path / "run", bridge)
        parsed = hb.parse_check(harbor, run.argv(harbor))
    finally:
        bridge.close()
        env.close()
    assert parsed["agent_import_path"] == IMPORT_PATH and parsed["agent_name"] is None
    assert parsed["model_names"] == ["sim/student"]
    assert not parsed["skills"]  # the shim installs them at /skills/<name>, as locally
    skills = tmp_path / "run" / "skills"
    assert (skills / "repo-debugger" / "SKILL.md").is_file()
    kwargs = dict(str(kv).split("=", 1) for kv in parsed["agent_kwargs"])  # type: ignore[attr-defined]
    assert kwargs == {"bridge": bridge.address, "token": bridge.token,
                      "skills": str(skills), "version": kwargs["version"]}  # fmt: skip
    assert kwargs["bridge"].startswith("127.0.0.1:")  # loopback only
    assert run.needs_skillci  # Harbor's Python must import skillci's shim
    pythonpath = hb.pythonpath_for_env(hb.pythonpath_dir())
    req = {"import_path": IMPORT_PATH, "model": "sim/student", "kwargs": kwargs,
           "logs": str(tmp_path / "logs")}  # fmt: skip
    proc = subprocess.run(
        [script_python(harbor), "-c", FACTORY_PROBE, json.dumps(req)],
        capture_output=True, text=True, timeout=120, check=False,
        env={**os.environ, "PYTHONPATH": str(pythonpath), "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    given = out["given"]
    assert given["name"] == "skillci-builtin" and given["version"] == kwargs["version"]
    assert given["info"]["model_info"]["name"] == "sim/student"
    assert given["skills_capability"] is False  # so Harbor's --skills is never passed to it
    assert "needs --ak bridge=HOST:PORT and --ak token=T" in out["no_token"]
