"""The SkillsBench slice (tests/fixtures/skillsbench-tasks, fetched with its commit) validates
N/N, as fetched: most of its tests/test.sh are not executable, which Harbor accepts."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from skillci.tasks.validate import Severity, expand_task_dirs, validate_task

SLICE = Path(__file__).resolve().parents[2] / "fixtures" / "skillsbench-tasks"


def test_sources_name_every_task_with_repo_and_commit() -> None:
    doc = yaml.safe_load((SLICE / "SOURCES.yaml").read_text())
    listed = {t["id"] for t in doc["tasks"]}
    on_disk = {p.name for p in SLICE.iterdir() if p.is_dir()}
    assert listed == on_disk and len(listed) >= 10
    assert all(t["repo"] and len(t["commit"]) == 40 for t in doc["tasks"])


def test_every_task_of_the_slice_validates() -> None:
    dirs = expand_task_dirs([SLICE])
    reports = [validate_task(d) for d in dirs]
    ok = sum(r.ok for r in reports)
    print(f"skillsbench slice: {ok}/{len(reports)} valid")
    assert ok == len(reports) >= 10
    # the slice does exercise the non-executable case, and it is a warning
    modes = [os.access(d / "tests" / "test.sh", os.X_OK) for d in dirs]
    assert modes.count(False) >= 5
    sev = {f.severity for r in reports for f in r.findings if f.code == "verifier-not-executable"}
    assert sev == {Severity.warning}
    assert not [f for r in reports for f in r.findings if f.code == "unknown-key"]
