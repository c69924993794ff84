"""``skillci tasks new`` and ``skillci tasks validate --run``.

``new``: load nothing, decide the files (:mod:`skillci.tasks.scaffold`), write them
atomically under ``evals/tasks/<name>`` (refusing to overwrite) and, with ``--suite``, add
the task to ``evals/suites/<suite>.yaml``.

``validate --run``: every task runs twice through the one trial scheduler — the oracle
(``solution/solve.sh``), which must pass, and a do-nothing agent, which must fail. A task
whose oracle fails has a broken verifier or solution; a task the do-nothing agent passes
has a verifier that is trivially satisfied. Both are the task's defects. A task this
runner cannot give its environment is ``environment_unsupported`` (with the reason), and a
trial that produced no outcome for a cause outside the task (runner, timeout, a reward
format skillci does not score) is ``error`` (with the cause): neither is a defect
(docs/design/311). Both trials are cached like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, Field

from skillci.errors import InvalidInputError, UsageError
from skillci.fsutil import atomic_write_bytes, atomic_write_text
from skillci.skill.package import set_executable
from skillci.tasks.loader import tasks_dir
from skillci.tasks.scaffold import add_to_suite_text, check_name, task_files
from skillci.tasks.suites import suite_file, suites_dir
from skillci.tasks.validate import Severity as Severity  # re-exported: `tasks check` renders
from skillci.tasks.validate import TaskReport as TaskReport  # these
from skillci.tasks.validate import expand_task_dirs, validate_task

if TYPE_CHECKING:
    from skillci.gate.power import PlanRow
    from skillci.runners.outcome import TrialRun
    from skillci.trace.store import TraceStore

Verdict = Literal[
    "ok", "environment_unsupported", "verifier-broken", "trivially-satisfied", "error"
]


class NewTaskResult(BaseModel):
    """What ``skillci tasks new`` wrote (or would write)."""

    task_dir: str = Field(description="The new task dir.")
    files: list[str] = Field(description="Files written, relative to the task dir.")
    suite_file: str | None = Field(default=None, description="Suite file the task joined.")
    dry_run: bool = Field(default=False, description="Nothing was written.")


class TaskRunCheck(BaseModel):
    """``tasks validate --run`` for one task: oracle must pass, do-nothing must fail."""

    task_id: str
    oracle_passed: bool | None = Field(description="The reference solution passed.")
    noop_passed: bool | None = Field(description="The do-nothing agent passed.")
    oracle_state: str | None = Field(default=None, description="The oracle trial's state.")
    noop_state: str | None = Field(default=None, description="The do-nothing trial's state.")
    verdict: Verdict = Field(
        description="ok, environment_unsupported, verifier-broken, trivially-satisfied or "
        "error; only verifier-broken and trivially-satisfied are the task's defects."
    )
    detail: str = Field(description="One line: the cause, or 'ok'.")


def new_task(
    root: Path,
    name: str,
    *,
    suite: str | None = None,
    author: str = "",
    grader: str = "test",
    dry_run: bool = False,
) -> NewTaskResult:
    check_name(name)
    tdir = tasks_dir(root) if (root / "evals").is_dir() else root / "evals" / "tasks"
    dest = tdir / name
    if dest.exists():
        raise InvalidInputError(f"{dest} already exists", hint="pick another name")
    suite_path = suite_text = None
    if suite is not None:
        suite_path = suite_file(suites_dir(root), suite)
        if suite_path is None:
            raise InvalidInputError(
                f"no suite {suite!r}: {suites_dir(root) / (suite + '.yaml')} does not exist",
                hint="run `skillci init`, or drop --suite",
            )
        suite_text = add_to_suite_text(suite_path.read_text(encoding="utf-8"), name)
        if suite_text is None:
            raise InvalidInputError(
                f"cannot add to the tasks list of {suite_path}",
                file=suite_path,
                hint=f"add `- {name}` to its tasks: list by hand, or drop --suite",
            )
    files = task_files(name, author=author, grader=grader)
    res = NewTaskResult(
        task_dir=str(dest),
        files=sorted(files),
        suite_file=str(suite_path) if suite_path else None,
        dry_run=dry_run,
    )
    if dry_run:
        return res
    for rel, (data, executable) in sorted(files.items()):
        atomic_write_bytes(dest / rel, data)
        if executable:
            set_executable(dest / rel, True)
    if suite_path is not None and suite_text is not None:
        atomic_write_text(suite_path, suite_text)
    return res


class TrialState(BaseModel):
    """How one of a task's two trials ended, and why (for the verdict)."""

    state: str = Field(description="An EvalState value, error or skipped.")
    cause: str = Field(default="", description="One line: the reason, when not passed/failed.")

    @property
    def passed(self) -> bool | None:
        """The verifier's outcome on a completed run; None: no outcome."""
        return {"passed": True, "failed": False}.get(self.state)


#: Verdicts that are the task's own defects (exit 2); the others are not the task's fault.
DEFECTS = frozenset({"verifier-broken", "trivially-satisfied"})
MULTI_REWARD = "multi-dimensional reward"


def judge(task_id: str, oracle: TrialState | None, noop: TrialState | None) -> TaskRunCheck:
    """The verdict of one task's two trials (pure): ``environment_unsupported`` when this
    runner cannot give the task's environment, ``error`` when a trial could not produce an
    outcome for another reason than the task (runner, timeout, a reward format skillci does
    not score), then ``verifier-broken`` (the reference solution fails) or
    ``trivially-satisfied`` (doing nothing passes), else ``ok``."""
    verdict: Verdict
    trials = [("oracle", oracle), ("do-nothing", noop)]
    unsupported = [t for _, t in trials if t is not None and t.state == "environment_unsupported"]
    if unsupported:
        verdict, detail = "environment_unsupported", unsupported[0].cause
    elif oracle is None or noop is None:
        verdict, detail = "error", "a trial did not finish (see the runner error)"
    elif oracle.state == "verifier_error" and MULTI_REWARD in oracle.cause:
        verdict, detail = "error", oracle.cause
    elif oracle.state == "verifier_error":
        verdict = "verifier-broken"
        detail = f"the verifier gave no readable reward for the reference solution: {oracle.cause}"
    elif oracle.passed is None:
        verdict, detail = "error", f"oracle trial {oracle.state}: {oracle.cause}".rstrip(": ")
    elif not oracle.passed:
        verdict, detail = "verifier-broken", "the reference solution fails the verifier"
    elif noop.passed:
        verdict, detail = "trivially-satisfied", "the verifier passes when the agent does nothing"
    elif noop.passed is None and noop.state != "verifier_error":
        verdict, detail = "error", f"do-nothing trial {noop.state}: {noop.cause}".rstrip(": ")
    else:
        verdict, detail = "ok", "ok"
    return TaskRunCheck(
        task_id=task_id,
        oracle_passed=oracle.passed if oracle else None,
        noop_passed=noop.passed if noop else None,
        oracle_state=oracle.state if oracle else None,
        noop_state=noop.state if noop else None,
        verdict=verdict,
        detail=detail,
    )


def _trial_state(run: TrialRun, store: TraceStore) -> TrialState:
    """The state of a finished trial and its cause, read from its record."""
    from skillci.tasks.environment import EnvCheck, summary

    if run.run_id is None:
        return TrialState(state=run.state, cause=run.error or "no record")
    ev = store.get(run.run_id).evaluation
    cause = ""
    if ev.state.value == "environment_unsupported" and "environment" in ev.details:
        check = EnvCheck.model_validate(ev.details["environment"])
        shown = [r if len(r) <= 120 else r[:117] + "..." for r in check.reasons[:2]]
        more = len(check.reasons) - len(shown)
        cause = "; ".join(shown) + (f" (+{more} more)" if more > 0 else "") or summary(check)
    elif "reward_error" in ev.details:
        cause = str(ev.details["reward_error"])
    elif ev.state.value not in ("passed", "failed"):
        cause = (run.stop_reason or "") + (f" {run.error}" if run.error else "")
    return TrialState(state=ev.state.value, cause=cause.strip())


def run_checks(task_dirs: list[Path], home: Path, *, parallel: int = 2) -> list[TaskRunCheck]:
    """Oracle and do-nothing trials of each task (through the trial scheduler)."""
    from skillci.flows.evalrun import EvalRequest, run_eval
    from skillci.trace.store import TraceStore

    if not task_dirs:
        return []
    store = TraceStore(home)
    states: dict[str, dict[str, TrialState]] = {}
    for agent in ("oracle", "noop"):
        req = EvalRequest(
            root=task_dirs[0].parent,
            tasks=[str(p) for p in task_dirs],
            agent=agent,
            parallel=parallel,
            home=home,
        )
        for t in run_eval(req).trials:
            states.setdefault(t.task_id, {})[agent] = _trial_state(t, store)
    return [
        judge(p.name, states.get(p.name, {}).get("oracle"), states.get(p.name, {}).get("noop"))
        for p in task_dirs
    ]


def new_trigger_suite(skill: Path, *, dry_run: bool = False) -> Path:
    """Write ``skill``'s trigger suite seeded from its description (refuses to overwrite)."""
    from skillci.skill.package import TRIGGERS, SkillPackage
    from skillci.skill.triggers import seed_suite, suite_yaml

    pkg = SkillPackage.from_dir(skill)
    path = skill / TRIGGERS
    if TRIGGERS in pkg.files:
        raise UsageError(f"{path} already exists", hint="edit it, or remove it to re-seed")
    text = suite_yaml(
        seed_suite(
            pkg.frontmatter.name,
            pkg.frontmatter.description,
            model_invocable=pkg.frontmatter.model_invocable,
        )
    )
    if not dry_run:
        atomic_write_text(path, text)
    return path


def task_rows(repo: Path, suite: str | None) -> list[dict[str, object]]:
    """Every task dir with its format and the suites (and splits) that list it."""
    from skillci.tasks.loader import detect_format, discover_tasks
    from skillci.tasks.models import Purpose
    from skillci.tasks.suites import list_suites, load_suite

    suites = [load_suite(n, repo, purpose=Purpose.inspect) for n in list_suites(repo)]
    if suite is not None and suite not in {s.name for s in suites}:
        raise InvalidInputError(
            f"no suite {suite!r}",
            hint=f"known suites: {', '.join(s.name for s in suites) or 'none'}",
        )
    rows: list[dict[str, object]] = []
    for d in discover_tasks(repo):
        member = [s for s in suites if d.name in s.tasks]
        if suite is not None and suite not in {s.name for s in member}:
            continue
        rows.append(
            {
                "id": d.name,
                "format": detect_format(d) or "?",
                "suites": [s.name for s in member],
                "splits": sorted({s.split.value for s in member}),
                "path": str(d),
            }
        )
    return rows


def check_task_dirs(paths: list[Path]) -> list[TaskReport]:
    """The format report of every task dir under ``paths`` (``tasks check``)."""
    return [validate_task(p) for p in expand_task_dirs(paths)]


def gate_plan(
    *,
    min_gain: float | None,
    max_regression: float | None,
    catch: float,
    pass_rate: float,
    reliability: float,
    repeats: list[int],
    task_sd: float,
    power: float,
) -> tuple[float, float, list[PlanRow]]:
    """How many tasks and repeats a gate threshold needs (design 223): the gain and the
    regression allowance used (release_gate's defaults unless given) and one row per
    repeat count. Out-of-range inputs are usage errors naming the flag."""
    from skillci.gate.power import plan
    from skillci.skill.models import ReleaseGate

    gate = ReleaseGate()
    gain = gate.min_validation_gain if min_gain is None else min_gain
    allowance = gate.max_regression_rate if max_regression is None else max_regression
    for name, v in (("--pass-rate", pass_rate), ("--reliability", reliability), ("--catch", catch)):
        if not 0 < v < 1:
            raise UsageError(f"{name} {v} must be strictly between 0 and 1")
    if gain <= 0 or not 0 < power < 1:
        raise UsageError("--min-gain must be > 0 and --power in (0, 1)")
    rows = plan(
        min_gain=gain,
        max_regression_rate=allowance,
        regression_to_catch=catch,
        pass_rate=pass_rate,
        reliability=reliability,
        repeats=repeats,
        task_sd=task_sd,
        power=power,
    )
    return gain, allowance, rows
