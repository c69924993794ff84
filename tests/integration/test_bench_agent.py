"""``skillci bench --agent``: the student arms run in the agent named, the teacher in builtin.

On a one-task validation suite (a copy of the bundled evals): the oracle agent passes every
task of the student arms and noop none, while the teacher's reference row is the same
builtin sim teacher in both runs; the loop arms refuse an agent they cannot gate, before
any trial runs. A real agent (Codex, against a loopback scripted model) in the service step.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from skillci.cli.main import main
from skillci.trace.store import TraceStore
from tests import services
from tests.conftest import ROOT
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.agents.test_real_agents import routes  # noqa: F401 - a fixture

SKILL = ROOT / "skills" / "repo-debugger"


def small_repo(dest: Path, tasks: list[str]) -> Path:
    shutil.copytree(ROOT / "evals", dest / "evals", ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("validation", "discovery"):
        (dest / "evals" / "suites" / f"{name}.yaml").write_text(
            f"schema_version: 1\nname: {name}\nsplit: {name}\ntasks:\n"
            + "".join(f"  - {t}\n" for t in tasks)
        )
    return dest


def bench(repo: Path, home: Path, *extra: str) -> list[str]:
    return ["bench", "--repo", str(repo), "--home", str(home), "--skill", str(SKILL), *extra]


def rows_of(out: str) -> dict[str, Any]:
    return {r["arm"]: r for r in json.loads(out)}


def test_unregistered_agent_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(bench(ROOT, tmp_path / "h", "--agent", "no-such-agent")) == 2
    err = capsys.readouterr().err
    assert "no-such-agent" in err and "builtin" in err and "noop" in err
    assert not (tmp_path / "h").exists()  # refused before a trial or a state dir


def test_loop_arms_refuse_an_agent_they_cannot_gate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(bench(ROOT, tmp_path / "h", "--agent", "oracle", "--arms", "original,skillci")) == 2
    err = " ".join(capsys.readouterr().err.split())
    assert "--agent oracle cannot be the student of the loop arms (skillci)" in err
    assert not (tmp_path / "h").exists()


@pytest.mark.slow  # 38-48 s at load 5 on 2 cores: the sim teacher imports litellm (~8 s idle)
def test_student_arms_run_in_the_agent_and_the_teacher_in_builtin(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    repo = small_repo(tmp_path / "repo", ["cfg-log-level"])
    rows: dict[str, dict[str, Any]] = {}
    for agent in ("oracle", "noop"):
        home = tmp_path / agent
        argv = bench(repo, home, "--agent", agent, "--arms", "no-skill,original,teacher")
        assert main([*argv, "--json", "--quiet"]) == 0
        rows[agent] = rows_of(capsys.readouterr().out)
        records = TraceStore(home).records()
        teacher = {r.runtime.harness for r in records if r.agent_role == "teacher"}
        student = {r.runtime.harness for r in records if r.agent_role != "teacher"}
        assert (teacher, student) == ({"skillci-builtin"}, {agent}), (teacher, student)
    for arm in ("no-skill", "original"):
        assert rows["oracle"][arm]["success"]["value"] == 1.0
        assert rows["noop"][arm]["success"]["value"] == 0.0
        assert rows["oracle"][arm]["trials"] == rows["noop"][arm]["trials"] == 1
    # the teacher is the same reference in both runs: builtin sim/teacher
    assert rows["oracle"]["teacher"]["success"] == rows["noop"]["teacher"]["success"]


@pytest.mark.agents  # the real Codex CLI (pinned) against a loopback scripted model
def test_codex_is_the_student_of_the_reference_arms(
    routes: FakeOpenAI,  # noqa: F811 - the fixture imported above
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    repo = small_repo(tmp_path / "repo", ["cfg-log-level"])
    home = tmp_path / "home"
    argv = bench(repo, home, "--agent", "codex", "--student", "scripted", "--arms", "original")
    argv += ["--agent-version", services.AGENT_VERSIONS["codex"], "--json", "--quiet"]
    assert main(argv) == 0
    [row] = json.loads(capsys.readouterr().out)
    assert row["arm"] == "original" and row["success"]["value"] == 1.0, row
    records = TraceStore(home).records()
    by_role = {(str(r.agent_role), r.runtime.harness) for r in records}
    assert by_role == {("student", "codex"), ("teacher", "skillci-builtin")}, by_role
    assert len(routes.requests) >= 2  # both student arms (no-skill, original) called the route
