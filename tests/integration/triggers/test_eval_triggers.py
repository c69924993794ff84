"""``skillci eval triggers`` end to end on a repository of two skills, through litellm and
the sim's trigger model: metrics, one run record per decision, reuse and resume."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.skill.triggers import split_of
from skillci.trace.store import TraceStore

MANIFEST = """schema_version: 1
name: {name}
version: 0.1.0
target_runtime: {{model_family: sim, agent_harness: builtin}}
"""
SUITE = """schema_version: 1
runs: 2
queries:
- {id: fix-ci, query: my python test fails in the CI log please fix it, should_trigger: true}
- {id: fix-trace, query: fix the failing test from this python stack trace, should_trigger: true}
- {id: merge-forms, query: merge these two pdf forms, should_trigger: false, near_miss: pdf}
- {id: new-feature, query: write new features for the python repository, should_trigger: false}
- {id: poem, query: a poem about autumn, should_trigger: false}
"""


def _skill(root: Path, name: str, description: str, suite: str | None = None) -> Path:
    d = root / "skills" / name
    (d / "skillci" / "evals").mkdir(parents=True)
    (d / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n# {name}\n")
    (d / "skillci.yaml").write_text(MANIFEST.format(name=name))
    if suite:
        (d / "skillci" / "evals" / "triggers.yaml").write_text(suite)
    return d


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded() -> None:
    """Import litellm (seconds on a loaded machine) once, in setup, not in a test's call."""
    from skillci.providers.client import litellm_module

    litellm_module()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    _skill(
        tmp_path,
        "repo-debugger",
        "Fix a failing test in a Python repository from a CI log or stack trace. "
        "Not for writing new features.",
        SUITE,
    )
    _skill(tmp_path, "pdf", "Fill and merge PDF forms.")
    return tmp_path


def _run(repo: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> dict:  # type: ignore[type-arg]
    argv = ["eval", "triggers", "--skill", str(repo / "skills/repo-debugger"), "--root", str(repo)]
    assert main([*argv, "--home", str(repo / ".skillci"), "--json", *extra]) == 0
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


def test_metrics_records_and_reuse(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    res = _run(repo, capsys)
    assert res["catalogue"] == ["pdf", "repo-debugger"]
    by_id = {o["query_id"]: o["choices"] for o in res["outcomes"]}
    assert by_id == {
        "fix-ci": ["repo-debugger"] * 2,
        "fix-trace": ["repo-debugger"] * 2,
        "merge-forms": ["pdf"] * 2,
        "new-feature": [None] * 2,
        "poem": [None] * 2,
    }
    m = res["metrics"]
    assert (m["precision"], m["recall"], m["invocation_rate"]) == (1.0, 1.0, 0.4)
    assert (res["ran"], res["cached"]) == (10, 0)
    store = TraceStore(repo / ".skillci")
    recs = store.records(suite="triggers")
    assert len(recs) == 10
    rec = next(r for r in recs if r.task_id == "trigger/merge-forms")
    assert rec.metadata["trigger"]["chosen"] == "pdf"
    assert rec.evaluation.passed and rec.final_output == "pdf"
    assert rec.events[0].content.count("<skill name=") == 2
    assert rec.split == split_of("merge-forms")
    again = _run(repo, capsys)
    assert (again["ran"], again["cached"]) == (0, 10)
    assert again["metrics"] == m
    # another presentation is another decision
    folder = _run(repo, capsys, "--harness", "folder")
    assert folder["ran"] == 10 and folder["metrics"]["recall"] == 1.0


def test_a_partial_run_resumes_where_it_stopped(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    part = _run(repo, capsys, "--split", "train")
    n = sum(len(o["choices"]) for o in part["outcomes"])
    assert 0 < n < 10 and part["ran"] == n
    full = _run(repo, capsys)
    assert (full["cached"], full["ran"]) == (n, 10 - n)


def test_a_broken_description_loses_recall(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    md = repo / "skills/repo-debugger/SKILL.md"
    md.write_text("---\nname: repo-debugger\ndescription: Helps with code.\n---\n# x\n")
    res = _run(repo, capsys)
    assert res["metrics"]["recall"] == 0.0
    assert res["metrics"]["confusion"] == {"none": 4}


def test_a_query_the_simulator_cannot_read_is_exit_4_not_a_miss(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """sim/student reads Latin and CJK only: a Russian query is a model error naming the
    script (exit 4, nothing recorded for it), never a "none" decision counted as a miss."""
    suite = repo / "skills/repo-debugger/skillci/evals/triggers.yaml"
    suite.write_text(
        SUITE + "- {id: fix-ru, query: Почини падающий тест в репозитории, should_trigger: true}\n"
    )
    argv = ["eval", "triggers", "--skill", str(repo / "skills/repo-debugger"), "--root", str(repo)]
    assert main([*argv, "--home", str(repo / ".skillci"), "--json"]) == 4
    err = " ".join(capsys.readouterr().err.split())
    assert "cannot read Cyrillic text" in err and "use a real route" in err, err
    recs = TraceStore(repo / ".skillci").records(suite="triggers")
    assert not [r for r in recs if r.task_id == "trigger/fix-ru"]


def test_dry_run_and_missing_suite(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["eval", "triggers", "--skill", str(repo / "skills/repo-debugger"), "--root", str(repo)]
    assert main([*argv, "--home", str(repo / ".skillci"), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would decide 5 queries x 2 runs = 10" in out
    assert not (repo / ".skillci").exists()
    argv[3] = str(repo / "skills/pdf")
    assert main([*argv, "--home", str(repo / ".skillci")]) == 2
    assert "no trigger suite" in capsys.readouterr().err


def test_tasks_new_triggers_scaffolds_a_suite_that_runs(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pdf = repo / "skills/pdf"
    (pdf / "SKILL.md").write_text(
        "---\nname: pdf\ndescription: Fill and merge PDF forms. Use when a user asks to "
        "merge PDF files or fill a PDF form. Not for editing Word documents.\n---\n# pdf\n"
    )
    argv = ["tasks", "new", "--triggers", "--skill", str(pdf)]
    assert main([*argv, "--dry-run"]) == 0
    assert not (pdf / "skillci/evals/triggers.yaml").exists()
    assert main(argv) == 0
    text = (pdf / "skillci/evals/triggers.yaml").read_text()
    assert "should_trigger: true" in text and "should_trigger: false" in text
    assert main(argv) == 2  # never overwrites
    capsys.readouterr()
    res = json.loads(_run_skill(repo, pdf, capsys))
    assert res["metrics"]["recall"] == 1.0  # its own words trigger it
    assert main(["tasks", "new", "--repo", str(repo)]) == 2


def _run_skill(repo: Path, skill: Path, capsys: pytest.CaptureFixture[str]) -> str:
    argv = ["eval", "triggers", "--skill", str(skill), "--root", str(repo), "--json"]
    assert main([*argv, "--home", str(repo / ".skillci")]) == 0
    return capsys.readouterr().out


def test_import_can_seed_a_trigger_suite(tmp_path: Path) -> None:
    src = tmp_path / "plain"
    src.mkdir()
    (src / "SKILL.md").write_text(
        "---\nname: art\ndescription: Generative art in p5.js. Use when users request "
        "flow fields or particle systems.\n---\n# art\n"
    )
    out = tmp_path / "pkg"
    assert main(["skill", "import", str(src), "--out", str(out), "--seed-triggers"]) == 0
    assert "flow fields or particle systems" in (out / "skillci/evals/triggers.yaml").read_text()
    plain = tmp_path / "pkg2"
    assert main(["skill", "import", str(src), "--out", str(plain)]) == 0
    assert not (plain / "skillci/evals/triggers.yaml").exists()
