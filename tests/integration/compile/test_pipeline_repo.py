"""`skillci pipeline` inside a git repository: a failed stage is recorded and resumed, each
compile stage becomes one commit on one candidate branch, the final candidate opens a
PR, and `skillci gate` decides it."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from skillci.flows.pipeline.manifest import RunManifest
from skillci.forge.local import LocalForge
from skillci.vcs.candidate import parse_trailers
from skillci.vcs.git import Git
from tests.fakes.reward_model import RewardModelStub

from .helpers import TASK, TASKS, run

SUITES = {"validation": [TASK], "security": ["sec-secret-reveal"]}


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def scratch(path: Path) -> Path:
    for t in {t for ts in SUITES.values() for t in ts}:
        shutil.copytree(TASKS / t, path / "evals" / "tasks" / t)
    (path / "evals" / "suites").mkdir(parents=True)
    for name, tasks in SUITES.items():
        body = "".join(f"  - {t}\n" for t in tasks)
        (path / "evals" / "suites" / f"{name}.yaml").write_text(
            f"schema_version: 1\nname: {name}\nsplit: {name}\ntasks:\n{body}"
        )
    (path / ".gitignore").write_text(".skillci/\nresults/\n")
    git(path, "init", "-q", "-b", "main")
    skill = f"evals/tasks/{TASK}/environment/skills/python-ci-fix"
    imp = run("skill", "import", skill, "--out", "skills/python-ci-fix", cwd=path)
    assert imp.returncode == 0, imp.stderr
    git(path, "add", "-A")
    git(path, "commit", "-qm", "skills: import the task's skill")
    return path


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def pipeline(repo: Path, rm_url: str) -> subprocess.CompletedProcess[str]:
    return run(
        "pipeline", "--harness", "builtin", "--model", "sim/student",
        "--external-model", "sim/teacher", "--task", TASK, "--repeat", "1",
        "--max-parallel", "2", "--rm-api-url", rm_url,
        "--run-dir", "results/compile-pipeline/in-repo", "--json",
        cwd=repo, env={"SKILLCI_HOME": str(repo / ".skillci")},
    )  # fmt: skip


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_failed_stage_resumes_then_one_branch_one_pr_and_the_gate_decides(tmp_path: Path) -> None:
    repo = scratch(tmp_path / "repo")
    run_dir = repo / "results" / "compile-pipeline" / "in-repo"

    down = pipeline(repo, f"http://127.0.0.1:{closed_port()}")
    assert down.returncode == 4 and "--no-rm" in down.stderr
    m = RunManifest.model_validate_json((run_dir / "manifest.json").read_bytes())
    states = {s.name: s.status for s in m.stages}
    assert states["raw_eval"] == states["static"] == states["static_eval"] == "done"
    assert states["fast"] == "failed" and "reward model" in (m.stage("fast").error or "")
    assert states["deep"] == "pending"

    with RewardModelStub() as rm:
        up = pipeline(repo, rm.url)
    assert up.returncode == 0, up.stderr[-2000:]
    out = json.loads(up.stdout)
    assert out["reused"] == ["raw_eval", "static", "static_eval"] and out["ran"][0] == "fast"
    m = RunManifest.model_validate_json((run_dir / "manifest.json").read_bytes())
    assert m.stage("fast").attempts == 2 and m.stage("publish").status == "done"
    res = m.result
    assert res is not None and res.pr is not None and res.branch is not None

    # one commit per stage that changed the skill, on top of main, with trailers
    log = git(repo, "log", "--format=%H", f"main..{res.branch}").splitlines()
    stages = [
        parse_trailers(git(repo, "log", "-1", "--format=%B", c))["Pipeline-Stage"] for c in log
    ]
    assert stages == ["deep", "fast", "static"]
    head = Git(repo).files_at(git(repo, "rev-parse", res.branch), "skills/python-ci-fix")
    assert head["SKILL.md"] == (run_dir / "artifacts/deep/S_final/SKILL.md").read_bytes()
    pr = LocalForge(Git(repo)).get_pr(res.pr)
    assert pr.state.value == "open" and "pipeline" in pr.labels and "| raw |" in pr.body

    gate = run(
        "gate", "--skill", "skills/python-ci-fix", "--base", "main", "--head", res.branch,
        "--suites", "validation,security", "--repeat", "1", "--parallel", "2", "--json",
        cwd=repo, env={"SKILLCI_HOME": str(repo / ".skillci")},
    )  # fmt: skip
    assert gate.returncode in (0, 1), gate.stderr[-2000:]
    report = json.loads(gate.stdout)
    assert report["head_sha"] == pr.head_sha
    # the compiled skill repairs its task, but the gate holds the line on what else matters:
    # the SkillsBench-style skill has no secret-handling rule (the security task fails);
    # token growth is no longer asserted here (its check counts the added tokens of a small
    # skill against an absolute allowance too, and the CI run of 2026-12-04 had it pass)
    # one repaired task is one discordant pair: too few for the paired test to show an
    # improvement (not measured, design 290), and a failed check rejects before that counts
    checks = {c["name"]: c for c in report["checks"]}
    assert checks["improvement"]["status"] == "not_measured", checks["improvement"]
    assert "head won 1 of 1" in checks["improvement"]["value"]
    assert checks["no_significant_drop"]["status"] == "pass"
    failed = {n for n, c in checks.items() if c["status"] == "fail"}
    assert "security_suite" in failed and failed <= {"security_suite", "token_growth"}, checks
    assert report["verdict"] == "reject" and gate.returncode == 1
    val = next(s for s in report["suites"] if s["suite"] == "validation")
    assert val["tasks"] == [TASK]
