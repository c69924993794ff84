"""Drive Harbor's ``harbor run`` and read what it wrote.

Harbor (the Terminal-Bench 2 framework; Python >= 3.12, its own venv) runs the same task
format as skillci and scales out with ``-e daytona|modal|e2b -n 100``. skillci needs the path
of its ``harbor`` executable (``--harbor PATH``, else ``$SKILLCI_HARBOR``, else ``harbor`` on
PATH) and passes:

    harbor run -p TASK_OR_DATASET (-a AGENT | --agent-import-path MOD:CLASS) [-m MODEL]
        -e ENV -n CONCURRENCY -k ATTEMPTS -o JOBS_DIR [--skills DIR...] [--ek KEY=VALUE...]
        [--ak KEY=VALUE...] [--extra-docker-compose FILE...] [-i TASK...] -y -q

``-e local`` (skillci's name, not Harbor's) selects
:data:`BWRAP_ENV`, an environment class shipped in :mod:`skillci.runners.harbor_env` that runs
trials in bubblewrap on this machine: the driver puts a directory holding only a ``skillci``
link on Harbor's ``PYTHONPATH`` and passes skillci's own Python (which has pytest) as the
sandbox's tools; skillci's built-in agent (``--agent-import-path``, design 426) gets the same
``PYTHONPATH`` entry. Exit code 0 only means the job finished: verdicts are read by
:mod:`skillci.trace.importers.harbor`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import skillci
from skillci.errors import RunnerError
from skillci.runners.cliparse import cli_version, find_executable, run_logged
from skillci.runners.sandbox import path_env, python_roots

if TYPE_CHECKING:
    from skillci.runners.registry import HarnessAttempt
    from skillci.tasks.environment import EnvRequirements, RunnerCapabilities
    from skillci.trace.models import RunRecord

HARBOR_VERSION = "0.25.0"
BWRAP_ENV = "skillci.runners.harbor_env.bwrap:BwrapEnvironment"
INSTALL_HINT = (
    f"install Harbor in its own venv: python3.12 -m venv ~/.venvs/harbor && "
    f"~/.venvs/harbor/bin/pip install harbor=={HARBOR_VERSION}; then pass "
    "--harbor ~/.venvs/harbor/bin/harbor (or set SKILLCI_HARBOR)"
)
#: Agents that take no model.
NO_MODEL_AGENTS = frozenset({"oracle", "nop"})


@dataclass(frozen=True)
class HarborRun:
    """One ``harbor run`` invocation."""

    path: Path
    agent: str
    model: str | None
    jobs_dir: Path
    env: str = "local"
    concurrency: int = 1
    attempts: int = 1
    skills: list[Path] = field(default_factory=list)
    env_kwargs: dict[str, str] = field(default_factory=dict)
    include: list[str] = field(default_factory=list)
    #: Compose overlays for Harbor's docker environment (``--extra-docker-compose``).
    extra_compose: list[Path] = field(default_factory=list)
    #: An agent class by import path (``--agent-import-path``) instead of ``-a agent``.
    agent_import_path: str | None = None
    #: The agent's constructor kwargs (``--ak KEY=VALUE``).
    agent_kwargs: dict[str, str] = field(default_factory=dict)

    @property
    def needs_skillci(self) -> bool:
        """Harbor's Python imports a class of skillci's (the bwrap env, the built-in agent)."""
        return self.env == "local" or (self.agent_import_path or "").startswith("skillci.")

    @property
    def environment(self) -> str:
        return BWRAP_ENV if self.env == "local" else self.env

    def kwargs(self) -> dict[str, str]:
        """Environment kwargs: for the local bwrap env, skillci's Python as the tools."""
        if self.env != "local":
            return dict(self.env_kwargs)
        roots = ":".join(str(r) for r in python_roots())
        return {"ro_binds": roots, "path": path_env(), **self.env_kwargs}

    def argv(self, harbor: str) -> list[str]:
        args = [harbor, "run", "-p", str(self.path)]
        if self.agent_import_path is not None:
            args += ["--agent-import-path", self.agent_import_path]
        else:
            args += ["-a", self.agent]
        if self.model and self.agent not in NO_MODEL_AGENTS:
            args += ["-m", self.model]
        args += [
            "-e",
            self.environment,
            "-n",
            str(self.concurrency),
            "-k",
            str(self.attempts),
            "-o",
            str(self.jobs_dir),
        ]
        for s in self.skills:
            args += ["--skills", str(s)]
        for k, v in sorted(self.kwargs().items()):
            args += ["--ek", f"{k}={v}"]
        for k, v in sorted(self.agent_kwargs.items()):
            args += ["--ak", f"{k}={v}"]
        for c in self.extra_compose:
            args += ["--extra-docker-compose", str(c)]
        for t in self.include:
            args += ["-i", t]
        return [*args, "-y", "-q"]


def find_harbor(explicit: str | Path | None = None) -> str:
    return find_executable(explicit, "SKILLCI_HARBOR", "harbor", "Harbor's `harbor`", INSTALL_HINT)


def pythonpath_for_env(where: Path) -> Path:
    """A dir holding only a ``skillci`` link, for Harbor's PYTHONPATH (so Harbor's Python
    imports the bwrap environment and nothing else of skillci's 3.11 installation)."""
    where.mkdir(parents=True, exist_ok=True)
    link = where / "skillci"
    target = Path(skillci.__file__).resolve().parent
    if not link.is_symlink() or link.resolve() != target:
        link.unlink(missing_ok=True)
        with contextlib.suppress(FileExistsError):  # another run made it at the same time
            link.symlink_to(target, target_is_directory=True)
    return where


def pythonpath_dir() -> Path:
    """Where :func:`pythonpath_for_env` keeps its link: in the temp dir, one per skillci
    installation -- never inside a jobs dir, whose import refuses links (design 312)."""
    target = str(Path(skillci.__file__).resolve().parent)
    key = hashlib.sha256(target.encode()).hexdigest()[:16]
    return Path(tempfile.gettempdir()) / f"skillci-harbor-pythonpath-{os.getuid()}-{key}"


def run(harbor: str, spec: HarborRun, *, log: Path, timeout: float | None = None) -> int:
    """Run ``harbor run``; output goes to ``log``. Returns its exit code."""
    spec.jobs_dir.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ)
    if spec.needs_skillci:
        extra = str(pythonpath_for_env(pythonpath_dir()))
        env["PYTHONPATH"] = os.pathsep.join(p for p in (extra, env.get("PYTHONPATH")) if p)
    env.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    return run_logged(spec.argv(harbor), log=log, timeout=timeout, env=env, cwd=spec.jobs_dir)


def parse_check(harbor: str, argv: list[str]) -> dict[str, object]:
    """Parse ``argv`` (as :meth:`HarborRun.argv` builds it) with Harbor's own parser."""
    from skillci.runners.cliparse import parse_check as check

    if argv[1:2] != ["run"]:
        raise RunnerError("not a `harbor run` command line")
    return check(harbor, "harbor.cli.main", ["run"], argv[2:], hint=INSTALL_HINT)


def version(harbor: str) -> str:
    return cli_version(harbor)


class HarborRunner:
    """The ``harbor`` runner of ``eval raw-task`` (:mod:`skillci.runners.registry`): one
    ``harbor run`` per attempt in skillci's bubblewrap environment, its trial imported."""

    name = "harbor"

    def preflight(self, executables: dict[str, str | None]) -> None:
        find_harbor(executables.get("harbor"))

    def capabilities(self, req: EnvRequirements) -> RunnerCapabilities:
        from skillci.runners.capabilities import harness_capabilities

        return harness_capabilities(self.name, req, env="local")

    def run_attempt(self, attempt: HarnessAttempt) -> RunRecord:
        from skillci.trace.importers.harbor import find_trials, import_trial

        exe = find_harbor(attempt.executables.get("harbor"))
        run_dir = attempt.run_dir
        spec = HarborRun(
            path=attempt.task_root,
            agent=attempt.harness,
            model=attempt.model,
            jobs_dir=run_dir / "jobs",
            skills=list(attempt.skills),
        )
        code = run(exe, spec, log=run_dir / "harbor.log")
        trials = find_trials(run_dir / "jobs")
        if len(trials) != 1:
            tail = (run_dir / "harbor.log").read_text(errors="replace")[-600:]
            raise RunnerError(
                f"harbor exited {code} and left {len(trials)} trial dirs (want 1): {tail!r}",
                hint=f"read {run_dir / 'harbor.log'}",
            )
        return import_trial(trials[0], skill=attempt.skill_ref)


__all__ = [
    "BWRAP_ENV",
    "HARBOR_VERSION",
    "INSTALL_HINT",
    "HarborRun",
    "HarborRunner",
    "find_harbor",
    "parse_check",
    "pythonpath_for_env",
    "run",
    "version",
]
