"""``skillci tasks validate``: every problem of a task dir, not just the first.

:func:`load_task` stops at the first thing a runner cannot live with; validation goes on
and also reports what a runner *can* live with but a task author should fix (no reference
solution, no Dockerfile, a verifier that writes no reward file, unknown config keys).
Errors make the command exit 2; warnings and notes do not.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from skillci.errors import SkillciError
from skillci.tasks.loader import LAYOUTS, detect_format, load_task
from skillci.tasks.models import Purpose, Task, TaskConfig
from skillci.tasks.reward import REWARD_JSON, REWARD_TXT

SCHEMA_VERSION = 1


class Severity(enum.StrEnum):
    error = "error"
    warning = "warning"
    note = "note"


class Finding(BaseModel):
    """One problem found in a task dir."""

    model_config = ConfigDict(extra="forbid")

    code: str = Field(description="Stable id of the check, e.g. verifier-not-executable.")
    severity: Severity = Field(description="error (exit 2), warning or note.")
    message: str = Field(description="What is wrong and how to fix it.")
    file: str | None = Field(default=None, description="File concerned.")
    line: int | None = Field(default=None, description="1-based line, when known.")

    def location(self) -> str:
        if self.file is None:
            return ""
        return f"{self.file}:{self.line}" if self.line else self.file


class TaskReport(BaseModel):
    """Validation result of one task dir."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=SCHEMA_VERSION, description="Report schema version.")
    task_dir: str = Field(description="The dir validated.")
    task_id: str = Field(description="Its name.")
    format: str | None = Field(default=None, description="harbor, benchflow or null.")
    content_hash: str | None = Field(default=None, description="Task content hash if loadable.")
    findings: list[Finding] = Field(default_factory=list, description="Problems found.")

    @property
    def ok(self) -> bool:
        return not any(f.severity is Severity.error for f in self.findings)


def _executable(path: Path) -> bool:
    return os.access(path, os.X_OK)


def _unknown_keys(cfg: TaskConfig) -> list[str]:
    """Dotted keys neither skillci nor Harbor defines (kept, but often typos).

    ``[metadata]`` is free-form (Harbor keeps it as a dict) and never reported."""
    out = [k for k in (cfg.model_extra or {}) if k not in ("version", "schema_version")]
    sections: list[tuple[str, BaseModel | None]] = [
        ("task", cfg.task),
        ("verifier", cfg.verifier),
        ("verifier.environment", cfg.verifier.environment),
        ("agent", cfg.agent),
        ("environment", cfg.environment),
        ("environment.healthcheck", cfg.environment.healthcheck),
        ("environment.tpu", cfg.environment.tpu),
        ("solution", cfg.solution),
    ]
    for name, section in sections:
        if section is not None:
            out += [f"{name}.{k}" for k in (section.model_extra or {})]
    return sorted(out)


#: Harbor's deprecated size strings: key -> the key they set.
LEGACY_KEYS = {"memory": "memory_mb", "storage": "storage_mb"}


_Add = Callable[..., None]


def _check_test_sh(task: Task, lay: dict[str, str], add: _Add) -> None:
    """The findings on tests/test.sh (a task with tests/graders.toml may have none)."""
    if not _executable(task.verifier_script):
        add(
            "verifier-not-executable",
            Severity.warning,
            f"{lay['verifier']}/test.sh is not executable; runners run it with bash as Harbor "
            "does (chmod +x on it to run it by hand)",
            task.verifier_script,
        )
    first = task.verifier_script.read_bytes()[:2]
    if first != b"#!":
        add(
            "verifier-no-shebang",
            Severity.warning,
            "test.sh has no #! line; add '#!/usr/bin/env bash'",
            task.verifier_script,
        )
    verifier_text = b"".join(
        p.read_bytes()
        for p in sorted(task.verifier_dir.rglob("*"))
        if p.is_file() and p.stat().st_size < 1 << 20
    )
    if REWARD_TXT.encode() not in verifier_text and REWARD_JSON.encode() not in verifier_text:
        add(
            "verifier-no-reward",
            Severity.warning,
            f"no file in {lay['verifier']}/ mentions {REWARD_TXT} or {REWARD_JSON}; the verifier "
            "must write ${LOGS_DIR:-/logs}/verifier/reward.txt",
            task.verifier_dir,
        )


def _check_loaded(task: Task, findings: list[Finding]) -> None:
    lay = LAYOUTS[task.format]

    def add(code: str, sev: Severity, msg: str, file: Path | None = None) -> None:
        findings.append(
            Finding(code=code, severity=sev, message=msg, file=str(file) if file else None)
        )

    if task.has_verifier_script:
        _check_test_sh(task, lay, add)
    if task.solution_script is None:
        add(
            "solution-missing",
            Severity.error,
            f"no reference solution {lay['solution']}/{lay['solve']}; the oracle agent needs it "
            "to prove the task solvable",
            task.root / lay["solution"] / lay["solve"],
        )
    elif not _executable(task.solution_script):
        add(
            "solution-not-executable",
            Severity.warning,
            f"{lay['solution']}/{lay['solve']} is not executable; the oracle runs it with bash "
            "(chmod +x on it to run it by hand)",
            task.solution_script,
        )
    if task.environment_dir is None:
        add(
            "environment-missing",
            Severity.warning,
            "no environment/ dir: the agent starts in an empty workspace",
            task.root / "environment",
        )
    elif task.dockerfile is None and task.config.environment.docker_image is None:
        add(
            "dockerfile-missing",
            Severity.note,
            "no environment/Dockerfile or [environment] docker_image: container runners "
            "(docker, benchflow) cannot run this task; the local runner can",
            task.root / "environment",
        )
    if task.format == "harbor" and task.config.version is None:
        add(
            "version-missing",
            Severity.warning,
            'task.toml has no version; add version = "1.0"',
            task.config_path,
        )
    env = task.config.environment
    for legacy, new in LEGACY_KEYS.items():
        if legacy in env.model_fields_set:
            add(
                "legacy-key",
                Severity.note,
                f"environment.{legacy} is Harbor's deprecated spelling of {new}; read as "
                f"{new} = {getattr(env, new)}",
                task.config_path,
            )
    if env.gpus or env.tpu is not None:
        add(
            "accelerator-requested",
            Severity.note,
            f"the task asks for {env.gpus} GPU(s)"
            + (f" and a TPU {env.tpu.type}" if env.tpu is not None else "")
            + "; the local runner provides none, the docker runner only the NVIDIA GPUs its "
            "engine has (a TPU: run it on Harbor or BenchFlow)",
            task.config_path,
        )
    for key in _unknown_keys(task.config):
        add(
            "unknown-key",
            Severity.note,
            f"unknown config key {key!r} is kept as-is (typo?)",
            task.config_path,
        )


def validate_task(task_dir: Path) -> TaskReport:
    """Validate one task dir and return every finding (never raises for task problems)."""
    report = TaskReport(task_dir=str(task_dir), task_id=task_dir.name)
    if not task_dir.is_dir():
        report.findings.append(
            Finding(
                code="not-a-dir",
                severity=Severity.error,
                message="does not exist or is not a directory",
                file=str(task_dir),
            )
        )
        return report
    report.format = detect_format(task_dir)
    try:
        task = load_task(task_dir, purpose=Purpose.inspect)
    except SkillciError as err:
        report.findings.append(
            Finding(
                code="load-failed",
                severity=Severity.error,
                message=err.message + (f" (hint: {err.hint})" if err.hint else ""),
                file=err.file or str(task_dir),
                line=err.line,
            )
        )
        return report
    report.content_hash = task.content_hash
    _check_loaded(task, report.findings)
    return report


def expand_task_dirs(paths: list[Path]) -> list[Path]:
    """Each path is a task dir, or a dir of task dirs (e.g. evals/tasks) which is expanded."""
    out: list[Path] = []
    for p in paths:
        if p.is_dir() and detect_format(p) is None:
            children = sorted(c for c in p.iterdir() if c.is_dir() and detect_format(c))
            out.extend(children or [p])
        else:
            out.append(p)
    return out


__all__ = ["Finding", "Severity", "TaskReport", "expand_task_dirs", "validate_task"]
