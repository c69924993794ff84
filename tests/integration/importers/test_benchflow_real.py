"""Real BenchFlow result directories (copied verbatim from benchflow-ai/benchflow, see
tests/fixtures/harness-results/benchflow/SOURCES.yaml) → run records: top-level reward/status,
flat ACP tool calls with their arguments, token_usage, run_config.json, user_rounds.jsonl,
unmapped fields listed, verifier tampering flagged, and an empty dir refused."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.trace.importers.benchflow import find_rollouts, import_rollout
from skillci.trace.models import EvalState, SkillRef

REAL = Path(__file__).parents[2] / "fixtures" / "harness-results" / "benchflow"


def real_dirs() -> list[Path]:
    return sorted(d for d in REAL.iterdir() if (d / "result.json").is_file())


def test_the_corpus_is_what_sources_yaml_lists() -> None:
    sources = (REAL / "SOURCES.yaml").read_text(encoding="utf-8")
    assert "commit: " in sources
    listed = {
        line.split("path: ")[1].split(",")[0] for line in sources.splitlines() if "path: " in line
    }
    on_disk = {
        str(p.relative_to(REAL)) for p in REAL.rglob("*") if p.is_file() and p.parent != REAL
    }
    assert listed == on_disk
    assert len(real_dirs()) == 18
    assert len(find_rollouts(REAL)) == 24  # + 6 task-standard acceptance (gold run) dirs


def test_every_real_dir_with_a_reward_gets_its_verdict() -> None:
    records = {d.name: import_rollout(d, job="real") for d in real_dirs()}
    states = {name: r.evaluation.state for name, r in records.items()}
    assert states == {
        "clean-pass": EvalState.passed,
        "clean-pass-0.6.0-rc1": EvalState.passed,
        "reward-hack-0.6.0-rc1": EvalState.passed,
        "no-skill-leak-0.6.0-rc1": EvalState.failed,
        "infra-timeout-missing-usage-0.6.0-rc1": EvalState.infra_error,
        "missing-llm-trajectory": EvalState.passed,
        "reward-hack": EvalState.passed,
        "no-skill-leak": EvalState.failed,
        "no-skill-benign-marker": EvalState.failed,
        "infra-timeout-missing-usage": EvalState.infra_error,
        "user_dogfood_results": EvalState.failed,
        "user_dogfood_results-pre-v0.4": EvalState.failed,
        # BenchFlow 0.6.3, a user's committed jobs/: scored no-skill and with-skill runs, and
        # four that stopped at once on a missing provider key (error, no reward)
        "skill-lift-citation-check__1398f575": EvalState.failed,
        "skill-lift-citation-check__190a3859": EvalState.passed,
        "skill-lift-citation-check__74091ead": EvalState.infra_error,
        "skill-lift-citation-check__81ba3aa1": EvalState.infra_error,
        "skill-lift-citation-check__85ecb762": EvalState.infra_error,
        "skill-lift-citation-check__e1a7b1ff": EvalState.infra_error,
    }
    assert records["clean-pass"].evaluation.reward == 1.0
    assert (
        "REQUIRED_TASK_API_KEY" in records["infra-timeout-missing-usage"].evaluation.verifier_output
    )
    assert records["infra-timeout-missing-usage"].metadata["status"] == "timeout"


def test_flat_acp_tool_calls_keep_name_and_arguments() -> None:
    rec = import_rollout(REAL / "clean-pass", job="real")
    calls = [e for e in rec.events if e.kind == "tool_call"]
    assert [(c.tool, c.arguments) for c in calls] == [
        ("run", {"cmd": "python solve.py", "tool_name": "bash"})
    ]
    assert rec.final_output == "Answer submitted."
    skill = import_rollout(REAL / "no-skill-leak", job="real")
    kinds = [(e.kind, getattr(e, "tool", getattr(e, "path", None))) for e in skill.events]
    assert kinds == [
        ("tool_call", "read_file"),
        ("tool_call", "load_skill"),
        ("skill_load", "task-helper"),
    ]


def test_token_usage_run_config_and_timing_are_read() -> None:
    rec = import_rollout(REAL / "clean-pass", job="real")
    assert (rec.cost.input_tokens, rec.cost.output_tokens) == (1200, 240)
    assert rec.cost.tool_calls == 3  # tool_usage: bash 2 + edit 1
    assert rec.cost.wall_time_sec == 420.0
    assert rec.model.name == "sample-model"
    assert rec.runtime.harness == "openhands"
    assert rec.runtime.sandbox == "daytona"
    assert rec.task_id == "example-clean-pass"
    assert rec.metadata["run_config"]["task_skills"] == ["data-cleaning"]
    assert rec.created_at.isoformat() == "2026-06-01T00:07:00+00:00"


def test_pre_v04_trial_name_is_the_rollout_name() -> None:
    old = import_rollout(REAL / "user_dogfood_results-pre-v0.4", job="real")
    new = import_rollout(REAL / "user_dogfood_results", job="real")
    assert old.metadata["rollout_name"] == new.metadata["rollout_name"] == "regex-log__bab1cbf6"
    assert old.metadata["unmapped"] == {} and old.evaluation == new.evaluation


def test_skill_mode_no_skills_records_no_skill() -> None:
    skill = SkillRef(name="task-helper", version="1.0.0", content_hash="0" * 64)
    off = import_rollout(REAL / "no-skill-benign-marker", job="real", skill=skill)
    assert off.runtime.skill is None and off.runtime.harness == "codex"
    on = import_rollout(REAL / "clean-pass", job="real", skill=skill)
    assert on.runtime.skill == skill
    assert off.reward_hack_evidence == []  # reading the task's own input is not tampering


def test_user_rounds_become_user_messages_and_metadata() -> None:
    rec = import_rollout(REAL / "user_dogfood_results", job="real")
    rounds = rec.metadata["user_rounds"]
    assert [r["round"] for r in rounds] == list(range(len(rounds)))
    users = [e for e in rec.events if e.kind == "message" and e.role == "user"]
    assert [u.content for u in users] == [r["prompt"] for r in rounds]
    assert rec.model.name == "gemini-2.5-flash"
    assert rec.cost.model_calls == 1 and rec.cost.tool_calls == 8


def test_verifier_scores_in_the_trajectory_are_kept_and_nothing_is_unmapped() -> None:
    for d in real_dirs():
        rec = import_rollout(d, job="real")
        assert rec.metadata["unmapped"] == {}, d.name
        assert not [w for w in rec.warnings if "unmapped" in w or "differ" in w], d.name
    rec = import_rollout(REAL / "clean-pass", job="real")
    assert rec.metadata["trajectory_scores"] == [1.0]


def test_unknown_trajectory_lines_are_counted_and_warned(tmp_path: Path) -> None:
    d = tmp_path / "clean-pass"
    shutil.copytree(REAL / "clean-pass", d)
    traj = d / "trajectory" / "acp_trajectory.jsonl"
    extra = json.dumps({"phase": "agent", "type": "plan", "content": "x"})
    traj.write_text(traj.read_text(encoding="utf-8") + extra + "\n" + extra + "\n", "utf-8")
    rec = import_rollout(d, job="real")
    assert rec.metadata["unmapped"] == {"trajectory:plan": 2}
    assert "unmapped trajectory:plan (2 line(s))" in rec.warnings


def test_editing_the_verifier_is_flagged_as_reward_hack_evidence() -> None:
    hack = import_rollout(REAL / "reward-hack", job="real")
    assert len(hack.reward_hack_evidence) == 2
    assert "verifier.py" in hack.reward_hack_evidence[0]
    assert "score.json" in hack.reward_hack_evidence[1]
    clean = import_rollout(REAL / "clean-pass", job="real")
    assert clean.reward_hack_evidence == []


def test_unknown_result_fields_are_warned_and_kept(tmp_path: Path) -> None:
    d = tmp_path / "clean-pass"
    shutil.copytree(REAL / "clean-pass", d)
    data = json.loads((d / "result.json").read_text(encoding="utf-8"))
    data["novel_field"] = {"x": 1}
    (d / "result.json").write_text(json.dumps(data), encoding="utf-8")
    rec = import_rollout(d, job="real")
    assert rec.metadata["result_extra"]["novel_field"] == {"x": 1}
    assert "unmapped result.json:novel_field" in rec.warnings


def test_cli_counts_unmapped_and_suspects(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "import", str(REAL), "--dry-run", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["trials"] == 24 == len(find_rollouts(REAL))
    assert report["reward_hack_suspects"] == 2  # reward-hack at two BenchFlow commits
    assert report["forged_passes"] == 2  # both passed after editing the verifier
    assert report["unmapped"] == {}
    assert report["states"] == {"passed": 12, "failed": 6, "infra_error": 6}


def test_a_dir_with_nothing_to_import_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["trace", "import", str(REAL), "--format", "harbor", "--dry-run"]) == 2
    assert "nothing to import as harbor" in capsys.readouterr().err
    (tmp_path / "notes.txt").write_text("hi", encoding="utf-8")
    assert main(["trace", "import", str(tmp_path), "--dry-run"]) == 2


def test_llm_trajectory_usage_is_read_and_fills_missing_token_usage(tmp_path: Path) -> None:
    rec = import_rollout(REAL / "clean-pass", job="real")
    assert rec.metadata["llm_trajectory"] == {
        "calls": 1,
        "failed": 0,
        "input_tokens": 1200,
        "output_tokens": 240,
    }
    d = tmp_path / "clean-pass"
    shutil.copytree(REAL / "clean-pass", d)
    data = json.loads((d / "result.json").read_text(encoding="utf-8"))
    del data["token_usage"]
    (d / "result.json").write_text(json.dumps(data), encoding="utf-8")
    bare = import_rollout(d, job="real")
    assert (bare.cost.input_tokens, bare.cost.output_tokens, bare.cost.model_calls) == (
        1200,
        240,
        1,
    )
    timed_out = import_rollout(REAL / "infra-timeout-missing-usage", job="real")
    assert timed_out.metadata["llm_trajectory"]["failed"] == 1
    assert timed_out.cost.input_tokens is None  # no usage reported: unknown, not 0


def test_task_standard_acceptance_evidence_is_an_oracle_rollout() -> None:
    rec = import_rollout(REAL / "acceptance-compat-export-loss-reports", job="real")
    assert rec.agent_role.value == "oracle" and rec.runtime.harness == "oracle"
    assert rec.task_id == "benchflow-wanted/compat-export-loss-reports"
    assert rec.evaluation.state == EvalState.passed and rec.evaluation.reward == 1.0
    assert rec.metadata["trajectory_scores"] == [1.0]  # the gold trajectory's verifier line
    assert rec.metadata["checks"]["loss_report"] == 1.0
    assert rec.metadata["oracle_run"]["kind"] == "oracle-proof"
    assert [e.role for e in rec.events if e.kind == "message"] == [
        "system",
        "assistant",
        "assistant",
    ]
    assert "review.json" in rec.metadata["unread_files"]
    assert rec.warnings == [] and rec.metadata["unmapped"] == {}


def test_the_real_reward_hack_is_a_fail_for_the_gate_and_missed_constraint_for_diagnosis() -> None:
    from skillci.analyze.diagnose import diagnose
    from skillci.analyze.taxonomy import FailureClass
    from skillci.gate.outcomes import reward_hack_warnings, to_outcome

    hack = import_rollout(REAL / "reward-hack", job="real")
    assert hack.evaluation.state == EvalState.passed  # BenchFlow's verdict, kept as it said
    assert hack.reward_hack_evidence == [
        "step 0: apply_patch (write) -> verifier.py",
        "step 1: run (write) -> results/score.json",
    ]
    out = to_outcome(hack, "head")
    assert (out.passed, out.reward) == (False, 0.0)
    (line,) = reward_hack_warnings([hack, import_rollout(REAL / "clean-pass", job="real")])
    assert line.startswith(f"{hack.task_id}: reward-hack evidence: 1 pass(es) after writing")
    d = diagnose(hack, None, None)
    assert d.failure_class == FailureClass.missed_constraint
    assert [(e.step, e.note) for e in d.evidence] == [
        (0, "verifier_file_changed"),
        (1, "verifier_file_changed"),
    ]


def test_the_import_summary_says_which_passes_the_gate_will_not_count(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["trace", "import", str(REAL), "--dry-run"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "2 trial(s) touched verifier/test files" in out
    assert "2 passed after writing them (the gate counts those as failed)" in out


def test_a_063_acp_call_without_raw_input_keeps_the_file_it_edits() -> None:
    """BenchFlow 0.6.3 writes claude-agent-acp tool calls without raw_input: the file an edit
    writes is only in its diff content block, and becomes the call's ``paths`` argument."""
    rec = import_rollout(REAL / "skill-lift-citation-check__1398f575", job="real")
    calls = [e for e in rec.events if e.kind == "tool_call"]
    assert [c.tool for c in calls] == ["read_file", "think", "think", *["fetch"] * 9, "apply_patch"]
    assert calls[-1].arguments == {
        "paths": ["/root/answer.json"],
        "title": "Write",
        "acp_kind": "edit",
    }
    assert (rec.cost.input_tokens, rec.cost.output_tokens, rec.cost.usd) == (
        713488,
        13113,
        0.34763445,
    )
    assert rec.reward_hack_evidence == [] and rec.warnings == []
    assert "trainer/atif.json" in rec.metadata["unread_files"]
    failed = import_rollout(REAL / "skill-lift-citation-check__85ecb762", job="real")
    assert failed.evaluation.state == EvalState.infra_error
    assert "ANTHROPIC_API_KEY required" in failed.evaluation.verifier_output
