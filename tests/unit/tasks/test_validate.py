from __future__ import annotations

import os
from pathlib import Path

from skillci.tasks.validate import Severity, expand_task_dirs, validate_task
from tests.unit.tasks.helpers import make_benchflow_task, make_harbor_task, write


def _codes(report_dir: Path) -> dict[str, Severity]:
    return {f.code: f.severity for f in validate_task(report_dir).findings}


def test_clean_task_has_no_findings(tmp_path: Path) -> None:
    report = validate_task(make_harbor_task(tmp_path))
    assert report.findings == []
    assert report.ok
    assert report.format == "harbor"
    assert report.content_hash


def test_benchflow_task_is_clean(tmp_path: Path) -> None:
    codes = _codes(make_benchflow_task(tmp_path))
    # benchflow_extra is an unknown top-level key: a note only
    assert codes == {"unknown-key": Severity.note, "dockerfile-missing": Severity.note}


def test_verifier_not_executable_is_a_warning_as_harbor_chmods_it(tmp_path: Path) -> None:
    root = make_harbor_task(tmp_path)
    os.chmod(root / "tests" / "test.sh", 0o644)
    report = validate_task(root)
    assert report.ok
    (finding,) = report.findings
    assert finding.code == "verifier-not-executable"
    assert finding.severity is Severity.warning
    assert finding.file is not None
    assert finding.file.endswith("tests/test.sh")


def test_missing_solution_is_an_error_and_other_problems_are_reported_too(tmp_path: Path) -> None:
    root = make_harbor_task(
        tmp_path,
        solve_sh=None,
        environment=False,
        test_sh="echo no reward here\n",
        toml="[verifier]\ntimeout_secs = 3\n",
    )
    codes = _codes(root)
    assert codes == {
        "solution-missing": Severity.error,
        "verifier-no-shebang": Severity.warning,
        "verifier-no-reward": Severity.warning,
        "environment-missing": Severity.warning,
        "version-missing": Severity.warning,
        "unknown-key": Severity.note,
    }


def test_solution_not_executable_is_a_warning(tmp_path: Path) -> None:
    root = make_harbor_task(tmp_path)
    os.chmod(root / "solution" / "solve.sh", 0o644)
    report = validate_task(root)
    assert report.ok
    assert [f.code for f in report.findings] == ["solution-not-executable"]


def test_load_errors_carry_file_and_line(tmp_path: Path) -> None:
    root = make_harbor_task(tmp_path, toml="version = \n")
    report = validate_task(root)
    assert not report.ok
    (finding,) = report.findings
    assert finding.code == "load-failed"
    assert finding.line == 1
    assert finding.location().endswith("task.toml:1")


def test_missing_dir(tmp_path: Path) -> None:
    report = validate_task(tmp_path / "nope")
    assert [f.code for f in report.findings] == ["not-a-dir"]


def test_expand_dir_of_tasks(tmp_path: Path) -> None:
    make_harbor_task(tmp_path / "tasks", "t1")
    make_benchflow_task(tmp_path / "tasks", "t2")
    write(tmp_path / "tasks" / "notes" / "x.txt", "not a task")
    single = make_harbor_task(tmp_path, "single")
    assert [p.name for p in expand_task_dirs([tmp_path / "tasks", single])] == [
        "t1",
        "t2",
        "single",
    ]
