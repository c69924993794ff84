"""`raw-task --skill-source <skills root> --skill NAME`: the whole set is installed for the
attempt, one skill is under test, and a change to any installed skill changes the request."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.errors import UsageError
from skillci.flows import rawtask as rt
from skillci.runners.benchflow import skills_root

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "tests" / "fixtures" / "skillsbench-tasks" / "flood-risk-analysis"
SKILLS = TASK / "environment" / "skills"


def _req(tmp: Path, skills: Path, skill: str | None) -> rt.RawTaskRequest:
    return rt.RawTaskRequest(
        harness="oracle",
        model="none/none",
        task=TASK,
        skill_source=skills,
        skill=skill,
        output=tmp / "out",
        runner="local",
    )


def test_the_skill_under_test_and_its_companions(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="holds 3 skills"):
        rt.preflight(_req(tmp_path, SKILLS, None))
    req = _req(tmp_path, SKILLS, "flood-detection")
    _task, skill = rt.preflight(req)
    assert skill == SKILLS / "flood-detection"
    assert [p.name for p in rt.companions(req)] == ["nws-flood-thresholds", "usgs-data-download"]
    root = skills_root(req.output, (skill, *rt.companions(req)))  # benchflow's --skills-dir
    assert sorted(p.name for p in root.iterdir()) == [
        "flood-detection",
        "nws-flood-thresholds",
        "usgs-data-download",
    ]
    for name in ("flood-detection", "usgs-data-download"):
        assert (root / name / "SKILL.md").read_bytes() == (SKILLS / name / "SKILL.md").read_bytes()


def test_a_changed_companion_changes_the_request_key(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(SKILLS, skills)
    req = _req(tmp_path, skills, "flood-detection")
    task, skill = rt.preflight(req)
    before = rt.request_key(req, task, skill)
    with (skills / "usgs-data-download" / "SKILL.md").open("a") as f:
        f.write("\nOne more line.\n")
    assert rt.request_key(req, task, skill) != before


def test_dry_run_json_names_the_installed_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["eval", "raw-task", "--harness", "oracle", "--model", "none/none", "--runner"]
    args += ["local", "--task", str(TASK), "--skill-source", str(SKILLS), "--output"]
    args += [str(tmp_path / "out"), "--dry-run", "--json"]
    assert main([*args, "--skill", "nws-flood-thresholds"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["skill"].endswith("nws-flood-thresholds")
    assert doc["installed_with"] == ["flood-detection", "usgs-data-download"]
    assert main(args) == 2
    assert "--skill NAME" in capsys.readouterr().err


def test_the_local_runner_installs_the_whole_set_beside_the_skill_under_test(
    tmp_path: Path,
) -> None:
    skills = tmp_path / "skills"
    shutil.copytree(ROOT / "skills" / "repo-debugger", skills / "repo-debugger")
    shutil.copytree(SKILLS / "usgs-data-download", skills / "usgs-data-download")
    req = rt.RawTaskRequest(
        harness="builtin",
        model="sim/student",
        task=ROOT / "evals" / "tasks" / "py-window-end",
        skill_source=skills,
        skill="repo-debugger",
        output=tmp_path / "out",
        runner="local",
    )
    result = rt.run_raw_task(req)
    assert not result.errors and len(result.attempts) == 1
    installed = tmp_path / "out" / "test-001" / "run" / "skill"
    assert sorted(p.name for p in installed.iterdir()) == ["repo-debugger", "usgs-data-download"]
    companion = installed / "usgs-data-download" / "SKILL.md"
    assert companion.read_bytes() == (SKILLS / "usgs-data-download" / "SKILL.md").read_bytes()
