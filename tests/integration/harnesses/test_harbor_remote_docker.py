"""RemoteTrials on Harbor's real docker environment (the engine scripts/ci_docker.sh starts,
with the Compose v2 plugin scripts/ci_compose.sh installs): a bundled task's oracle passes and
its no-op agent fails, each as one ``harbor run -e docker`` job, read back through Harbor's
importer and kept in the trial cache and the trace store; the same trials again submit
nothing; and the trial's container has no network but loopback (issue 36, designs 409, 413).

An engine whose docker CLI has no ``docker compose`` skips these tests with that reason, or
fails them under SKILLCI_REQUIRE_SERVICES (as .ci/run sets after starting the engine)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from skillci.runners.base import AgentSpec
from skillci.runners.harbor_remote import HarborEnvironment
from skillci.runners.remote import RemoteLimits, RemoteTrials
from skillci.runners.trialdir import RECORD, read_complete, trial_dir
from skillci.tasks.loader import load_task
from skillci.tasks.models import Task
from skillci.trace.models import EvalState, RunRecord
from skillci.trace.store import TraceStore

ROOT = Path(__file__).resolve().parents[3]
ORACLE = AgentSpec(kind="oracle", role="oracle")
NOOP = AgentSpec(kind="noop", role="student")


def _run(
    state: Path, harbor: str, agent: AgentSpec, tasks: list[Task]
) -> tuple[RemoteTrials, list[RunRecord]]:
    env = HarborEnvironment("docker", state.parent / "harbor", concurrency=2, harbor=harbor,
                            timeout=600)  # fmt: skip
    src = RemoteTrials(env, state, RemoteLimits(concurrency=2, retries=0), rounds=1)
    try:
        recs = src.run(agent, tasks, None, None, repeats=1, suite="bench")
        src.close()
    finally:
        env.close()
    return src, recs


@pytest.mark.docker
# slow: each Harbor docker job is ~35-45 s of image build, compose up, trial and teardown
@pytest.mark.slow
def test_oracle_passes_and_noop_fails_on_harbors_docker_environment_kept_and_reused(
    harbor: str, compose: None, tmp_path: Path
) -> None:
    task = load_task(ROOT / "evals" / "tasks" / "cfg-bool-flag")
    state = tmp_path / ".skillci"
    runs = {kind: _run(state, harbor, agent, [task]) for kind, agent in
            (("oracle", ORACLE), ("noop", NOOP))}  # fmt: skip
    expect = {"oracle": EvalState.passed, "noop": EvalState.failed}
    store = TraceStore(state)
    for kind, (src, recs) in runs.items():
        assert src.errors == [] and src.stats.submitted == 1 and src.cached == 0
        (rec,) = recs
        stored = store.get(rec.run_id)
        assert stored.task_id == "cfg-bool-flag" and stored.run_id.startswith("harbor-")
        assert stored.evaluation.state is expect[kind], stored.evaluation.verifier_output
        # the verifier's own checks, as it wrote them inside the container
        out = stored.evaluation.verifier_output or ""
        assert ("PASS hidden_tests" in out) == (kind == "oracle"), out
        assert "PASS no_unrelated_changes" in out  # the export left environment/ as it is
        assert stored.runtime.runner == "harbor" and stored.runtime.sandbox == "harbor:docker"
        assert stored.metadata["remote_environment"] == "harbor:docker"
        assert stored.trial_cache_key is not None
        assert read_complete(trial_dir(state, stored.trial_cache_key), stored.trial_cache_key)
    for kind, agent in (("oracle", ORACLE), ("noop", NOOP)):
        again, recs = _run(state, harbor, agent, [task])
        assert again.stats.submitted == 0 and again.cached == 1
        assert [r.run_id for r in recs] == [r.run_id for r in runs[kind][1]]


NET_SOLVE = """#!/usr/bin/env bash
set -euo pipefail
awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev | sort > /app/ifaces.txt
"""
NET_TEST = """#!/usr/bin/env bash
# reward 1 iff the agent's container and this one see no network interface but loopback
set -u
mkdir -p /logs/verifier
now=$(awk -F: 'NR > 2 { gsub(/ /, "", $1); print $1 }' /proc/net/dev | sort | tr '\\n' ' ')
seen=$(tr '\\n' ' ' < /app/ifaces.txt 2>/dev/null || echo missing)
echo "agent saw: $seen; verifier sees: $now"
if [ "$seen" = "lo " ] && [ "$now" = "lo " ]; then echo 1; else echo 0; fi > /logs/verifier/reward.txt
"""


@pytest.mark.docker
@pytest.mark.slow  # one Harbor docker job, ~35 s
def test_a_no_network_task_on_harbors_docker_environment_sees_only_loopback(
    harbor: str, compose: None, tmp_path: Path
) -> None:
    src_task = ROOT / "evals" / "tasks" / "cfg-bool-flag"
    root = tmp_path / "tasks" / "net-probe"
    shutil.copytree(src_task, root, ignore=shutil.ignore_patterns("solution", "tests"))
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text(NET_SOLVE)
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(NET_TEST)
    assert "allow_internet = false" in (root / "task.toml").read_text()
    _, (rec,) = _run(tmp_path / ".skillci", harbor, ORACLE, [load_task(root)])
    out = rec.evaluation.verifier_output or ""
    assert rec.evaluation.state is EvalState.passed, out
    assert "agent saw: lo ; verifier sees: lo" in out


def _shape(rec: RunRecord) -> list[tuple[object, ...]]:
    """What the agent did, step by step, without times: messages, tool calls, their results'
    exit codes, and skill loads."""
    out: list[tuple[object, ...]] = []
    for e in rec.events:
        if e.kind == "message":
            out.append(("message", e.role, e.content))
        elif e.kind == "tool_call":
            out.append(("tool_call", e.tool, e.arguments))
        elif e.kind == "tool_result":
            out.append(("tool_result", e.tool, e.exit_code, e.error))
        elif e.kind == "skill_load":
            out.append(("skill_load", e.path, e.on_demand, e.content_hash))
        else:
            out.append((e.kind,))
    return out


@pytest.mark.docker
@pytest.mark.slow  # one Harbor docker job (~45 s) and one local trial
def test_the_built_in_agent_on_harbors_docker_environment_records_what_it_records_locally(
    harbor: str, compose: None, tmp_path: Path
) -> None:
    """skillci's own loop as the student on Harbor (design 426): the loop runs here on
    ``sim/student`` (offline), its commands in Harbor's container, its skill at /skills; the
    record Harbor's importer brings back has the local trial's messages, tool calls and
    skill loads, and the same verdict."""
    from skillci.runners.scheduler import Scheduler
    from skillci.skill.package import SkillPackage
    from skillci.skill.render import render
    from tests.integration.runners.helpers import model_agent, specs

    pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
    agent = model_agent("student")
    (trial,) = Scheduler().run(specs(["cfg-bool-flag"], agent, tmp_path / "local", pkg=pkg)).trials
    assert trial.trial_dir is not None
    local = RunRecord.model_validate_json((Path(trial.trial_dir) / RECORD).read_text())
    task = load_task(ROOT / "evals" / "tasks" / "cfg-bool-flag")
    state = tmp_path / ".skillci"
    env = HarborEnvironment("docker", tmp_path / "harbor", concurrency=1, harbor=harbor,
                            timeout=600)  # fmt: skip
    src = RemoteTrials(env, state, RemoteLimits(concurrency=1, retries=0), rounds=1)
    try:
        (rec,) = src.run(agent, [task], render(pkg, "builtin"), pkg.content_hash, repeats=1,
                         suite="bench")  # fmt: skip
        src.close()
    finally:
        env.close()
    assert src.errors == [], src.errors
    assert rec.evaluation.state is local.evaluation.state is EvalState.passed
    assert rec.runtime.harness == "skillci-builtin" and rec.runtime.sandbox == "harbor:docker"
    assert rec.metadata["trajectory"] == "skillci"  # read from agent/skillci-run.json
    assert _shape(rec) == _shape(local)
    assert sum(e.kind == "skill_load" for e in rec.events) >= 2  # SKILL.md and on demand
    assert (rec.runtime.system_prompt_hash, rec.runtime.tool_schema_hash) == (
        local.runtime.system_prompt_hash, local.runtime.tool_schema_hash)  # fmt: skip
    assert rec.model.route == local.model.route == "sim/student"
    assert (rec.cost.model_calls, rec.cost.input_tokens) == (
        local.cost.model_calls, local.cost.input_tokens)  # fmt: skip
    assert rec.final_output == local.final_output
    # the model was called from this process: no key, no route, no token in the container's
    # view — Harbor's own record of the agent names only the shim and its loopback bridge
    config = rec.metadata["trial"]["config"]["agent"]
    assert config["import_path"].endswith("builtin_agent:SkillciBuiltinAgent")
    assert config["kwargs"]["bridge"].startswith("127.0.0.1:")
