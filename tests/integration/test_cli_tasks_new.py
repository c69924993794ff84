"""``skillci tasks new`` scaffolds a task that passes ``validate --run``; a verifier that
passes with no work, or rejects the reference solution, is reported (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.tasks.scaffold import add_to_suite_text

SUITE = "schema_version: 1\nname: validation\nsplit: validation\ntasks: []\n"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    (tmp_path / "r" / "evals" / "suites").mkdir(parents=True)
    (tmp_path / "r" / "evals" / "suites" / "validation.yaml").write_text(SUITE)
    return tmp_path / "r"


def test_new_task_passes_run_checks_and_broken_verifiers_are_reported(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in ("good", "trivial", "broken"):
        assert main(["tasks", "new", name, "--repo", str(repo), "--suite", "validation"]) == 0
    assert (
        "tasks:\n  - good\n  - trivial\n  - broken\n"
        in (repo / "evals/suites/validation.yaml").read_text()
    )
    tasks = repo / "evals" / "tasks"
    assert (tasks / "good/tests/test.sh").stat().st_mode & 0o100
    # a verifier that never looks at the workspace
    test_sh = tasks / "trivial/tests/test.sh"
    test_sh.write_text(test_sh.read_text().replace('if [ "$(cat answer.txt', 'if true || [ "$(cat'))
    # a reference solution that writes the wrong answer
    solve = tasks / "broken/solution/solve.sh"
    solve.write_text(solve.read_text().replace("echo done", "echo dome"))
    capsys.readouterr()
    rc = main(["tasks", "validate", "--run", "--json", "--repo", str(repo), str(tasks)])
    assert rc == 2
    runs = {r["task_id"]: r for r in json.loads(capsys.readouterr().out)["runs"]}
    assert {t: r["verdict"] for t, r in runs.items()} == {
        "good": "ok",
        "trivial": "trivially-satisfied",
        "broken": "verifier-broken",
    }
    assert (runs["good"]["oracle_passed"], runs["good"]["noop_passed"]) == (True, False)
    rc = main(["tasks", "validate", "--run", "--repo", str(repo), str(tasks)])
    err = capsys.readouterr().err
    assert rc == 2 and "2 task(s) with a broken or trivially satisfied verifier" in err
    assert main(["tasks", "new", "good", "--repo", str(repo)]) == 2


def test_dry_run_writes_nothing(repo: Path) -> None:
    assert (
        main(["tasks", "new", "x", "--repo", str(repo), "--dry-run", "--suite", "validation"]) == 0
    )
    assert not (repo / "evals" / "tasks").exists()
    assert (repo / "evals/suites/validation.yaml").read_text() == SUITE


def test_add_to_suite_keeps_comments_and_indent() -> None:
    text = "name: v\ntasks:\n    - a  # first\n    # keep\n    - b\nrepeats: 2\n"
    assert add_to_suite_text(text, "c") == (
        "name: v\ntasks:\n    - a  # first\n    # keep\n    - b\n    - c\nrepeats: 2\n"
    )
    assert add_to_suite_text("tasks: [a, b]\n", "c") is None
    assert add_to_suite_text("name: v\n", "c") is None
