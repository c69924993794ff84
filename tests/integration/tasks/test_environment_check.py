"""The environment check on real tasks: the 16 SkillsBench tasks (tests/fixtures, upstream
files unchanged) and skillci's bundled tasks, against fixed runner capabilities."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.runners.capabilities import docker_capabilities, local_capabilities
from skillci.tasks.environment import check_environment, requirements
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from tests.unit.tasks.test_environment import LOCAL as UNIT_LOCAL

ROOT = Path(__file__).resolve().parents[3]
SKILLSBENCH = ROOT / "tests" / "fixtures" / "skillsbench-tasks"
BUNDLED = ROOT / "evals" / "tasks"
#: A roomy machine with the usual tools and skillci's Python packages: what is left is the
#: task's environment itself, not this machine's size.
LOCAL = UNIT_LOCAL.model_copy(
    update={
        "cpus": 64,
        "memory_mb": 262144,
        "tools": ["curl", "git", "jq", "make", "pip", "python3", "wget"],
        "python": {"pytest": "8.3.3", "requests": "2.32.3", "pyyaml": "6.0.3"},
    }
)
#: A roomy engine (``docker info`` as the Docker runner reads it), no GPUs.
DOCKER = docker_capabilities({"NCPU": 64, "MemTotal": 256 * 2**30, "Runtimes": {"runc": {}}})

#: task -> one reason the local runner cannot honour it, read off its Dockerfile/task.toml.
LOCAL_REASONS = {
    "3d-scan-calc": "working directory /root",
    "earthquake-location-determination": "Python package scipy (the image installs it) is missing",
    "fix-build-google-auto": "FROM ubuntu:20.04 AS final (a multi-stage build)",
    "fix-erlang-ssh-cve": "working directory /app/workspace",
    "flood-risk-analysis": "RUN mkdir -p /root/output",
    "gh-repo-analytics": "the environment is a docker-compose file",
    "hvac-control": "COPY hvac_simulator.py /root/hvac_simulator.py",
    "jax-computing-basics": "Python package jax (the image installs it) is missing",
    "mhc-layer-impl": "Python package torch (the image installs it) is missing",
    "pg-essay-to-audiobook": "tools the image installs are missing: ffmpeg",
    "quantum-numerical-simulation": "RUN pip install --no-cache-dir --no-build-isolation qutip==4.7.0",
    "r2r-mpc-control": "Python package numpy (the image installs it) is missing",
    "setup-fuzzing-py": "RUN bash /app/build_dataset.sh",
    "suricata-custom-exfil": "RUN dnf -y install",
    "syzkaller-ppdev-syzlang": "RUN git clone https://github.com/google/syzkaller.git",
    "virtualhome-agent-planning": "Python package bibtexparser (the image installs it) is missing",
}


def _tasks(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / "task.toml").is_file())


@pytest.mark.parametrize("task_dir", _tasks(SKILLSBENCH), ids=lambda p: p.name)
def test_the_local_runner_cannot_honour_a_skillsbench_task(task_dir: Path) -> None:
    task = load_task(task_dir, purpose=Purpose.inspect)
    check = check_environment(requirements(task), LOCAL)
    assert not check.supported
    assert any(LOCAL_REASONS[task.id] in r for r in check.reasons), check.reasons
    assert check.hint is not None and "--sandbox docker" in check.hint


def test_the_docker_runner_honours_every_skillsbench_task_but_the_compose_ones() -> None:
    """It mounts the workspace at the task's WORKDIR (/root, /home/travis, /app/workspace):
    only the multi-container tasks are left (design 250)."""
    reqs = {
        p.name: requirements(load_task(p, purpose=Purpose.inspect)) for p in _tasks(SKILLSBENCH)
    }
    checks = {name: check_environment(req, DOCKER) for name, req in reqs.items()}
    assert len(checks) == 16 == len(LOCAL_REASONS)
    not_ok = sorted(k for k, c in checks.items() if not c.supported)
    assert not_ok == ["gh-repo-analytics", "mhc-layer-impl", "pg-essay-to-audiobook"]
    for name in not_ok:
        assert checks[name].reasons[0].startswith("the environment is a docker-compose file")
    assert {reqs[k].workdir for k, c in checks.items() if c.supported} == {
        "/app",
        "/app/workspace",
        "/home/travis",
        "/root",
    }


def test_a_small_engine_refuses_the_tasks_that_need_more_memory_or_cpus() -> None:
    """What `docker info` reports decides: quantum-numerical-simulation asks 10240 MB, 8 cpus."""
    small = docker_capabilities({"NCPU": 2, "MemTotal": 8 * 2**30})
    req = requirements(
        load_task(SKILLSBENCH / "quantum-numerical-simulation", purpose=Purpose.inspect)
    )
    assert check_environment(req, small).reasons == [
        "cpus = 8 (the Docker engine has 2)",
        "memory_mb = 10240 (the Docker engine has 8192)",
    ]


def test_every_bundled_task_runs_locally_on_this_machine() -> None:
    """Their Dockerfiles only install git and pytest and make the git baseline: the local
    runner (this machine's git, skillci's pytest) reproduces that."""
    tasks = _tasks(BUNDLED)
    assert len(tasks) >= 20
    for p in tasks:
        req = requirements(load_task(p, purpose=Purpose.inspect))
        check = check_environment(req, local_capabilities(req))
        assert check.supported, (p.name, check.reasons)
        assert req.tools == ["git"] and [x.name for x in req.python] == ["pytest"]


def test_the_dockerfile_only_fixture_needs_an_image_build() -> None:
    task = load_task(
        ROOT / "tests" / "fixtures" / "envcheck" / "dockerfile-only", purpose=Purpose.inspect
    )
    req = requirements(task)
    local = check_environment(req, local_capabilities(req))
    assert not local.supported
    assert local.reasons[0] == "Dockerfile step not reproduced: RUN mkdir -p /opt/envcheck"
    assert check_environment(req, docker_capabilities()).supported
