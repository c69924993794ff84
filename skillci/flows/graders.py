"""skill-creator's evals.json in and out (``skillci tasks import/export``) and judge
calibration (``skillci judge calibrate``): load (files, the judge route) -> decide
(:mod:`skillci.graders`) -> act (task dirs, the judge's cached calls)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from skillci.errors import (
    InvalidInputError,
    JudgeUnfit,
    TaskFormatError,
    UsageError,
)
from skillci.fsutil import atomic_write_text
from skillci.gate.judging import GateJudge, SuiteJudge
from skillci.graders.calibrate import (
    DEFAULT_MIN_EXAMPLES,
    CalibrationReport,
    CalibrationSet,
    JudgeFit,
    JudgeRequirement,
    agreement,
    judge_fit,
)
from skillci.graders.judge import JudgeAnswerError
from skillci.graders.models import GRADERS_FILE, Rubric
from skillci.graders.skill_creator import SkillCreatorEvals, drafts, parse_evals, to_eval
from skillci.graders.toml import graders_toml
from skillci.runners.base import judge_spec
from skillci.runners.grading import ModelJudge
from skillci.tasks.loader import discover_tasks, load_task, tasks_dir
from skillci.tasks.models import Purpose
from skillci.tasks.suites import load_suite, suite_file, suites_dir

SOURCE = "skill-creator evals.json"


class ImportResult(BaseModel):
    """What ``tasks import`` wrote (or would write)."""

    model_config = ConfigDict(extra="forbid")

    tasks: list[str] = Field(description="Task dirs.")
    files: int = Field(description="Input files copied into environment/.")
    suite_file: str | None = Field(default=None, description="Suite file written, if any.")
    dry_run: bool = Field(description="Nothing was written.")


def read_evals(path: Path) -> SkillCreatorEvals:
    """Parse an evals.json; errors name the file and the field."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {exc}", file=path) from None
    except json.JSONDecodeError as exc:
        raise TaskFormatError(f"not JSON: {exc.msg}", file=path, line=exc.lineno) from None
    try:
        return parse_evals(data)
    except ValueError as exc:
        raise TaskFormatError(
            f"not a skill-creator evals.json: {exc}",
            file=path,
            hint='expected {"skill_name": ..., "evals": [{"id", "prompt", "expectations"}]}',
        ) from None


def _task_toml(source_id: int | str, files: list[str], skill: str | None) -> str:
    meta = {
        "category": "skill-creator",
        "skill_creator_id": source_id,
        "skill_creator_files": files,
    }
    lines = ['version = "1.0"', f"source = {json.dumps(SOURCE)}", "", "[metadata]"]
    if skill:
        lines.append(f"skill_creator_skill = {json.dumps(skill)}")
    lines += [f"{k} = {json.dumps(v)}" for k, v in meta.items()]
    return "\n".join(lines) + "\n"


def import_evals(
    evals_json: Path,
    root: Path,
    *,
    skill_root: Path | None = None,
    prefix: str | None = None,
    suite: str | None = None,
    dry_run: bool = False,
) -> ImportResult:
    """Write one task per eval under ``root/evals/tasks`` (never over an existing one).
    Input files are read from ``skill_root`` (default: the dir above ``evals/``)."""
    evals = read_evals(evals_json)
    base = skill_root or evals_json.resolve().parent.parent
    try:
        todo = drafts(evals, prefix=prefix)
    except ValueError as exc:
        raise TaskFormatError(str(exc), file=evals_json) from None
    tdir = tasks_dir(root) if (root / "evals").is_dir() else root / "evals" / "tasks"
    taken = [d.id for d in todo if (tdir / d.id).exists()]
    if taken:
        raise InvalidInputError(
            f"tasks already exist: {', '.join(taken)}",
            hint="remove them, or import with another --prefix",
        )
    missing = [f for d in todo for f in d.files if not (base / f).is_file()]
    if missing:
        raise InvalidInputError(
            f"input files not found under {base}: {', '.join(missing[:5])}",
            file=evals_json,
            hint="pass --skill-root DIR: the skill folder the files are relative to",
        )
    suite_path = None
    if suite is not None:
        suite_path = suite_file(suites_dir(root), suite) or suites_dir(root) / f"{suite}.yaml"
        if suite_path.exists():
            raise InvalidInputError(
                f"{suite_path} exists", hint="name a new suite; add the tasks to it by hand"
            )
    result = ImportResult(
        tasks=[str(tdir / d.id) for d in todo],
        files=sum(len(d.files) for d in todo),
        suite_file=str(suite_path) if suite_path else None,
        dry_run=dry_run,
    )
    if dry_run:
        return result
    for d in todo:
        dest = tdir / d.id
        atomic_write_text(dest / "instruction.md", d.instruction)
        atomic_write_text(dest / "task.toml", _task_toml(d.source_id, d.files, evals.skill_name))
        note = f"Imported from {evals_json.name} (skill-creator), eval {d.source_id}."
        atomic_write_text(dest / "tests" / GRADERS_FILE, graders_toml(d.graders, comment=note))
        (dest / "environment").mkdir(parents=True, exist_ok=True)
        for f in d.files:
            (dest / "environment" / f).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(base / f, dest / "environment" / f)
    if suite_path is not None:
        body = {
            "schema_version": 1,
            "split": "validation",
            "description": f"imported from {evals_json.name} (skill-creator)",
            "tasks": [d.id for d in todo],
        }
        atomic_write_text(suite_path, yaml.safe_dump(body, sort_keys=False))
    return result


def export_evals(root: Path, *, skill_name: str | None = None) -> tuple[dict[str, Any], list[str]]:
    """The tasks under ``root`` that have graders, as a skill-creator evals.json object, and
    what evals.json could not hold (one line each)."""
    evals, lost = [], []
    for n, d in enumerate(discover_tasks(root), start=1):
        task = load_task(d, purpose=Purpose.inspect)
        if task.graders is None or not task.graders.rubric:
            lost.append(f"{task.id}: no rubric; left out")
            continue
        extra = task.config.metadata.model_extra or {}
        files = extra.get("skill_creator_files")
        if not isinstance(files, list):
            env = task.environment_dir
            files = (
                sorted(str(p.relative_to(env)) for p in env.rglob("*") if p.is_file())
                if env is not None
                else []
            )
        source_id = extra.get("skill_creator_id", n)
        entry, why = to_eval(
            source_id=source_id, prompt=task.instruction, graders=task.graders, files=files
        )
        evals.append(entry)
        lost += [f"{task.id}: {w}" for w in why]
        skill_name = skill_name or extra.get("skill_creator_skill")
    if not evals:
        raise InvalidInputError(
            f"no task under {root} has a rubric to export", hint="see docs/tasks.md 'Graders'"
        )
    out = SkillCreatorEvals(skill_name=skill_name, evals=evals)
    return out.model_dump(mode="json", exclude_none=True), lost


def _load_examples(path: Path) -> CalibrationSet:
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read labelled examples: {exc}", file=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise TaskFormatError(
            f"not YAML: {exc}", file=path, line=mark.line + 1 if mark else None
        ) from None
    try:
        return CalibrationSet.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "(root)"
        raise TaskFormatError(
            f"labelled examples field {loc!r}: {err['msg']}",
            file=path,
            hint="examples: [{id, task, criterion, output, label: true|false}] (docs/tasks.md)",
        ) from None


def suite_requirement(root: Path, suite: str) -> tuple[JudgeRequirement, Path] | None:
    """The suite's ``judge:`` section and its examples file, or None when it has none."""
    s = load_suite(suite, root, purpose=Purpose.inspect)
    raw = (s.model_extra or {}).get("judge")
    if raw is None:
        return None
    path = suite_file(suites_dir(root), suite)
    try:
        req = JudgeRequirement.model_validate(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise TaskFormatError(
            f"suite field 'judge.{'.'.join(str(p) for p in err['loc'])}': {err['msg']}",
            file=path,
            hint="judge: {examples: <file next to the suite>, min_kappa: 0.6}",
        ) from None
    return req, suites_dir(root) / req.examples


def calibrate(
    *,
    root: Path,
    home: Path,
    judge: str | None,
    suite: str | None = None,
    examples: Path | None = None,
    min_kappa: float | None = None,
) -> CalibrationReport:
    """Ask the judge every labelled example; agreement and fitness (cached calls)."""
    min_examples = DEFAULT_MIN_EXAMPLES
    if suite is not None:
        found = suite_requirement(root, suite)
        if found is None:
            raise InvalidInputError(
                f"suite {suite!r} declares no judge: section",
                hint="add judge: {examples: FILE, min_kappa: 0.6} to it, or pass --examples",
            )
        req, path = found
        examples = examples or path
        min_kappa = req.min_kappa if min_kappa is None else min_kappa
        min_examples = req.min_examples
    if examples is None:
        raise UsageError("give --suite S (with a judge: section) or --examples FILE")
    cal = _load_examples(examples)
    spec = judge_spec(judge)
    mj = ModelJudge(spec, home)
    verdicts, unreadable = [], []
    for ex in cal.examples:
        rubric = Rubric(id="calibration", criteria=[ex.criterion])
        try:
            verdicts.append(mj.verdicts(ex.task, rubric, ex.output)[0].passed)
        except JudgeAnswerError:
            # the judge answered, not in its format: a judge that cannot say is wrong here
            # (design 418); a call that failed (ModelError) still stops the calibration
            unreadable.append(ex.id)
            verdicts.append(not ex.label)
    labels = [ex.label for ex in cal.examples]
    agree = agreement(labels, verdicts)
    fit = (
        judge_fit(
            spec.route_name,
            agree,
            min_kappa,
            min_examples=min_examples,
            unreadable=len(unreadable),
        )
        if min_kappa is not None
        else None
    )
    return CalibrationReport(
        judge=spec.route_name,
        examples_file=str(examples),
        suite=suite,
        agreement=agree,
        min_kappa=min_kappa,
        fit=fit,
        disagreements=[
            ex.id for ex, v in zip(cal.examples, verdicts, strict=True) if v != ex.label
        ],
        unreadable=unreadable,
        usage=mj.usage.model_dump(mode="json"),
    )


def check_judge(root: Path, suite: str, judge: str | None, home: Path) -> JudgeFit | None:
    """Before a suite's rubric tasks run: when the suite declares a judge minimum
    (``judge.min_kappa``), calibrate the judge (cached calls) and raise :class:`JudgeUnfit`
    when it is below; None when the suite declares none."""
    if suite_requirement(root, suite) is None:
        return None
    report = calibrate(root=root, home=home, judge=judge, suite=suite)
    assert report.fit is not None
    if not report.fit.fit:
        raise JudgeUnfit(f"suite {suite!r}: {report.fit.reason}")
    return report.fit


def gate_judge(
    root: Path, home: Path, judge: str | None, rubric_tasks: dict[str, list[str]]
) -> GateJudge:
    """The gate's judge and its fitness for each suite with rubric tasks (``rubric_tasks``:
    suite -> task ids). ``root`` is the *base* checkout: the suite's ``judge:`` section and
    its labelled examples are read there. A suite that declares a minimum gets the judge
    calibrated (cached calls); when it is below, its rubric tasks are ``left_out``
    (docs/design/364)."""
    route = judge_spec(judge).route_name
    out: list[SuiteJudge] = []
    for suite, tasks in rubric_tasks.items():
        if not tasks:
            continue
        found = suite_requirement(root, suite)
        if found is None:
            out.append(SuiteJudge(suite=suite, rubric_tasks=tasks))
            continue
        req, _ = found
        report = calibrate(root=root, home=home, judge=judge, suite=suite)
        assert report.fit is not None
        out.append(
            SuiteJudge(
                suite=suite,
                rubric_tasks=tasks,
                min_kappa=req.min_kappa,
                min_examples=req.min_examples,
                examples_file=req.examples,
                agreement=report.agreement,
                fit=report.fit.fit,
                reason=report.fit.reason,
                left_out=[] if report.fit.fit else tasks,
            )
        )
    return GateJudge(route=route, suites=out)


__all__ = [
    "ImportResult",
    "calibrate",
    "check_judge",
    "export_evals",
    "gate_judge",
    "import_evals",
    "read_evals",
]
