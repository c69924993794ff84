"""``skillci tasks new`` and ``skillci tasks validate --run``.

``new``: load nothing, decide the files (:mod:`skillci.tasks.scaffold`), write them
atomically under ``evals/tasks/<name>`` (refusing to overwrite) and, with ``--suite``, add
the task to ``evals/suites/<suite>.yaml``.

``validate --run``: every task runs twice through the one trial scheduler — the oracle
(``solution/solve.sh``), which must pass, and a do-nothing agent, which must fail. A task
whose oracle fails has a broken verifier or solution; a task the do-nothing agent passes
has a verifier that is trivially satisfied. Both trials are cached like any other.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from skillci.errors import InvalidInputError, UsageError
from skillci.fsutil import atomic_write_bytes, atomic_write_text
from skillci.skill.package import set_executable
from skillci.tasks.loader import tasks_dir
from skillci.tasks.scaffold import add_to_suite_text, check_name, task_files
from skillci.tasks.suites import suite_file, suites_dir

Verdict = Literal["ok", "verifier-broken", "trivially-satisfied", "not-run"]


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
    verdict: Verdict
    detail: str = Field(description="One line: what is wrong, or 'ok'.")


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


def judge(task_id: str, oracle: bool | None, noop: bool | None) -> TaskRunCheck:
    """The verdict of one task's two trials (pure)."""
    if oracle is None or noop is None:
        verdict: Verdict = "not-run"
        detail = "a trial did not finish (see the runner error)"
    elif not oracle:
        verdict, detail = "verifier-broken", "the reference solution fails the verifier"
    elif noop:
        verdict, detail = "trivially-satisfied", "the verifier passes when the agent does nothing"
    else:
        verdict, detail = "ok", "ok"
    return TaskRunCheck(
        task_id=task_id, oracle_passed=oracle, noop_passed=noop, verdict=verdict, detail=detail
    )


def run_checks(task_dirs: list[Path], home: Path, *, parallel: int = 2) -> list[TaskRunCheck]:
    """Oracle and do-nothing trials of each task (through the trial scheduler)."""
    from skillci.flows.evalrun import EvalRequest, run_eval

    if not task_dirs:
        return []
    passed: dict[str, dict[str, bool | None]] = {}
    for agent in ("oracle", "noop"):
        req = EvalRequest(
            root=task_dirs[0].parent,
            tasks=[str(p) for p in task_dirs],
            agent=agent,
            parallel=parallel,
            home=home,
        )
        for t in run_eval(req).trials:
            ok = t.passed if t.state not in ("error", "skipped") else None
            passed.setdefault(t.task_id, {})[agent] = ok
    return [
        judge(p.name, passed.get(p.name, {}).get("oracle"), passed.get(p.name, {}).get("noop"))
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
