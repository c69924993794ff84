"""Artifacts from outside are data (docs/design/312): a 100k-deep JSON is exit 2 naming the file
in every command that reads one (not a RecursionError and a crash log), an imported job dir
holding a symlink is refused, and a crash log lands in the state dir, not the system temp dir."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from skillci.cli import main as cli_main
from skillci.cli.main import main
from skillci.fsutil import MAX_JSON_DEPTH, json_depth, load_json
from tests.conftest import ROOT
from tests.integration.test_cli_patch import GOOD

DEEP = "[" * 100_000 + "]" * 100_000
HARBOR_JOB = (
    ROOT
    / "tests"
    / "fixtures"
    / "harness-results"
    / "harbor"
    / "2026-04-28__21-24-42__openclaw-irc-single"
)
BENCHFLOW = ROOT / "tests" / "fixtures" / "harness-results" / "benchflow"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "state"))
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.chdir(tmp_path)
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    return tmp_path


def _no_crash_logs_in_temp() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("skillci-crash-*")}


def test_deep_json_is_exit_2_naming_the_file_in_every_reader(
    work: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = _no_crash_logs_in_temp()
    jsonl = work / "deep.jsonl"
    jsonl.write_text(DEEP + "\n")
    job = work / "job"
    shutil.copytree(HARBOR_JOB, job)
    (job / "result.json").write_text(DEEP)
    shard = work / "shard"
    shard.mkdir()
    (shard / "shard.json").write_text(DEEP)
    patch = work / "PATCH.yaml"
    patch.write_text(GOOD)
    skill = work / "repo-debugger"
    shutil.copytree(ROOT / "skills" / "repo-debugger", skill)
    commands = {
        "trace ingest": (["trace", "ingest", str(jsonl)], "deep.jsonl:1"),
        "trace import": (["trace", "import", "--format", "harbor", str(job)], "result.json"),
        "evals merge": (["evals", "merge", str(shard), "--repo", str(work)], "shard.json"),
        "patch check": (
            ["patch", "check", str(patch), "--skill", str(skill), "--untrusted", str(jsonl)],
            "deep.jsonl:1",
        ),
    }
    for name, (argv, where) in commands.items():
        capsys.readouterr()
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert f"nested deeper than {MAX_JSON_DEPTH} levels" in err, (name, err)
        assert where in err and "RecursionError" not in err, (name, err)
    assert _no_crash_logs_in_temp() == before


def test_load_json_measures_depth_without_recursion() -> None:
    assert json_depth({"a": [1, {"b": []}]}) == 4 and json_depth(7) == 0
    assert load_json('{"a": [1]}', file="x") == {"a": [1]}
    ok = "[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH
    assert json_depth(load_json(ok, file="x")) == MAX_JSON_DEPTH
    with pytest.raises(Exception, match="nested deeper") as err:
        load_json("[" + ok + "]", file="f.json", line=3)
    assert getattr(err.value, "exit_code", None) == 2 and "f.json:3" in str(err.value)


@pytest.mark.parametrize(
    ("fmt", "source", "victim"),
    [
        ("harbor", HARBOR_JOB, "openclaw-irc-single__arRjxEf/verifier/test-stdout.txt"),
        ("benchflow", BENCHFLOW, None),
    ],
)
def test_a_job_dir_holding_a_symlink_is_refused(
    work: Path, capsys: pytest.CaptureFixture[str], fmt: str, source: Path, victim: str | None
) -> None:
    job = work / "job"
    shutil.copytree(source, job)
    if victim is None:  # the first file of the first trial-looking dir
        victim = next(p for p in sorted(job.rglob("*")) if p.is_file()).relative_to(job).as_posix()
    assert main(["trace", "import", "--format", fmt, "--dry-run", str(job)]) == 0
    link = job / victim
    link.unlink(missing_ok=True)
    link.parent.mkdir(parents=True, exist_ok=True)
    link.symlink_to("/etc/passwd")
    capsys.readouterr()
    assert main(["trace", "import", "--format", fmt, str(job)]) == 2
    out, err = capsys.readouterr()
    assert "symlink to /etc/passwd" in err and victim.split("/")[-1] in err
    assert "root:" not in out + err
    assert not (work / "state" / "runs").exists() or not any((work / "state").rglob("*.json"))


def test_a_crash_log_goes_to_the_state_dir(
    work: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def boom(args: list[str]) -> int:
        raise ZeroDivisionError("boom")

    monkeypatch.setattr(cli_main, "run_typer", boom)
    before = _no_crash_logs_in_temp()
    assert main(["trace", "show", "x"]) == 3
    err = capsys.readouterr().err
    (log,) = (work / "state" / "crash").glob("skillci-crash-*.log")
    assert str(log) in err and "ZeroDivisionError: boom" in log.read_text()
    assert _no_crash_logs_in_temp() == before


def test_deep_model_output_is_an_error_value_not_a_crash() -> None:
    """A model's tool-call arguments and JSON answers are untrusted too."""
    from skillci.analyze.modelio import parse_json_object
    from skillci.providers.client import parse_tool_calls

    deep_obj = '{"a":' * 100_000 + "1" + "}" * 100_000
    call = {"id": "c1", "function": {"name": "run", "arguments": deep_obj}}
    (parsed,) = parse_tool_calls([call])
    assert parsed.arguments == {} and "nested too deep" in (parsed.parse_error or "")
    with pytest.raises(ValueError, match="nested too deep"):
        parse_json_object(deep_obj)
