"""The local runner: one trial in a fresh workspace on this machine.

Steps: copy ``environment/`` (minus Dockerfile and skills/) into ``<trial>/workspace`` and
commit it as a git baseline (like a CI checkout); write the rendered skill to
``<trial>/skill/<name>``; run the agent with its shell in the sandbox (workspace at /app,
``<trial>/logs/agent`` at /logs/agent, the skill read-only at /skills/<name>); then run
``tests/test.sh`` under the same sandbox rules (tests read-only at /tests, logs at /logs)
and read the reward; assemble, redact and write the run record, the trajectory and last the
completion marker (see :mod:`skillci.runners.trialdir`).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, TypeVar, cast

from skillci.agents.base import Agent, AgentContext, AgentResult, Shell
from skillci.agents.workspace import WORKSPACE_MOUNT
from skillci.fsutil import atomic_write_bytes, atomic_write_text
from skillci.runners.base import RUNNER_VERSION, TrialSpec, key_of, sandbox_kind
from skillci.runners.capabilities import local_capabilities
from skillci.runners.pool import TRASH, discard_tree
from skillci.runners.regrade import (
    FINAL_TAR,
    REGRADE,
    RegradeBase,
    dump_key_data,
    final_tar,
    snapshot,
)
from skillci.runners.sandbox import Mount, make_shell
from skillci.runners.trialdir import FINAL_OUTPUT, RECORD, TRAJECTORY, write_marker
from skillci.tasks.environment import (
    EnvCheck,
    EnvRequirements,
    RunnerCapabilities,
    check_environment,
    requirements,
    summary,
)
from skillci.tasks.loader import agent_side_hash
from skillci.tasks.reward import logs_layout, read_reward, rewrite_logs_paths
from skillci.trace.evaluation import evaluation_from_reward
from skillci.trace.importers.common import verifier_touches
from skillci.trace.models import (
    Budgets,
    EvalState,
    Evaluation,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillRef,
    Timeouts,
    new_run_id,
)
from skillci.trace.redact import Redactor, redact_files, warm_files

T = TypeVar("T")

WORKSPACE_EXCLUDE = ("Dockerfile", ".dockerignore", "skills")
GIT_ENV = {
    "GIT_AUTHOR_NAME": "skillci",
    "GIT_AUTHOR_EMAIL": "runner@skillci.invalid",
    "GIT_COMMITTER_NAME": "skillci",
    "GIT_COMMITTER_EMAIL": "runner@skillci.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
    "HOME": "/nonexistent",
    "PATH": "/usr/bin:/bin",
}


def prepare_workspace(task_env: Path | None, workspace: Path) -> None:
    """Copy the task environment and make it a git repo with one baseline commit. Links
    stay links, as ``COPY`` puts them in an image (a link is never followed out of the
    task's directory, and a dangling one is no error)."""
    if task_env is not None and task_env.is_dir():
        shutil.copytree(
            task_env,
            workspace,
            symlinks=True,
            ignore=shutil.ignore_patterns(*WORKSPACE_EXCLUDE, "__pycache__"),
        )
    else:
        workspace.mkdir(parents=True)
    if shutil.which("git") is None:
        return
    for args in (
        ["init", "-q", "--template="],  # no sample hooks: fewer files to write and delete
        ["add", "-A"],
        ["commit", "-q", "--allow-empty", "-m", "baseline"],
    ):
        subprocess.run(["git", *args], cwd=workspace, env=GIT_ENV, check=True, capture_output=True)


def cached_workspace(task_env: Path | None, workspace: Path, cache: Path, key: str) -> None:
    """:func:`prepare_workspace` once per task content (``key``) into ``cache/<key>``, then a
    copy of it per trial: the baseline commit's git processes run once per task, not per
    trial. The copy's index is stale by stat data only, which git re-checks by content."""
    template = cache / key
    if not template.is_dir():  # made whole in a temp dir, then renamed: there means ready
        with _template_lock(template):  # this process's other trials wait, not build too
            if not template.is_dir():
                cache.mkdir(parents=True, exist_ok=True)
                tmp = Path(tempfile.mkdtemp(prefix=f".{key[:16]}-", dir=cache))
                prepare_workspace(task_env, tmp / "ws")
                with contextlib.suppress(OSError):  # another process made it first
                    os.rename(tmp / "ws", template)
                shutil.rmtree(tmp, ignore_errors=True)
    copy_tree(template, workspace)


def copy_tree(src: Path, dst: Path) -> None:
    """``dst`` (which must not exist): a copy of ``src`` with its symlinks and modes.

    ``cp -a`` where there is one: one process does the hundreds of file operations a
    workspace and its ``.git`` take, so none of them waits for this process's interpreter
    lock while other trials' threads hold it (under ``--parallel 16`` the Python copy took
    ~13 ms of CPU per trial against 3 ms alone: docs/design/281). Else, or when ``cp``
    fails, :func:`shutil.copytree`."""
    if os.path.lexists(dst):
        raise FileExistsError(f"{dst} exists")
    cp = shutil.which("cp")
    if cp is not None:
        done = subprocess.run([cp, "-a", "--", str(src), str(dst)], capture_output=True)
        if done.returncode == 0:
            return
        shutil.rmtree(dst, ignore_errors=True)
    shutil.copytree(src, dst, symlinks=True)


_TEMPLATE_LOCKS: dict[Path, threading.Lock] = {}
_TEMPLATE_LOCKS_LOCK = threading.Lock()


def _template_lock(template: Path) -> threading.Lock:
    """One lock per workspace template in this process: the trials of a fresh state dir
    that start together (2N at ``--parallel N``) build the template once, not each."""
    with _TEMPLATE_LOCKS_LOCK:
        return _TEMPLATE_LOCKS.setdefault(template, threading.Lock())


def workspace_diff(workspace: Path) -> str:
    if not (workspace / ".git").is_dir():
        return ""

    def run(*args: str) -> str:
        return subprocess.run(
            ["git", *args], cwd=workspace, env=GIT_ENV, capture_output=True, text=True, check=False
        ).stdout

    run("add", "-A", "--intent-to-add")
    return run("status", "--porcelain") + "\n" + run("diff", "--no-color")[:200_000]


def _in_thread(fn: Callable[[], T]) -> Callable[[], T]:
    """Start ``fn`` in a thread now; the call returned waits for it and returns its result
    (or raises what it raised)."""
    box: dict[str, Any] = {}

    def run() -> None:
        try:
            box["value"] = fn()
        except BaseException as exc:  # handed to the caller: re-raised by result()
            box["error"] = exc

    thread = threading.Thread(target=run, name="skillci-trial-meanwhile", daemon=True)
    thread.start()

    def result() -> T:
        thread.join()
        if "error" in box:
            raise box["error"]
        return cast(T, box["value"])

    return result


def _meanwhile(
    keep: Callable[[], None] | None, redactor: Redactor, agent_logs: Path, result: AgentResult
) -> None:
    """What a trial does while its verifier runs (design 433): ``keep`` (the kept final
    workspace's write), then the agent's logs and result redacted into ``redactor``'s memo.
    That part writes nothing: the redaction after the verifier runs as before and finds in
    the memo every string that did not change since."""
    if keep is not None:
        keep()
    with contextlib.suppress(Exception):  # a cache only: the later pass does the work
        warm_files(agent_logs, redactor)
        redactor.redact_obj([e.model_dump(mode="json", by_alias=True) for e in result.events])
        redactor.redact_text(result.final_output or "")


def make_agent(spec: TrialSpec) -> Agent:
    a = spec.agent
    if a.real:
        from skillci.runners.agent_launch import real_agent

        return real_agent(spec)
    if a.kind == "oracle":
        from skillci.agents.oracle import OracleAgent

        return OracleAgent()
    if a.kind == "noop":
        from skillci.agents.oracle import NoopAgent

        return NoopAgent()
    from skillci.agents.loop import BuiltinAgent, LoopLimits
    from skillci.providers.budget import BudgetMeter
    from skillci.providers.cache import ResponseCache
    from skillci.providers.client import ModelClient

    assert a.route is not None and a.route_name is not None
    use_cache = a.cache_responses or a.role == "teacher"
    client = ModelClient(
        a.route_name,
        a.route,
        meter=BudgetMeter(a.budget, name="run"),
        cache=ResponseCache(spec.state_dir / "cache" / "responses"),
        use_cache=use_cache,
    )
    limits = LoopLimits(max_steps=a.max_steps, tool_timeout_sec=a.tool_timeout_sec)
    return BuiltinAgent(client, role=a.role, limits=limits)


class TrialRunner:
    """One trial, whichever runner runs it: workspace, agent, verifier, record, trial dir.

    A runner is this template with its hooks filled in — where the workspace comes from
    (:meth:`prepare_workspace`), where commands run (:meth:`open_shell`), which image and
    working directory the record names, what it can provide a task (:meth:`capabilities`):
    :class:`LocalRunner` (this machine, a sandbox of :mod:`skillci.runners.registry`),
    :class:`~skillci.runners.docker.DockerRunner`, and plug-ins (Modal, Kubernetes, ...)."""

    name = "trial"
    #: ``--image`` means something to it (a runner of images: docker)
    takes_image = False

    def preflight(self) -> None:
        """Raise (exit 4, with the fix) when this runner cannot run here at all: called
        before any attempt starts (``eval raw-task``)."""

    def prepare_workspace(self, spec: TrialSpec, workspace: Path) -> None:
        """Make ``workspace`` (which does not exist): the task's files, a git baseline."""
        raise NotImplementedError

    def open_shell(
        self, spec: TrialSpec, mounts: list[Mount], *, phase: Literal["agent", "verifier"]
    ) -> tuple[Shell, list[str]]:
        """A shell with ``mounts`` for the agent or the verifier phase, and its warnings."""
        raise NotImplementedError

    def environment_image(self, spec: TrialSpec) -> str | None:
        return None

    def workdir(self, spec: TrialSpec) -> str:
        """Where the agent's and the verifier's shells see the workspace (their cwd)."""
        return WORKSPACE_MOUNT

    def capabilities(self, spec: TrialSpec, req: EnvRequirements) -> RunnerCapabilities:
        """What it can provide ``spec``'s task (docs/design/185)."""
        raise NotImplementedError

    def check(self, spec: TrialSpec) -> EnvCheck:
        """Can this runner honour ``spec``'s task environment? (docs/design/185)"""
        req = requirements(spec.task)
        return check_environment(req, self.capabilities(spec, req))

    def unsupported_trial(
        self, spec: TrialSpec, trial_dir: Path, key: str, check: EnvCheck
    ) -> RunRecord:
        """The trial dir of a trial that did not run: ``environment_unsupported``."""
        if trial_dir.exists():
            shutil.rmtree(trial_dir)
        logs = logs_layout(trial_dir).ensure()
        line = summary(check)
        evaluation = Evaluation(
            state=EvalState.environment_unsupported,
            verifier_output=line,
            details={"environment": check.model_dump(mode="json")},
        )
        result = AgentResult(stop_reason="environment_unsupported")
        record = self._record(
            spec, key, result, evaluation, "not-run", [line, *check.notes], built=False
        )
        atomic_write_text(logs.agent / FINAL_OUTPUT, "")
        atomic_write_text(logs.agent / TRAJECTORY, "[]")
        atomic_write_text(trial_dir / RECORD, record.model_dump_json(indent=1))
        write_marker(trial_dir, record, key)
        return record

    def run_trial(self, spec: TrialSpec, trial_dir: Path, key: str) -> RunRecord:
        check = self.check(spec)
        if not check.supported:
            return self.unsupported_trial(spec, trial_dir, key, check)
        start = time.monotonic()
        task = spec.task
        discard_tree(trial_dir, trial_dir.parent / TRASH)
        logs = logs_layout(trial_dir).ensure()
        ws = trial_dir / "workspace"
        self.prepare_workspace(spec, ws)
        baseline = snapshot(ws)
        workdir = self.workdir(spec)
        mounts = [Mount(ws, workdir, True), Mount(logs.agent, "/logs/agent", True)]
        installed = [spec.skill, *spec.companion_skills] if spec.skill is not None else []
        for skill in installed:  # the skill under test and the rest of the task's set
            skill_dir = trial_dir / "skill" / skill.name
            for f in skill.files:
                (skill_dir / f.path).parent.mkdir(parents=True, exist_ok=True)
                (skill_dir / f.path).write_bytes(f.content)
            mounts.append(Mount(skill_dir, f"/skills/{skill.name}"))
        solution = None
        if spec.agent.kind == "oracle" and task.solution_dir is not None and task.solution_script:
            mounts.append(Mount(task.solution_dir, "/solution"))
        launch = None
        if spec.agent.real:  # the agent itself runs in the sandbox: its HOME and install
            from skillci.runners.agent_launch import open_agent_shell

            shell, warnings, launch = open_agent_shell(spec, mounts, trial_dir / "home")
        else:
            shell, warnings = self.open_shell(spec, mounts, phase="agent")
        if task.solution_script is not None:
            solution = (
                ("/solution/" + task.solution_script.name)
                if shell.kind != "none"
                else str(task.solution_script)
            )
        agent = make_agent(spec)
        ctx = AgentContext(
            task_id=task.id,
            instruction=task.instruction,
            workspace=ws,
            shell=shell,
            skill=spec.skill,
            seed=spec.seed,
            deadline=time.monotonic() + task.agent_timeout_sec,
            solution_script=solution,
            # what the shell really has: a plain subprocess (--sandbox none) cannot close it
            network=task.config.environment.allow_internet or shell.kind == "none",
            workdir=workdir,
            launch=launch,
            home=trial_dir / "home",
            logs=logs.agent,
            agent_cwd=workdir if shell.kind != "none" else str(ws),
        )
        try:
            result = agent.run(ctx)
        except Exception as exc:  # an agent bug is an infra error of this trial, not a crash
            why = f"{type(exc).__name__}: {exc}"
            result = AgentResult(
                stop_reason="agent_crash", warnings=[why], infra_error=f"agent crashed: {why}"
            )
        atomic_write_text(logs.agent / FINAL_OUTPUT, result.final_output or "", durable=False)
        redactor = Redactor()
        evaluation = self._verify_and_redact(spec, trial_dir, result, baseline, key, redactor)
        if not spec.keep_workspace:
            discard_tree(ws, trial_dir.parent / TRASH)
        discard_tree(trial_dir / "home", trial_dir.parent / TRASH)  # a real agent's fresh HOME
        result.cost.wall_time_sec = round(time.monotonic() - start, 4)
        record = redactor.redact_model(
            self._record(spec, key, result, evaluation, shell.kind, warnings)
        )
        # one fsync'd write: the marker, last. Everything before it is checked by
        # read_complete (record, trajectory and reward must agree with the marker), so a
        # crash that loses any of them leaves an incomplete trial that re-runs — never a
        # marker vouching for a record that is not there as it says (design 232)
        atomic_write_text(
            logs.agent / TRAJECTORY,
            json.dumps([e.model_dump(mode="json") for e in record.events]),
            durable=False,
        )
        atomic_write_text(trial_dir / RECORD, record.model_dump_json(indent=1), durable=False)
        write_marker(trial_dir, record, key)
        return record

    def _verify_and_redact(
        self,
        spec: TrialSpec,
        trial_dir: Path,
        result: AgentResult,
        baseline: dict[str, str],
        key: str,
        redactor: Redactor,
    ) -> Evaluation:
        """After the agent: keep its final workspace, run the verifier, redact the logs
        and write ``workspace.diff``. While the verifier runs (design 433) the kept final
        workspace is written (read from the workspace before) and the agent's logs and
        result are redacted into the memo the redaction after the verifier finds them in."""
        logs, ws = logs_layout(trial_dir), trial_dir / "workspace"
        keep = None
        if result.infra_error is None:  # a failed measurement has nothing to regrade
            keep = self._keep_final(spec, trial_dir, ws, baseline, key)
        meanwhile = _in_thread(lambda: _meanwhile(keep, redactor, logs.agent, result))
        try:  # infra_error: the evaluation says so and the verifier does not run (design 300)
            evaluation = self._verify(spec, trial_dir, ws, result)
        finally:
            meanwhile()
        diff = _in_thread(lambda: workspace_diff(ws))  # git's processes, while this redacts
        redact_files(logs.root, redactor)  # verifier and agent logs as the tools wrote them
        atomic_write_text(
            logs.agent / FINAL_OUTPUT,
            redactor.redact_text(result.final_output or ""),
            durable=False,
        )
        (trial_dir / "workspace.diff").write_text(redactor.redact_text(diff()))
        return evaluation

    def _keep_final(
        self, spec: TrialSpec, trial_dir: Path, ws: Path, baseline: dict[str, str], key: str
    ) -> Callable[[], None]:
        """Keep what ``skillci eval regrade`` needs: the agent's files, read before the
        verifier runs (:mod:`skillci.runners.regrade`); returns the call that writes them
        (``final-workspace.tar.gz``, fsync'd, then ``regrade.json``)."""
        data = dump_key_data(spec.key_data(sandbox_kind(spec)))
        base = RegradeBase(
            task_id=spec.task.id,
            agent_side_hash=agent_side_hash(spec.task.root, spec.task.verifier_dir),
            verifier_hash=spec.task.verifier_hash,
            sandbox=spec.sandbox,
            image=spec.image,
            key_data=data if key_of(data) == key else None,
            kept=False,
        )
        tar = None
        try:
            base, tar = final_tar(ws, baseline, base)
        except OSError as exc:  # unreadable files (e.g. left by a container): no regrade
            base = base.model_copy(update={"reason": f"{type(exc).__name__}: {exc}"})

        def write(base: RegradeBase = base) -> None:
            if tar is not None:
                try:
                    atomic_write_bytes(trial_dir / FINAL_TAR, tar)
                except OSError as exc:
                    why = f"{type(exc).__name__}: {exc}"
                    base = base.model_copy(update={"kept": False, "reason": why})
            # not fsync'd: a lost regrade.json only means this trial cannot be regraded
            atomic_write_text(trial_dir / REGRADE, base.model_dump_json(indent=1), durable=False)

        return write

    def _verify(
        self, spec: TrialSpec, trial_dir: Path, ws: Path, result: AgentResult
    ) -> Evaluation:
        task = spec.task
        logs = logs_layout(trial_dir)
        shutil.rmtree(logs.verifier, ignore_errors=True)  # the agent must not pre-write a reward
        logs.verifier.mkdir(parents=True)
        if result.infra_error is not None:  # the agent did not do its part: not the skill's
            return Evaluation(
                state=EvalState.infra_error,
                passed=False,
                verifier_output=result.infra_error[-4000:],
                details={"stop_reason": result.stop_reason},
            )
        if spec.require_skill and result.skill_loads == 0:
            return Evaluation(
                state=EvalState.failed,
                passed=False,
                reward=0.0,
                failure_class="skill_not_loaded",
                verifier_output="--require-skill: the agent never loaded the skill",
            )
        mounts = [
            Mount(ws, self.workdir(spec), True),
            Mount(task.verifier_dir, "/tests"),
            Mount(logs.root, "/logs", True),
        ]
        shell, _ = self.open_shell(spec, mounts, phase="verifier")
        verifier = self._run_test_sh(spec, trial_dir, shell) if task.has_verifier_script else None
        if task.graders is None:
            assert verifier is not None  # the loader refuses a task with neither
            return verifier
        from skillci.runners.grading import grade_trial, publish_reward

        evaluation = grade_trial(
            task.graders,
            instruction=task.instruction,
            answer=result.final_output or "",
            workspace=ws,
            shell=shell,
            timeout=task.verifier_timeout_sec,
            judge=spec.effective_judge(),
            state_dir=spec.state_dir,
            verifier=verifier,
        )
        publish_reward(logs.verifier, evaluation)
        return evaluation

    def _run_test_sh(self, spec: TrialSpec, trial_dir: Path, shell: Shell) -> Evaluation:
        """Run ``tests/test.sh`` in the verifier's ``shell`` and read its reward."""
        task = spec.task
        logs = logs_layout(trial_dir)
        if shell.kind != "none":  # the mounts exist: run the task's own paths
            command = f"bash /tests/{task.verifier_script.name}"
        else:  # no bind mounts: run a copy whose literal /logs paths point at this trial
            copy = trial_dir / "verifier-tests"
            shutil.copytree(task.verifier_dir, copy, dirs_exist_ok=True)
            script = copy / task.verifier_script.name
            script.write_text(rewrite_logs_paths(script.read_text(), logs.root))
            command = f"bash {script}"
        out = shell.run(command, timeout=task.verifier_timeout_sec)
        shutil.rmtree(trial_dir / "verifier-tests", ignore_errors=True)  # a copy of the task's
        reward = read_reward(logs.root)
        return evaluation_from_reward(
            reward,
            verifier_exit_code=out.exit_code,
            timed_out=out.timed_out,
            verifier_output=out.output,
        )

    def _record(
        self,
        spec: TrialSpec,
        key: str,
        res: AgentResult,
        ev: Evaluation,
        sandbox: str,
        warnings: list[str],
        *,
        built: bool = True,
    ) -> RunRecord:
        a, task, skill = spec.agent, spec.task, spec.skill
        route = a.route
        model = ModelInfo(
            route=a.route_name or a.kind,
            name=route.model_id if route else None,
            revision=route.revision if route else None,
            quantization=route.quantization if route else None,
            context_window=route.context_window if route else None,
            params=res.model_params,
        )
        skill_ref = None
        if skill is not None:
            skill_ref = SkillRef(
                name=skill.name,
                version=skill.version,
                content_hash=spec.skill_package_hash or skill.package_hash,
                rendered_hash=skill.content_hash,
            )
        runtime = RuntimeInfo(
            harness=a.kind if a.real else getattr(self._agent_cls(spec), "name", a.kind),
            harness_version=(
                a.agent_version if a.real else getattr(self._agent_cls(spec), "version", None)
            ),
            runner=f"{self.name} ({RUNNER_VERSION})",
            environment_image=(
                self.environment_image(spec)
                if built
                else spec.image or task.config.environment.docker_image
            ),
            sandbox=sandbox,
            seed=spec.seed,
            skill=skill_ref,
            system_prompt_hash=res.system_prompt_hash,
            tool_schema_version=res.tool_schema_version,
            tool_schema_hash=res.tool_schema_hash,
            timeouts=Timeouts(
                agent_sec=task.agent_timeout_sec,
                verifier_sec=task.verifier_timeout_sec,
                tool_sec=a.tool_timeout_sec,
            ),
            budgets=Budgets(
                max_steps=a.max_steps if a.kind == "builtin" else None,
                max_input_tokens=a.budget.max_input_tokens,
                max_output_tokens=a.budget.max_output_tokens,
                max_model_calls=a.budget.max_calls,
                max_usd=a.budget.max_usd,
            ),
            evaluator_version=task.verifier_hash,
            task_hash=task.content_hash,
        )
        return RunRecord(
            run_id=new_run_id(),
            task_id=task.id,
            agent_role=a.role,
            model=model,
            runtime=runtime,
            events=res.events,
            final_output=res.final_output,
            stop_reason=res.stop_reason,
            evaluation=ev,
            cost=res.cost,
            split=spec.split,
            suite=spec.suite,
            repeat_index=spec.repeat_index,
            trial_cache_key=key,
            warnings=list(dict.fromkeys([*warnings, *res.warnings])),
            # writes only: the verifier's own files are not in the agent's sandbox, so a read
            # of tests/ is the repository's tests, which the agent is meant to run (design 252)
            reward_hack_evidence=verifier_touches(res.events, reads=False),
            metadata={"trial_dir": str(Path(spec.state_dir.name) / "trials" / key[:2] / key)},
        )

    @staticmethod
    def _agent_cls(spec: TrialSpec) -> object:
        if spec.agent.kind == "builtin" or spec.agent.real:
            from skillci.agents.loop import BuiltinAgent

            return BuiltinAgent
        from skillci.agents.oracle import NoopAgent, OracleAgent

        return OracleAgent if spec.agent.kind == "oracle" else NoopAgent


class LocalRunner(TrialRunner):
    """The trial runner of this machine, its commands in a sandbox of
    :mod:`skillci.runners.registry` (``auto``, ``bwrap``, ``none``, plug-ins)."""

    name = "local"

    def prepare_workspace(self, spec: TrialSpec, workspace: Path) -> None:
        cache = spec.state_dir / "cache" / "workspaces"
        cached_workspace(spec.task.environment_dir, workspace, cache, spec.task.content_hash)

    def open_shell(
        self, spec: TrialSpec, mounts: list[Mount], *, phase: Literal["agent", "verifier"]
    ) -> tuple[Shell, list[str]]:
        allow = spec.task.config.environment.allow_internet
        return make_shell(mounts, sandbox=spec.sandbox, allow_network=allow)

    def capabilities(self, spec: TrialSpec, req: EnvRequirements) -> RunnerCapabilities:
        return local_capabilities(req, sandbox=spec.sandbox)


__all__ = ["LocalRunner", "TrialRunner", "make_agent", "prepare_workspace"]
