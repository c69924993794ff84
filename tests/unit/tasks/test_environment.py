"""The environment check's Dockerfile reading and its decision (skillci.tasks.environment)."""

from __future__ import annotations

from skillci.tasks.environment import (
    EnvRequirements,
    RunnerCapabilities,
    check_environment,
    dockerfile_requirements,
    summary,
)

LOCAL = RunnerCapabilities(
    runner="local",
    builds_images=False,
    workdirs=["/app"],
    network_closed=True,
    network_open=True,
    cpus=4,
    memory_mb=8192,
    tools=["git", "python3"],
    python={"pytest": "8.3.3"},
)
DOCKER = RunnerCapabilities(
    runner="docker", builds_images=True, workdirs=["/app"], network_closed=True, network_open=True
)


def _req(dockerfile: str, **over: object) -> EnvRequirements:
    return EnvRequirements(
        task_id="t", dockerfile=True, **{**dockerfile_requirements(dockerfile), **over}
    )  # type: ignore[arg-type]


def test_steps_the_local_runner_reproduces_are_not_reasons() -> None:
    req = _req(
        "FROM python:3.11-slim\nWORKDIR /app\nCOPY . /app\n"
        "RUN pip install --no-cache-dir pytest==8.3.3 \\\n"
        " && apt-get update && apt-get install -y --no-install-recommends git \\\n"
        " && rm -rf /var/lib/apt/lists/*\n"
        "RUN rm -f /app/Dockerfile && git init -q && git add -A \\\n"
        " && git -c user.name=t -c user.email=t@x.invalid commit -qm baseline\n"
        "COPY skills /root/.claude/skills\n"
    )
    assert req.steps == [] and req.workdir == "/app"
    assert req.tools == ["git"] and [(p.name, p.version) for p in req.python] == [
        ("pytest", "8.3.3")
    ]
    check = check_environment(req, LOCAL)
    assert check.supported and check.reasons == [] and check.hint is None
    assert any("skillci installs the skills itself" in n for n in check.notes)


def test_a_run_step_a_missing_package_and_another_workdir_are_reasons() -> None:
    req = _req(
        "FROM ubuntu:24.04\nRUN pip3 install --break-system-packages numpy==1.26.4\n"
        "RUN curl -fsSL https://example.invalid/x.sh | sh\nWORKDIR /root\n"
        "COPY data /root/data\n"
    )
    check = check_environment(req, LOCAL)
    assert not check.supported
    assert check.reasons == [
        "Dockerfile step not reproduced: RUN curl -fsSL https://example.invalid/x.sh | sh",
        "Dockerfile step not reproduced: COPY data /root/data (puts data at /root/data; "
        "the workspace copy has it at /app/data)",
        "Python package numpy (the image installs it) is missing",
        "working directory /root (the local runner gives /app)",
    ]
    assert check.hint is not None and "--sandbox docker" in check.hint
    assert summary(check, limit=1).endswith("(+3 more) — " + check.hint)
    # the Docker runner builds the image: only the working directory is left
    docker = check_environment(req, DOCKER)
    assert docker.reasons == ["working directory /root (the docker runner gives /app)"]


def test_a_pinned_version_the_runner_does_not_have_is_a_note_not_a_reason() -> None:
    check = check_environment(_req("WORKDIR /app\nRUN pip install pytest==9.0.0\n"), LOCAL)
    assert check.supported
    assert "Python package pytest is 8.3.3, the image pins 9.0.0" in check.notes


def test_network_gpus_memory_and_cpus_against_the_runner() -> None:
    base = _req("WORKDIR /app\n")
    closed_only = LOCAL.model_copy(update={"network_open": False})
    assert check_environment(
        base.model_copy(update={"allow_internet": True}), closed_only
    ).reasons == ["allow_internet = true, and this runner has no network"]
    open_only = LOCAL.model_copy(update={"network_closed": False})
    plain = check_environment(base, open_only)
    assert plain.supported
    assert plain.notes == ["allow_internet = false, but this runner cannot close the network"]
    big = base.model_copy(update={"gpus": 1, "cpus": 8, "memory_mb": 16384})
    assert check_environment(big, LOCAL).reasons == [
        "gpus = 1 (the local runner has 0)",
        "cpus = 8 (this machine has 4)",
        "memory_mb = 16384 (this machine has 8192)",
    ]


def test_multi_stage_env_user_and_prebuilt_images() -> None:
    req = _req(
        "FROM a AS build\nFROM b\nCOPY --from=build /x /x\nENV PATH=/opt/x:$PATH TZ=UTC\n"
        "USER app\nWORKDIR /app\n",
        docker_image="org/img:1",
    )
    reasons = check_environment(req, LOCAL).reasons
    assert reasons[0] == "the task runs in the prebuilt image org/img:1"
    assert "Dockerfile step not reproduced: FROM b (a multi-stage build)" in reasons
    assert any("COPY --from=build" in r for r in reasons)
    assert (
        "Dockerfile step not reproduced: ENV PATH (not set by a runner without the image)"
        in reasons
    )
    assert "Dockerfile step not reproduced: USER app" in reasons
    assert check_environment(req, DOCKER).supported


def test_a_dockerfile_without_workdir_runs_at_the_root() -> None:
    assert dockerfile_requirements("FROM x\n")["workdir"] == "/"
    assert EnvRequirements(task_id="t", dockerfile=False).workdir == "/app"


def test_a_runner_that_mounts_the_workdir_takes_any_but_root_and_system_dirs() -> None:
    """The Docker runner bind-mounts the workspace at the task's WORKDIR (design 250)."""
    docker = DOCKER.model_copy(update={"workdirs": None, "mounts_workdir": True})
    for wd in ("/root", "/app/workspace", "/home/travis", "/usr/src/app", "/tmp/work"):
        assert check_environment(_req(f"WORKDIR {wd}\n"), docker).supported, wd
    for wd in ("/", "/usr", "/etc", "/opt", "/proc/self", "/tests", "/logs/x", "/usr/../etc"):
        req = _req(f"WORKDIR {wd}\n")
        assert check_environment(req, docker).reasons == [
            f"working directory {req.workdir} (the docker runner bind-mounts the workspace "
            "there: not / nor a system directory)"
        ], wd


def test_memory_gpus_and_cpus_name_whose_they_are() -> None:
    engine = DOCKER.model_copy(
        update={"cpus": 2, "memory_mb": 4096, "gpus": 0, "resources_of": "the Docker engine"}
    )
    req = _req("WORKDIR /app\n").model_copy(update={"gpus": 1, "cpus": 4, "memory_mb": 8192})
    check = check_environment(req, engine)
    assert check.reasons == [
        "gpus = 1 (the docker runner has 0)",
        "cpus = 4 (the Docker engine has 2)",
        "memory_mb = 8192 (the Docker engine has 4096)",
    ]
    roomy = engine.model_copy(update={"gpus": 2, "cpus": 8, "memory_mb": 16384})
    assert check_environment(req, roomy).supported


def test_stage_aliases_are_no_base_images() -> None:
    req = _req(
        "FROM --platform=linux/amd64 golang:1.22 AS build\nFROM build AS test\n"
        "FROM debian:12\nWORKDIR /app\n"
    )
    assert req.base_images == ["golang:1.22", "debian:12"]
    assert [s for s in req.steps if s.startswith("FROM")] == [
        "FROM build AS test (a multi-stage build)",
        "FROM debian:12 (a multi-stage build)",
    ]
