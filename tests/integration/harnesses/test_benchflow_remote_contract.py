"""The exact ``bench eval run`` skillci's BenchFlow environment makes for each agent it runs,
against BenchFlow's own CLI parser and agent registry (in BenchFlow's venv), and the refusals
(exit 2, one line) of ``--runner benchflow`` on the trial commands. Nothing here starts a
sandbox: no Docker (issue 31, docs/design/431)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from skillci.runners import benchflow as bf
from skillci.runners.base import AgentSpec, TrialSpec, plan
from skillci.runners.benchflow_remote import NOOP_SOLVE, REAL_AGENTS, bench_run
from skillci.runners.cliparse import script_python
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "evals" / "tasks" / "cfg-bool-flag"


def _spec(tmp: Path, agent: AgentSpec) -> TrialSpec:
    pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
    return plan([load_task(TASK)], agent, repeats=1, state_dir=tmp / ".skillci",
                skill=render(pkg, "builtin"), skill_package_hash=pkg.content_hash,
                suite="bench")[0]  # fmt: skip


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("kind", ["oracle", "noop"])
def test_oracle_and_noop_run_as_benchflows_oracle_on_an_exported_task_without_model_or_skill(
    kind: str, bench: str, tmp_path: Path
) -> None:
    spec = _spec(tmp_path, AgentSpec(kind=kind, role="oracle" if kind == "oracle" else "student"))
    run = bench_run(spec, tmp_path / "run", image="skillci-task/cfg-bool-flag:abc")
    params = bf.parse_check(bench, run.argv(bench))
    assert params["agent"] == "oracle" and params["model"] is None
    assert params["tasks_dir"] == str(tmp_path / "run" / "tasks")
    assert params["include"] == ["cfg-bool-flag"] and params["concurrency"] == 1
    assert params["skill_mode"] == "no-skill" and params["skills_dir"] is None
    assert params["environment"] == "docker"  # --sandbox, as BenchFlow names it
    override = json.loads(str(params["config_override"]))
    assert override == {"sandbox": {"docker_image": "skillci-task/cfg-bool-flag:abc"}}
    exported, task = _tree(tmp_path / "run" / "tasks" / "cfg-bool-flag"), _tree(TASK)
    if kind == "oracle":
        assert exported == task
    else:  # the same task, but its solution does nothing
        assert exported.pop("solution/solve.sh") == NOOP_SOLVE.encode()
        assert exported == {k: v for k, v in task.items() if not k.startswith("solution/")}


def test_a_real_agent_runs_as_the_acp_agent_benchflow_registers_with_the_routes_model(
    bench: str, tmp_path: Path
) -> None:
    from skillci.providers.routes import ModelRoute

    agent = AgentSpec(kind="claude-code", role="student", route_name="r",
                      route=ModelRoute(model="anthropic/claude-x"))  # fmt: skip
    run = bench_run(_spec(tmp_path, agent), tmp_path / "run", image=None)
    params = bf.parse_check(bench, run.argv(bench))
    assert params["agent"] == "claude-agent-acp" and params["model"] == "anthropic/claude-x"
    assert params["skill_mode"] == "with-skill"
    assert params["skills_dir"] == str(tmp_path / "run" / "skills")
    assert (tmp_path / "run" / "skills" / "repo-debugger" / "SKILL.md").is_file()
    # every name skillci maps to is an agent of BenchFlow's own registry
    proc = subprocess.run(
        [script_python(bench), "-c",
         "import json; from benchflow.agents.registry import AGENTS; print(json.dumps(sorted(AGENTS)))"],
        capture_output=True, text=True, timeout=120, check=True,
        env={**os.environ, "BENCHFLOW_AGENTS_SOURCE": "off"},
    )  # fmt: skip
    registered = set(json.loads(proc.stdout.strip().splitlines()[-1]))
    assert set(REAL_AGENTS.values()) <= registered, registered


def test_a_baked_agent_runs_on_benchflows_provider_for_skillcis_gateway_with_a_network(
    bench: str, tmp_path: Path
) -> None:
    """OpenCode baked into the image (design 436): the model is BenchFlow's ``vllm``
    provider (an OpenAI-compatible URL the caller names) at skillci's gateway, and the
    sandbox has a network so the agent reaches BenchFlow's LiteLLM proxy on the host; the
    agent's install command is BenchFlow's own, which the image's offline npm satisfies."""
    from skillci.providers.routes import ModelRoute
    from skillci.runners.benchflow_agents import LAYERS, NODE_PREFIX

    agent = AgentSpec(kind="opencode", role="student", route_name="scripted",
                      route=ModelRoute(model="openai/scripted"))  # fmt: skip
    run = bench_run(_spec(tmp_path, agent), tmp_path / "run", image="img:run",
                    gateway=("http://127.0.0.1:4321", "skillci-gw-t"))  # fmt: skip
    params = bf.parse_check(bench, run.argv(bench))
    assert params["agent"] == "opencode" and params["model"] == "vllm/scripted"
    assert sorted(params["agent_env"]) == [  # type: ignore[arg-type]
        "BENCHFLOW_PROVIDER_API_KEY=skillci-gw-t",
        "BENCHFLOW_PROVIDER_BASE_URL=http://127.0.0.1:4321/v1",
    ]
    override = json.loads(str(params["config_override"]))
    assert override == {"sandbox": {"allow_internet": True, "docker_image": "img:run",
                                    "network_mode": "public"}}  # fmt: skip
    # BenchFlow's install command of the agent still names what the layer provides
    proc = subprocess.run(
        [script_python(bench), "-c",
         "from benchflow.agents.registry import AGENT_INSTALLERS as A, AGENTS as G; "
         "import sys; print(A[sys.argv[1]]); print(G[sys.argv[1]].launch_cmd)", "opencode"],
        capture_output=True, text=True, timeout=120, check=True,
        env={**os.environ, "BENCHFLOW_AGENTS_SOURCE": "off"},
    )  # fmt: skip
    install = proc.stdout
    layer = LAYERS["opencode"]
    assert (
        'if [ ! -x "$BF_NODE_DIR/bin/node" ]' in install and f"BF_NODE_DIR={NODE_PREFIX}" in install
    )
    assert f"{NODE_PREFIX}/bin/npm install -g --prefix /opt/benchflow/js-agents " in install
    assert (
        f"{layer.package}@" in install and f"/opt/benchflow/js-agents/bin/{layer.binary}" in install
    )


@pytest.mark.parametrize("agent", ["claude-agent-acp", "codex-acp"])
def test_benchflow_installs_the_node_agents_skillci_bakes_at_their_pins(
    agent: str, bench: str
) -> None:
    """Claude Code's and Codex's adapters (design 440): BenchFlow's install command asks
    for the package and pin the layer holds (a new BenchFlow pin fails here, not offline in
    the sandbox's npm), runs it with BenchFlow's node from the prefix's bin, and the model
    reaches the agent through BenchFlow's env mapping of the gateway's URL and token."""
    from skillci.runners.benchflow_agents import LAYERS

    layer = LAYERS[agent]
    proc = subprocess.run(
        [script_python(bench), "-c",
         "import sys; from benchflow.agents.registry import AGENTS as G; a = G[sys.argv[1]]; "
         "print(a.install_cmd); print(sorted(a.env_mapping))", agent],
        capture_output=True, text=True, timeout=120, check=True,
        env={**os.environ, "BENCHFLOW_AGENTS_SOURCE": "off"},
    )  # fmt: skip
    assert f" {layer.package}@{layer.pin} " in proc.stdout
    assert (
        f"exec /opt/benchflow/node/bin/node /opt/benchflow/js-agents/bin/{layer.binary}"
        in proc.stdout
    )
    assert "'BENCHFLOW_PROVIDER_API_KEY', 'BENCHFLOW_PROVIDER_BASE_URL'" in proc.stdout


def _skillci(tmp: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "skillci", "eval", "run", "--task", str(TASK), "--home",
         str(tmp / ".skillci"), "--runner", "benchflow", *args],
        capture_output=True, text=True, timeout=120, check=False, cwd=tmp,
        env={**os.environ, **env},
    )  # fmt: skip


@pytest.mark.parametrize(
    ("args", "env", "said"),
    [
        # the engine is absent: no bench (checked before Docker)
        (["--agent", "oracle"], {"SKILLCI_BENCH": "/nonexistent/bench"},
         "--runner benchflow: BenchFlow's `bench` not found"),
        (["--agent", "builtin", "--model", "sim/student"], {},
         "--runner benchflow cannot run agent 'builtin'"),
        (["--agent", "oracle", "--env", "modal"], {}, "unknown BenchFlow environment 'modal'"),
        (["--agent", "oracle", "--harbor", "/x/harbor"], {}, "--harbor is Harbor's executable: --runner benchflow does not take it"),
    ],
)  # fmt: skip
def test_runner_benchflow_is_refused_with_exit_2_and_one_line_where_it_cannot_run(
    args: list[str], env: dict[str, str], said: str, tmp_path: Path
) -> None:
    proc = _skillci(tmp_path, *args, **env)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and said in lines[0] and "(hint: " in lines[0], proc.stderr
    assert not (tmp_path / ".skillci" / "benchflow-jobs").exists()  # nothing ran
