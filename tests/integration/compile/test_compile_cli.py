"""`skillci compile profile|static|fast` as a user runs them (real files, real HTTP fakes)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

import pytest

from skillci.compile.mdtext import parse_doc
from skillci.compile.static import deterministic_plan
from skillci.skill.lint import lint
from skillci.skill.package import SKILL_MD, SkillPackage, read_tree
from skillci.skill.porting import import_plain
from skillci.trace.store import TraceStore
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.reward_model import RewardModelStub
from tests.unit.compile.test_fast import batch
from tests.unit.compile.test_profile import skipper, verifier

from .helpers import TASK_SKILL, chdir, cli, cli_json


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("SKILLCI_PROVIDER_ROUTES", raising=False)
    monkeypatch.delenv("SKILLCI_HOME", raising=False)
    with chdir(tmp_path):
        yield tmp_path


def fake_route(tmp: Path, server: FakeOpenAI, monkeypatch: pytest.MonkeyPatch) -> str:
    routes = {
        "schema_version": 1,
        "routes": {
            "fake/planner": {
                "model": "openai/fake-planner",
                "api_base": server.base_url,
                "api_key_env": "SKILLCI_FAKE_KEY",
                "timeout": 10,
                "input_cost_per_token": 0.0,
                "output_cost_per_token": 0.0,
            }
        },
    }
    path = tmp / "routes.json"
    path.write_text(json.dumps(routes))
    monkeypatch.setenv("SKILLCI_PROVIDER_ROUTES", str(path))
    monkeypatch.setenv("SKILLCI_FAKE_KEY", "sk-fake-not-a-secret")
    return "fake/planner"


# ---------------------------------------------------------------------------- profile


def test_profile_from_store_is_written_as_yaml(work: Path) -> None:
    store = TraceStore(work / ".skillci")
    for r in [skipper(0), skipper(1), verifier(2)]:
        store.put(r)
    out = cli_json(
        "compile",
        "profile",
        "--model",
        "sim/student",
        "--from-store",
        "--home",
        str(work / ".skillci"),
    )
    path = Path(out["path"])
    assert path == work / "profiles" / "sim-student.yaml" and path.is_file()
    assert out["profile"]["traits"]["runs"] == 3
    assert out["profile"]["traits"]["verification_skip_rate"] == pytest.approx(2 / 3, abs=1e-3)
    dry = cli_json("compile", "profile", "--model", "sim/teacher", "--dry-run")
    assert not dry["written"] and not (work / "profiles" / "sim-teacher.yaml").exists()


# ---------------------------------------------------------------------------- static


def test_static_deterministic_writes_a_clean_package_and_a_report(work: Path) -> None:
    (work / "profiles").mkdir()
    cli_json("compile", "profile", "--model", "sim/student")  # config-only profile
    out = cli_json(
        "compile",
        "static",
        "--model",
        "sim/student",
        "--input",
        str(TASK_SKILL),
        "--out-root",
        "out",
        "--mode",
        "deterministic",
    )
    skill_dir = work / Path(out["skill_dir"])
    assert skill_dir == work / "out" / "sim-student" / "skills" / "python-ci-fix"
    pkg = SkillPackage.from_dir(skill_dir)
    # the one phrase that is a condition ("when necessary") is kept and flagged, not swapped
    assert lint(pkg).errors == 0
    sk010 = [f for f in lint(pkg).findings if f.code == "SK010"]
    assert [(f.severity, "when necessary" in f.message) for f in sk010] == [("warning", True)]
    src = (TASK_SKILL / SKILL_MD).read_text()
    assert pkg.text(SKILL_MD).startswith(parse_doc(src).frontmatter)
    for name in ("report.json", "report.md", "profile.yaml", "plan.json"):
        assert (skill_dir.parent.parent / name).is_file(), name
    assert out["report"]["plan_source"] == "deterministic"


def test_hybrid_needs_an_external_model(work: Path) -> None:
    code, _out, err = cli(
        "compile",
        "static",
        "--model",
        "sim/student",
        "--input",
        str(TASK_SKILL),
        "--mode",
        "hybrid",
    )
    assert code == 2 and "--external-model" in err


def test_hybrid_dry_run_writes_nothing_and_calls_no_model(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(["{}"]) as server:
        route = fake_route(work, server, monkeypatch)
        out = cli_json(
            "compile",
            "static",
            "--model",
            "sim/student",
            "--input",
            str(TASK_SKILL),
            "--out-root",
            "out",
            "--mode",
            "hybrid",
            "--external-model",
            route,
            "--dry-run",
        )
        assert server.requests == []
    assert not out["written"] and not (work / "out").exists()
    assert any("dry run" in n for n in out["report"]["notes"])


def _plan_answer(drop_last: bool) -> str:
    text = (TASK_SKILL / SKILL_MD).read_text()
    det = deterministic_plan(text)
    paras = []
    for p in det.paragraphs:
        steps = p.steps[:-1] if drop_last and len(p.steps) > 2 else p.steps
        paras.append({"id": f"p{p.section}.{p.block}", "intro": p.intro, "steps": steps})
    return json.dumps({"paragraphs": paras, "move": []})


def test_hybrid_plan_is_one_call_and_a_bad_plan_rolls_back(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI([_plan_answer(drop_last=False)]) as server:
        route = fake_route(work, server, monkeypatch)
        ok = cli_json(
            "compile",
            "static",
            "--model",
            "sim/student",
            "--input",
            str(TASK_SKILL),
            "--out-root",
            "good",
            "--mode",
            "hybrid",
            "--external-model",
            route,
        )
        assert len(server.requests) == 1
        prompt = server.requests[0]["messages"][1]["content"]
        assert "<<<UNTRUSTED-DATA skill_paragraphs" in prompt
    assert ok["report"]["plan_source"] == "model" and not any(
        s["status"] == "rolled_back" for s in ok["report"]["sections"]
    )
    assert (Path(ok["out"]) / "exchange.json").is_file()
    with FakeOpenAI([_plan_answer(drop_last=True)]) as server:
        route = fake_route(work, server, monkeypatch)
        bad = cli_json(
            "compile",
            "static",
            "--model",
            "sim/student",
            "--input",
            str(TASK_SKILL),
            "--out-root",
            "bad",
            "--mode",
            "hybrid",
            "--external-model",
            route,
        )
    rolled = [s for s in bad["report"]["sections"] if s["status"] == "rolled_back"]
    assert rolled and all(any("drop a sentence" in r for r in s["reasons"]) for s in rolled)
    text = (Path(bad["skill_dir"]) / SKILL_MD).read_text()
    for s in rolled:
        assert parse_doc((TASK_SKILL / SKILL_MD).read_text()).sections[s["index"]].text in text


def test_hybrid_invalid_answers_fall_back_to_the_deterministic_plan(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with FakeOpenAI(["no plan", '{"paragraphs": [{"id": "p99.0", "steps": [[0]]}]}']) as server:
        route = fake_route(work, server, monkeypatch)
        out = cli_json(
            "compile",
            "static",
            "--model",
            "sim/student",
            "--input",
            str(TASK_SKILL),
            "--out-root",
            "out",
            "--mode",
            "hybrid",
            "--external-model",
            route,
        )
        assert len(server.requests) == 2
    assert out["report"]["plan_source"] == "deterministic"
    assert any("planning answer invalid" in n for n in out["report"]["notes"])


# ---------------------------------------------------------------------------- fast


def _fast_inputs(work: Path, n_good: int = 3, n_bad: int = 3) -> tuple[Path, Path]:
    pkg = import_plain(read_tree(TASK_SKILL), source="python-ci-fix")
    skill = work / "skill"
    pkg.to_dir(skill)
    traces = work / "traces"
    traces.mkdir()
    for r in batch(pkg.content_hash, n_good, n_bad):
        (traces / f"{r.run_id}.json").write_text(r.model_dump_json())
    return skill, traces


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_fast_refuses_fewer_than_six_trajectories(work: Path) -> None:
    skill, traces = _fast_inputs(work, 2, 3)
    code, _, err = cli(
        "compile",
        "fast",
        "--traces",
        str(traces),
        "--skill",
        str(skill),
        "--model",
        "sim/teacher",
        "--no-rm",
    )
    assert code == 2 and "at least 6" in err


def test_fast_with_the_reward_model_caches_and_force_recomputes(work: Path) -> None:
    skill, traces = _fast_inputs(work)
    args = [
        "compile",
        "fast",
        "--traces",
        str(traces),
        "--skill",
        str(skill),
        "--model",
        "sim/teacher",
    ]
    with RewardModelStub() as rm:
        first = cli_json(*args, "--rm-api-url", rm.url, "--output", "fo", "--max-parallel", "2")
        n_requests = len(rm.requests)
        again = cli_json(*args, "--rm-api-url", rm.url, "--output", "fo")
        assert len(rm.requests) == n_requests  # cache hit: the RM was not asked again
        forced = cli_json(*args, "--rm-api-url", rm.url, "--output", "fo", "--force")
        assert len(rm.requests) > n_requests
    assert not first["cached"] and again["cached"] and not forced["cached"]
    rep = first["report"]
    assert rep["reward_model"] == rm.url and all(s["rm_score"] is not None for s in rep["scores"])
    cand = SkillPackage.from_dir(Path(first["candidate"]))
    assert cand.content_hash == rep["candidate_hash"] and (work / "fo" / "patch.yaml").is_file()
    assert json.loads((work / "fo" / "scores.json").read_text())[0]["label"]
    # a tampered artifact is not reused
    (Path(first["candidate"]) / SKILL_MD).write_text("tampered")
    after = cli_json(*args, "--no-rm", "--output", "fo")
    assert not after["cached"]


def test_fast_without_the_service_fails_with_a_hint_or_runs_with_no_rm(work: Path) -> None:
    skill, traces = _fast_inputs(work)
    args = [
        "compile",
        "fast",
        "--traces",
        str(traces),
        "--skill",
        str(skill),
        "--model",
        "sim/teacher",
    ]
    code, _, err = cli(*args, "--rm-api-url", f"http://127.0.0.1:{closed_port()}", "--output", "x")
    assert code == 4 and "--no-rm" in err
    out = cli_json(*args, "--no-rm", "--output", "x", "--score-output", "s.json")
    assert out["report"]["reward_model"] is None and "pre-scores" in out["report"]["rm_note"]
    assert (work / "s.json").is_file()
    assert "pre-scores only" in (work / "x" / "fast-report.md").read_text()


def test_static_in_a_repo_proposes_one_branch_and_pr(work: Path) -> None:
    import subprocess

    from skillci.forge.local import LocalForge
    from skillci.vcs.git import Git

    def git(*a: str) -> str:
        return subprocess.run(
            ["git", *a], cwd=work, check=True, capture_output=True, text=True
        ).stdout

    git("init", "-q", "-b", "main")
    pkg = import_plain(read_tree(TASK_SKILL), source="python-ci-fix")
    pkg.to_dir(work / "skills" / "python-ci-fix")
    (work / ".gitignore").write_text("out/\n.skillci/\n")
    git("add", "-A")
    git("commit", "-qm", "import")
    args = (
        "compile",
        "static",
        "--model",
        "sim/student",
        "--input",
        "skills/python-ci-fix",
        "--out-root",
        "out",
    )
    first = cli_json(*args)
    branch = first["pr"][0].removeprefix("branch ")
    assert first["pr"][1] == "pr #1"
    changed = git("diff", "--name-only", f"main..{branch}").split()
    assert changed == ["skills/python-ci-fix/SKILL.md"]
    again = cli_json(*args)
    assert again["pr"] == first["pr"]
    forge = LocalForge(Git(work))
    assert len(forge.list_prs()) == 1 and "static-compile" in forge.get_pr(1).labels
    assert cli_json(*args, "--no-pr")["pr"] == []
    (work / "skills" / "python-ci-fix" / "SKILL.md").write_text("changed on disk\n")
    dirty = cli_json(*args[:-2], "--out-root", "out2")
    assert "commit it first" in dirty["pr"][0]


def test_fast_reads_benchflow_job_dirs_through_the_importer(work: Path) -> None:
    from tests.integration.importers.test_benchflow_import import result, rollout

    pkg = import_plain(read_tree(TASK_SKILL), source="python-ci-fix")
    pkg.to_dir(work / "skill")
    for i in range(6):
        reward = 1.0 if i < 3 else 0.0
        rollout(
            work / "traces" / f"job{i}",
            "py-shelf-slots",
            result("py-shelf-slots", rewards={"reward": reward}),
        )
    out = cli_json(
        "compile", "fast", "--traces", str(work / "traces"), "--skill", str(work / "skill"),
        "--model", "sim/teacher", "--no-rm", "--output", "fo",
    )  # fmt: skip
    rep = out["report"]
    assert rep["trajectories"] == 6 and rep["skill_hash"] == pkg.content_hash
    assert rep["scores"][0]["label"].startswith("job0/")
    assert [s["reward"] for s in rep["scores"]] == [1.0, 1.0, 1.0, 0.0, 0.0, 0.0]
