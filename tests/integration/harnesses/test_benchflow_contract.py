"""skillci's `bench eval run` command lines against the real BenchFlow 0.7.11 CLI."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from skillci.errors import RunnerError
from skillci.runners import benchflow as bf

ROOT = Path(__file__).resolve().parents[3]


def _runs(tmp_path: Path) -> list[bf.BenchRun]:
    common = {
        "tasks_dir": ROOT / "evals" / "tasks",
        "agent": "opencode",
        "model": "siliconflow/Qwen/Qwen3.5-27B",
        "jobs_dir": tmp_path / "jobs",
    }
    return [
        bf.BenchRun(
            include=["py-window-end", "cfg-two-errors"],
            skill_mode="with-skill",
            skills_dir=ROOT / "skills",
            concurrency=3,
            agent_env={"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "EXTRA": "a=b"},
            image="skillci-task/py-window-end:local",
            **common,  # type: ignore[arg-type]
        ),
        bf.BenchRun(include=["py-window-end"], skill_mode="no-skill", **common),  # type: ignore[arg-type]
    ]


def test_installed_version_is_the_one_skillci_targets(bench: str) -> None:
    assert bf.version(bench) == bf.BENCHFLOW_VERSION


def test_every_flag_skillci_passes_is_accepted_by_the_real_parser(
    bench: str, tmp_path: Path
) -> None:
    for run in _runs(tmp_path):
        params = bf.parse_check(bench, run.argv(bench))
        assert params["tasks_dir"] == str(run.tasks_dir)
        assert params["include"] == run.include
        assert params["agent"] == run.agent and params["model"] == run.model
        assert params["concurrency"] == run.concurrency
        assert params["jobs_dir"] == str(run.jobs_dir)
        assert params["skill_mode"] == run.skill_mode
        assert params["skills_dir"] == (str(run.skills_dir) if run.skills_dir else None)
        assert params["agent_env"] == (
            [f"{k}={v}" for k, v in sorted(run.agent_env.items())] if run.agent_env else []
        )
        # --sandbox is the parameter BenchFlow calls `environment`
        assert params["environment"] == "docker"
        if run.image:
            override = json.loads(str(params["config_override"]))
            assert override == {"sandbox": {"docker_image": run.image}}
    # and the help text names each flag
    text = subprocess.run(
        [bench, "eval", "run", "--help"],
        capture_output=True,
        text=True,
        check=True,
        env={"COLUMNS": "250", "PATH": "/usr/bin:/bin"},
    ).stdout
    for flag in {a for r in _runs(tmp_path) for a in r.argv(bench) if a.startswith("--")}:
        assert f"│ {flag} " in text or f" {flag}," in text or f",{flag} " in text, flag


def test_the_parser_check_can_fail(bench: str, tmp_path: Path) -> None:
    argv = [*_runs(tmp_path)[1].argv(bench), "--no-such-flag"]
    with pytest.raises(RunnerError, match="rejected"):
        bf.parse_check(bench, argv)


def test_a_real_invocation_gets_past_argument_parsing(bench: str, tmp_path: Path) -> None:
    run = bf.BenchRun(
        tasks_dir=tmp_path / "no-tasks-here",
        include=["x"],
        agent="opencode",
        model="p/m",
        jobs_dir=tmp_path / "jobs",
        skills_dir=tmp_path / "skills",
        agent_env={"A": "B"},
    )
    code = bf.run(bench, run, log=tmp_path / "bench.log", timeout=120)
    log = (tmp_path / "bench.log").read_text()
    assert code == 1 and "--tasks-dir not found" in log  # failed on the value, not the flags
    assert "No such option" not in log


def test_missing_bench_is_reported_with_the_install_hint(tmp_path: Path) -> None:
    with pytest.raises(RunnerError, match="not found") as err:
        bf.find_bench(tmp_path / "bench")
    assert "pip install benchflow==0.7.11" in (err.value.hint or "")
