"""Issue 15's evidence: an oracle trial of a Dockerfile-only task is environment_unsupported
on the local runner and passes on the Docker runner (a real engine: ``.ci/run`` starts one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.runners.base import AgentSpec, plan
from skillci.runners.sandbox import bwrap_path
from skillci.runners.scheduler import Scheduler
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.trace.store import TraceStore

ROOT = Path(__file__).resolve().parents[3]
DOCKERFILE_ONLY = ROOT / "tests" / "fixtures" / "envcheck" / "dockerfile-only"
ROOT_WORKDIR = ROOT / "tests" / "fixtures" / "envcheck" / "root-workdir"
ORACLE = AgentSpec(kind="oracle", role="oracle")

pytestmark = pytest.mark.usefixtures("docker_engine")


@pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is not usable here")
def test_dockerfile_only_task_is_unsupported_locally_and_passes_in_docker(
    tmp_path: Path,
) -> None:
    task = load_task(DOCKERFILE_ONLY, purpose=Purpose.optimize)
    store = TraceStore(tmp_path / "home")
    results = {
        sandbox: Scheduler(store=store).run(
            plan([task], ORACLE, repeats=1, state_dir=tmp_path / "home", sandbox=sandbox)  # type: ignore[arg-type]
        )
        for sandbox in ("auto", "docker")
    }
    [local] = results["auto"].trials
    [docker] = results["docker"].trials
    assert local.state == "environment_unsupported", local
    assert docker.state == "passed" and docker.reward == 1.0, docker
    rec = store.get(docker.run_id or "")
    assert rec.runtime.sandbox == "docker"
    assert (rec.runtime.environment_image or "").startswith("skillci-task/dockerfile-only:")


@pytest.mark.parametrize(
    ("fixture", "old", "new", "verdict"),
    [
        (DOCKERFILE_ONLY, '= "built-by-the-image"', '= "something else"', ("failed", 0.0)),
        # workdir /root (design 250): the same check, reworded, passes only if the agent's
        # /root/answer.txt is back in /root and the verifier runs there
        (ROOT_WORKDIR, "set -u", "set -u  # reworded", ("passed", 1.0)),
    ],
    ids=["app", "root"],
)
def test_regrade_reruns_the_verifier_in_the_tasks_image(
    tmp_path: Path, fixture: Path, old: str, new: str, verdict: tuple[str, float]
) -> None:
    """The Docker trial keeps the agent's files; after the tests change, regrade rebuilds the
    image's working directory, puts them back and runs the new tests in a fresh container."""
    import shutil

    from skillci.flows.regrade import regrade

    root = tmp_path / "repo"
    task_dir = root / "evals" / "tasks" / fixture.name
    shutil.copytree(fixture, task_dir)
    home = tmp_path / "home"
    task = load_task(task_dir, purpose=Purpose.optimize)
    specs = plan([task], ORACLE, repeats=1, state_dir=home, sandbox="docker")
    [first] = Scheduler(store=TraceStore(home)).run(specs).trials
    assert first.state == "passed", first
    test_sh = task_dir / "tests" / "test.sh"
    assert old in test_sh.read_text()
    test_sh.write_text(test_sh.read_text().replace(old, new))
    res = regrade(root, home, suite=None, tasks=[fixture.name], dry_run=False)
    [row] = res.trials
    assert (row.old_state, row.new_state, row.new_reward) == ("passed", *verdict), row
    rec = TraceStore(home).get(row.new_run_id or "")
    assert rec.metadata["regraded_from"] == first.run_id
    assert rec.runtime.sandbox == "docker"


def test_an_image_the_engine_lacks_is_environment_unsupported_not_an_error(
    tmp_path: Path,
) -> None:
    """skillci pulls nothing: a base image the engine does not have is a stated reason
    before anything runs (design 251), like a network the engine cannot give."""
    import shutil

    task_dir = tmp_path / "absent-base"
    shutil.copytree(DOCKERFILE_ONLY, task_dir)
    dockerfile = task_dir / "environment" / "Dockerfile"
    dockerfile.write_text(
        dockerfile.read_text().replace("FROM python:3.11-slim", "FROM skillci-absent/base:1")
    )
    task = load_task(task_dir, purpose=Purpose.optimize)
    store = TraceStore(tmp_path / "home")
    specs = plan([task], ORACLE, repeats=1, state_dir=tmp_path / "home", sandbox="docker")
    [trial] = Scheduler(store=store).run(specs).trials
    assert trial.state == "environment_unsupported", trial
    reasons = store.get(trial.run_id or "").evaluation.details["environment"]["reasons"]
    assert reasons[0].startswith("image skillci-absent/base:1 is not in the Docker engine")
