"""Which runner can honour which task: the environment check over real task dirs.

    python benchmarks/environment_check.py [TASKS_DIR ...]

Default: the 16 SkillsBench tasks in tests/fixtures/skillsbench-tasks and skillci's bundled
evals/tasks. Capabilities are this machine's (CPU count, memory, tools on the sandbox PATH,
the packages of the Python running this); the Docker runner's are its engine's (``docker
info``: CPUs, memory, GPUs; its networks and images) when one answers at DOCKER_HOST, else
this machine's. Prints per task: honoured by local / docker, and the first reason (the
docker runner's, else the local runner's); then the counts per runner (docker: the engine
as it is, with the tasks' base images loaded, and also with a bridge network for
``allow_internet``) and the most common kinds of reason.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from skillci.runners.capabilities import docker_capabilities, local_capabilities
from skillci.runners.docker import engine_facts, missing_images
from skillci.tasks.environment import check_environment, requirements
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose

ROOT = Path(__file__).resolve().parents[1]
DEFAULT = [ROOT / "tests" / "fixtures" / "skillsbench-tasks", ROOT / "evals" / "tasks"]


def kind(reason: str) -> str:
    for key in (
        "not in the Docker engine",
        "allow_internet",
        "working directory",
        "Python package",
        "tools the image",
        "docker-compose",
        "cpus",
        "memory_mb",
        "gpus",
        "prebuilt image",
    ):
        if key in reason:
            return key
    return reason.split(":")[1].split()[0] if reason.startswith("Dockerfile step") else reason


def main(roots: list[Path]) -> None:
    counts: Counter[str] = Counter()
    kinds: Counter[str] = Counter()
    docker_kinds: Counter[str] = Counter()
    facts = engine_facts()
    info, networks = (facts[0], list(facts[1])) if facts is not None else (None, None)
    docker_caps = docker_capabilities(info, networks=networks)
    open_caps = docker_capabilities(info)  # as if it had a bridge network
    print(
        f"docker runner: {docker_caps.resources_of}: cpus {docker_caps.cpus:g}, "
        f"memory_mb {docker_caps.memory_mb}, gpus {docker_caps.gpus}, "
        f"networks {networks if networks is not None else 'unknown (no engine)'}"
    )
    for root in roots:
        tasks = sorted(p for p in root.iterdir() if (p / "task.toml").is_file())
        print(
            f"== {root.relative_to(ROOT) if root.is_relative_to(ROOT) else root}: {len(tasks)} tasks"
        )
        for p in tasks:
            req = requirements(load_task(p, purpose=Purpose.inspect))
            local = check_environment(req, local_capabilities(req))
            # as this engine is (its images: skillci pulls nothing), and were they loaded
            names = [req.docker_image] if req.docker_image else req.base_images
            lacks = missing_images(names) if facts is not None else []
            docker = check_environment(
                req, docker_caps.model_copy(update={"missing_images": lacks})
            )
            counts["docker+images"] += check_environment(req, docker_caps).supported
            counts["docker+images+bridge"] += check_environment(req, open_caps).supported
            counts["tasks"] += 1
            counts["local"] += local.supported
            counts["docker"] += docker.supported
            kinds.update({kind(r) for r in local.reasons})
            docker_kinds.update({kind(r) for r in docker.reasons})
            # the docker runner's first reason when it cannot, else the local one's
            first = (docker.reasons or local.reasons or ["-"])[0]
            print(
                f"{p.name:36} local={'yes' if local.supported else 'no ':3} "
                f"docker={'yes' if docker.supported else 'no ':3} {first[:90]}"
            )
    print(
        f"\nhonoured: local {counts['local']}/{counts['tasks']}, "
        f"docker {counts['docker']}/{counts['tasks']} "
        f"(with the tasks' base images loaded into the engine: "
        f"{counts['docker+images']}/{counts['tasks']}; and a bridge network: "
        f"{counts['docker+images+bridge']}/{counts['tasks']})"
    )
    print("local runner's reasons (tasks per kind):")
    for k, n in kinds.most_common():
        print(f"  {n:3}  {k}")
    print("docker runner's reasons (tasks per kind):")
    for k, n in docker_kinds.most_common():
        print(f"  {n:3}  {k}")


if __name__ == "__main__":
    main([Path(a).resolve() for a in sys.argv[1:]] or DEFAULT)
