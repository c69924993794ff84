"""Drive BenchFlow's ``bench eval run`` (0.7.x) and read what it wrote.

BenchFlow needs Python >= 3.12 and pins its own litellm/rich, so it lives in its own venv;
skillci only needs the path of its ``bench`` executable (``--bench PATH``, else
``$SKILLCI_BENCH``, else ``bench`` on PATH). Flags skillci passes (BenchFlow 0.7.11):

    bench eval run --tasks-dir DIR --include TASK... --agent HARNESS [--model PROVIDER/MODEL]
        --sandbox docker --concurrency N --jobs-dir DIR --skill-mode with-skill|no-skill
        [--skills-dir DIR] [--agent-env KEY=VAL...]
        [--config-override '{"sandbox": {"docker_image": IMAGE}}']   (--image)

(0.7 renamed the task config's ``[environment]`` to ``sandbox`` and lets an override patch
only ``agent``, ``sandbox`` and ``metadata``.) ``bench`` runs with
``BENCHFLOW_AGENTS_SOURCE=off`` (no clone of its remote agent manifests: offline) in the
jobs dir (its ``.cache/`` lands there).

Exit code 0 only means the pipeline finished: the verdicts are in the job dir, read by
:mod:`skillci.trace.importers.benchflow`. ``tests/integration/benchflow`` checks every flag
against the real CLI's parser (:func:`parse_check`).
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from skillci.errors import RunnerError
from skillci.runners.cliparse import cli_version, find_executable, run_logged

if TYPE_CHECKING:
    from skillci.runners.registry import HarnessAttempt
    from skillci.tasks.environment import EnvRequirements, RunnerCapabilities
    from skillci.trace.models import RunRecord

BENCHFLOW_VERSION = "0.7.11"
INSTALL_HINT = (
    f"install BenchFlow in its own venv: python3.12 -m venv ~/.venvs/benchflow && "
    f"~/.venvs/benchflow/bin/pip install benchflow=={BENCHFLOW_VERSION}; then pass "
    "--bench ~/.venvs/benchflow/bin/bench (or set SKILLCI_BENCH)"
)


@dataclass(frozen=True)
class BenchRun:
    """One ``bench eval run`` invocation."""

    tasks_dir: Path
    include: list[str]
    agent: str
    model: str | None
    """None: no ``--model`` (the oracle runs no model)."""
    jobs_dir: Path
    skill_mode: Literal["with-skill", "no-skill"] = "with-skill"
    skills_dir: Path | None = None
    sandbox: str = "docker"
    concurrency: int = 1
    agent_env: dict[str, str] = field(default_factory=dict)
    image: str | None = None
    """Run in this prebuilt image: the task config's ``sandbox.docker_image``, set through
    BenchFlow's ``--config-override`` (the task's Dockerfile is then not built)."""
    sandbox_config: dict[str, object] = field(default_factory=dict)
    """Further ``sandbox`` settings of that override (e.g. ``network_mode``)."""

    def argv(self, bench: str) -> list[str]:
        args = [
            bench,
            "eval",
            "run",
            "--tasks-dir",
            str(self.tasks_dir),
            *[x for t in self.include for x in ("--include", t)],
            "--agent",
            self.agent,
            *(["--model", self.model] if self.model else []),
            "--sandbox",
            self.sandbox,
            "--concurrency",
            str(self.concurrency),
            "--jobs-dir",
            str(self.jobs_dir),
            "--skill-mode",
            self.skill_mode,
        ]
        if self.skills_dir is not None:
            args += ["--skills-dir", str(self.skills_dir)]
        for k, v in sorted(self.agent_env.items()):
            args += ["--agent-env", f"{k}={v}"]
        sandbox = {**self.sandbox_config}
        if self.image is not None:
            sandbox["docker_image"] = self.image
        if sandbox:
            args += ["--config-override", json.dumps({"sandbox": sandbox}, sort_keys=True)]
        return args


def find_bench(explicit: str | Path | None = None) -> str:
    """The ``bench`` executable to use, or :class:`RunnerError` with the install hint."""
    return find_executable(explicit, "SKILLCI_BENCH", "bench", "BenchFlow's `bench`", INSTALL_HINT)


def parse_check(bench: str, argv: list[str]) -> dict[str, object]:
    """Parse ``argv`` (as :meth:`BenchRun.argv` builds it) with the real CLI's own parser,
    running nothing; returns the parsed parameters or raises with the parser's message."""
    from skillci.runners.cliparse import parse_check as check

    if argv[1:3] != ["eval", "run"]:
        raise RunnerError("not a `bench eval run` command line")
    return check(bench, "benchflow.cli.main", ["eval", "run"], argv[3:], hint=INSTALL_HINT)


def version(bench: str) -> str:
    return cli_version(bench)


def run(
    bench: str,
    spec: BenchRun,
    *,
    log: Path,
    timeout: float | None = None,
    environ: dict[str, str] | None = None,
    stop: threading.Event | None = None,
) -> int:
    """Run ``bench eval run`` in ``environ`` (None: this process's environment); output
    goes to ``log``. Returns its exit code. ``stop``: interrupt it (SIGINT: BenchFlow
    tears its sandbox down) once set."""
    spec.jobs_dir.mkdir(parents=True, exist_ok=True)
    env = {**(os.environ if environ is None else environ), "BENCHFLOW_AGENTS_SOURCE": "off"}
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return run_logged(
        spec.argv(bench), log=log, timeout=timeout, env=env, cwd=spec.jobs_dir, stop=stop
    )


def skills_root(scratch: Path, skills: tuple[Path, ...]) -> Path:
    """A skills root under ``scratch`` holding ``skills`` (what ``--skills-dir`` expects)."""
    root = scratch / ".skills"
    for s in skills:
        if not (root / s.name).exists():
            root.mkdir(parents=True, exist_ok=True)
            shutil.copytree(s, root / s.name)
    return root


class BenchflowRunner:
    """The ``benchflow`` runner of ``eval raw-task`` (:mod:`skillci.runners.registry`): one
    ``bench eval run`` per attempt, its rollout imported as the run record."""

    name = "benchflow"

    def preflight(self, executables: dict[str, str | None]) -> None:
        from skillci.runners.docker import DOCKER_HINT, docker_available

        why = docker_available()
        if why is not None:
            raise RunnerError(why, hint=DOCKER_HINT)
        find_bench(executables.get("bench"))

    def capabilities(self, req: EnvRequirements) -> RunnerCapabilities:
        from skillci.runners.capabilities import harness_capabilities

        return harness_capabilities(self.name, req, env="local")

    def run_attempt(self, attempt: HarnessAttempt) -> RunRecord:
        from skillci.trace.importers.benchflow import find_rollouts, import_rollout

        bench = find_bench(attempt.executables.get("bench"))
        run_dir = attempt.run_dir
        spec = BenchRun(
            tasks_dir=attempt.task_root.parent,
            include=[attempt.task_id],
            agent=attempt.harness,
            model=attempt.model,
            jobs_dir=run_dir / "jobs",
            skill_mode="with-skill" if attempt.skills else "no-skill",
            skills_dir=skills_root(attempt.scratch, attempt.skills) if attempt.skills else None,
            image=attempt.image,
        )
        code = run(bench, spec, log=run_dir / "bench.log")
        rollouts = find_rollouts(run_dir / "jobs")
        if len(rollouts) != 1:
            tail = (run_dir / "bench.log").read_text(errors="replace")[-600:]
            raise RunnerError(
                f"bench exited {code} and left {len(rollouts)} rollout dirs (want 1): {tail!r}",
                hint=f"read {run_dir / 'bench.log'}",
            )
        return import_rollout(rollouts[0], skill=attempt.skill_ref)


__all__ = [
    "BENCHFLOW_VERSION",
    "INSTALL_HINT",
    "BenchRun",
    "BenchflowRunner",
    "find_bench",
    "parse_check",
    "run",
    "skills_root",
    "version",
]
