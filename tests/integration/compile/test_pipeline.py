"""`skillci pipeline` end to end on the bundled SkillsBench-style task with the sim models
and the loopback reward-model stub: every stage, the manifest, the deliverable, resume
after SIGKILL at random points, the lock, and the preconditions."""

from __future__ import annotations

import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from filelock import FileLock

from skillci.flows.pipeline.manifest import STAGES, RunManifest
from skillci.flows.pipeline.run import PipelineOptions, PipelineOutcome, run_pipeline
from skillci.runners.trialdir import INCOMPLETE, MARKER, TrialMeta, read_complete
from skillci.skill.lint import lint
from skillci.skill.package import SkillPackage
from tests.fakes.reward_model import RewardModelStub

from .helpers import TASK, cli, snapshot_task

REPEAT = 1
FAST_N = 6


@pytest.fixture(scope="module")
def tasks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return snapshot_task(tmp_path_factory.mktemp("tasks"))


@pytest.fixture(scope="module")
def rm() -> Iterator[RewardModelStub]:
    with RewardModelStub() as stub:
        yield stub


def args(rm_url: str, run_dir: str, tasks: Path) -> list[str]:
    return [
        "pipeline",
        "--harness", "builtin",
        "--model", "sim/student",
        "--external-model", "sim/teacher",
        "--task", TASK,
        "--tasks-root", str(tasks),
        "--repeat", str(REPEAT),
        "--rm-api-url", rm_url,
        "--max-parallel", "2",
        "--run-dir", run_dir,
        "--no-pr",
    ]  # fmt: skip


@pytest.fixture(scope="module")
def reference(
    tmp_path_factory: pytest.TempPathFactory, rm: RewardModelStub, tasks: Path
) -> PipelineOutcome:
    root = tmp_path_factory.mktemp("ref")
    opts = PipelineOptions(
        harness="builtin",
        model="sim/student",
        external_model="sim/teacher",
        task=TASK,
        root=root,
        run_dir=Path("results/compile-pipeline/ref"),
        tasks_root=tasks,
        repeat=REPEAT,
        rm_url=rm.url,
        max_parallel=2,
        publish=False,
    )
    return run_pipeline(opts)


def artifacts(run_dir: Path) -> dict[str, bytes]:
    """Every artifact file byte for byte; Deep's rollout trials by their trial key (a
    trial's record carries its own run id and timings: it is evidence, not output)."""
    root = run_dir / "artifacts"
    out: dict[str, bytes] = {}
    for p in sorted(root.rglob("*")):
        parts = p.relative_to(root).parts
        if not p.is_file() or any(x.startswith(".") for x in parts):
            continue
        trial = next((i for i, x in enumerate(parts) if x.startswith("test-")), None)
        if trial is None:
            out["/".join(parts)] = p.read_bytes()
        elif p.name == MARKER:
            key = TrialMeta.model_validate_json(p.read_bytes()).key
            out["/".join(parts)] = key.encode()
    return out


def trial_dirs(run_dir: Path) -> dict[str, list[str]]:
    """stage dir -> its test-* dirs, every one of them complete."""
    out: dict[str, list[str]] = {}
    for d in sorted((run_dir / "traces" / TASK).iterdir()):
        names = []
        for t in sorted(d.glob("test-*")):
            meta = TrialMeta.model_validate_json((t / MARKER).read_bytes())
            assert read_complete(t, meta.key) is not None, t
            names.append(t.name)
        out[d.name] = names
    return out


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_end_to_end_every_stage_runs_and_s_final_lints_clean(reference: PipelineOutcome) -> None:
    m = reference.manifest
    assert [s.name for s in m.stages] == list(STAGES)
    for s in m.stages:
        assert s.status == ("skipped" if s.name == "publish" else "done"), s
        assert s.attempts == (0 if s.name == "publish" else 1)
        if s.name != "publish":
            assert s.started_at and s.finished_at and s.error is None
    res = m.result
    assert res is not None and set(res.evals) == {"raw", "static", "fast", "final"}
    assert res.evals["static"].trials == FAST_N and res.evals["raw"].trials == REPEAT
    final = SkillPackage.from_dir(reference.run_dir / res.final_skill)
    assert res.final_skill == "artifacts/deep/S_final" and final.content_hash == res.final_hash
    assert lint(final).errors == 0 and res.lint_errors == 0
    report = (reference.run_dir / "report.md").read_text()
    for row in ("| raw |", "| static |", "| fast |", "| final (S_final) |"):
        assert row in report
    # the sim student fails with the prose skill and passes once it is compiled
    assert res.evals["raw"].pass_rate == 0.0 and res.evals["final"].pass_rate == 1.0
    fast = m.stage("fast")
    assert not any("pre-scores" in n for n in fast.notes)  # the reward model ranked them
    assert trial_dirs(reference.run_dir) == {
        "fast": ["test-000"],
        "final": ["test-000"],
        "raw": ["test-000"],
        "static": [f"test-{i:03d}" for i in range(FAST_N)],
    }
    for sub in ("input", "static", "fast", "deep"):
        assert (reference.run_dir / "artifacts" / sub).is_dir()


@pytest.mark.slow  # > 20 s: 29 (its module fixture, the reference pipeline run) s wall in CI's default run of 2026-12-01 (tests/budget.py)
def test_rerun_reuses_every_stage(
    reference: PipelineOutcome, rm: RewardModelStub, tasks: Path
) -> None:
    root = reference.run_dir.parents[2]
    code, _out, err = cli(*args(rm.url, "results/compile-pipeline/ref", tasks), "--root", str(root))
    assert code == 0, err
    after = RunManifest.model_validate_json((reference.run_dir / "manifest.json").read_bytes())
    assert after.comparable() == reference.manifest.comparable()
    assert all(s.attempts <= 1 for s in after.stages)


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_sigkill_at_random_points_then_resume_equals_an_uninterrupted_run(
    reference: PipelineOutcome, rm: RewardModelStub, tmp_path: Path, tasks: Path
) -> None:
    rng = random.Random(int(os.environ.get("SKILLCI_KILL_SEED", "20261129")))
    cmd = [sys.executable, "-m", "skillci", *args(rm.url, "results/compile-pipeline/killed", tasks)]
    cmd += ["--root", str(tmp_path), "--quiet"]
    env = {**os.environ, "COLUMNS": "200"}
    kills = 0
    for _ in range(3):
        proc = subprocess.Popen(
            cmd, cwd=tmp_path, env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        try:
            proc.wait(timeout=rng.uniform(4.0, 18.0))
            break
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            kills += 1
            time.sleep(0.2)
    final = subprocess.run(
        cmd, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert final.returncode == 0, final.stderr[-2000:]
    assert kills >= 1
    run_dir = tmp_path / "results" / "compile-pipeline" / "killed"
    m = RunManifest.model_validate_json((run_dir / "manifest.json").read_bytes())
    assert m.comparable() == reference.manifest.comparable()
    assert artifacts(run_dir) == artifacts(reference.run_dir)
    assert trial_dirs(run_dir) == trial_dirs(reference.run_dir)
    # quarantined dirs are only ever incomplete ones: no finished trial was thrown away
    for inc in run_dir.rglob(INCOMPLETE):
        for d in inc.iterdir():
            assert not (d / MARKER).exists(), d


def test_one_process_per_run_dir(tmp_path: Path, rm: RewardModelStub, tasks: Path) -> None:
    run_dir = tmp_path / "results" / "compile-pipeline" / "locked"
    run_dir.mkdir(parents=True)
    with FileLock(str(run_dir / ".lock")):
        code, _, err = cli(*args(rm.url, str(run_dir), tasks), "--root", str(tmp_path))
    assert code == 2 and "another process" in err


@pytest.mark.slow  # its setup runs the reference pipeline: 22.7 s in CI (2026-12-03)
def test_preconditions(
    tmp_path: Path, rm: RewardModelStub, reference: PipelineOutcome, tasks: Path
) -> None:
    base = args(rm.url, "results/compile-pipeline/x", tasks)
    root = ["--root", str(tmp_path)]

    def with_(flag: str, value: str) -> list[str]:
        out = list(base)
        out[out.index(flag) + 1] = value
        return out

    code, out, err = cli(*base, *root, "--dry-run")
    assert code == 0 and "dry run" in out and not (tmp_path / "results").exists()
    code, _, err = cli(*with_("--task", "no-such-task"), *root)
    assert code == 2 and "no task 'no-such-task'" in err
    code, _, err = cli(*with_("--run-dir", "elsewhere/x"), *root)
    assert code == 2 and "results/compile-pipeline" in err
    code, _, err = cli(*with_("--harness", "opencode"), *root)
    assert code == 2 and "--harness builtin" in err
    # a task with two skills needs --skill to name the one under test; zero is an error
    two = tmp_path / "tasks"
    shutil.copytree(tasks / TASK, two / TASK)
    skills = two / TASK / "environment" / "skills"
    shutil.copytree(skills / "python-ci-fix", skills / "second")
    code, _, err = cli(*with_("--tasks-root", str(two)), *root)
    assert code == 2 and "holds 2 skills" in err and "--skill NAME" in err
    code, out, err = cli(*with_("--tasks-root", str(two)), *root, "--skill", "second", "--dry-run")
    assert code == 0 and "dry run" in out
    shutil.rmtree(skills)
    code, _, err = cli(*with_("--tasks-root", str(two)), *root)
    assert code == 2 and "no skill under environment/skills" in err
    # a run dir belongs to its inputs
    ref_root = reference.run_dir.parents[2]
    other = args(rm.url, "results/compile-pipeline/ref", tasks)
    other[other.index("--repeat") + 1] = "2"
    code, _, err = cli(*other, "--root", str(ref_root))
    assert code == 2 and "other inputs" in err and "options" in err
