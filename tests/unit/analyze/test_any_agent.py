"""Diagnosis of work that is not pytest-shaped (issue 29): shell commands parsed properly,
checks learned from the task's verifier and the teacher, harness failures named as such."""

from __future__ import annotations

from skillci.analyze.classify import ActionKind, classify_call, parse_shell, verifier_checks
from skillci.analyze.diagnose import diagnose
from skillci.analyze.taxonomy import FailureClass, UpgradePath
from skillci.analyze.trajectory import Trajectory
from tests.unit.analyze.traj import T

JSON_CHECK = "python3 -m json.tool config.json > /dev/null"
VERIFIER = """#!/bin/bash
set -e
cd /app
python3 -m json.tool /app/config.json > /dev/null || exit 1
echo 1 > /logs/verifier/reward.txt
"""


def test_a_check_redirected_to_dev_null_is_not_an_edit_of_dev_null() -> None:
    kind, target, files, _ = classify_call("run", {"command": JSON_CHECK})
    assert (kind, target, files) == (ActionKind.run_other, JSON_CHECK, ())  # a run, no edit
    # learned from the verifier, the same command is a check of the outcome
    checks = verifier_checks(VERIFIER)
    assert checks == frozenset({"python -m json.tool"})
    assert classify_call("run", {"command": JSON_CHECK}, checks)[0] is ActionKind.run_test
    piped = "cat config.json | python3 -m json.tool 2>&1 && echo ok"
    assert classify_call("run", {"command": piped}, checks)[0] is ActionKind.run_test


def test_redirections_descriptors_pipes_and_heredocs() -> None:
    (c,) = parse_shell("jq . x.json>/dev/null 2>&1")
    assert c.argv == ("jq", ".", "x.json") and c.writes == ()
    kind, target, files, _ = classify_call("run", {"command": "cat > out/a.json <<EOF\n{}\nEOF"})
    assert (kind, target, files) == (ActionKind.edit_source, "out/a.json", ("out/a.json",))
    kind, _, files, _ = classify_call("run", {"command": "cd /app && echo x | tee notes.txt"})
    assert kind is ActionKind.edit_source and files == ("notes.txt",)
    assert classify_call("run", {"command": "pytest -q tests 2>&1 | tail -5"})[0] is (
        ActionKind.run_test
    )
    assert classify_call("run", {"command": "ls -la > /dev/null"})[0] is ActionKind.shell_list
    # a signature ignores wrappers, assignments and paths
    (w,) = parse_shell("FOO=1 timeout 30 /usr/bin/python3.11 -m json.tool f.json")
    assert w.signature == "python -m json.tool"


def _json_teacher() -> Trajectory:
    rec = (
        T("teacher", "run-teacher-1", task="fix-json")
        .read("config.json", output="{bad")
        .write("config.json", content='{"a": 1}')
        .run(JSON_CHECK, 0, "")
        .say("config.json is valid JSON now.")
        .build(passed=True)
    )
    return Trajectory.from_record(rec)


def test_the_teacher_check_is_learned_and_its_decisive_edit_is_the_write() -> None:
    t = _json_teacher()
    assert t.learned_checks() == frozenset({"python -m json.tool"})
    assert [a.kind for a in t.actions][1:] == [ActionKind.edit_source, ActionKind.run_other]
    assert t.milestones.last_edit == t.actions[1].step  # the write_file, not the check


def test_a_student_that_writes_and_stops_misses_the_validation_the_teacher_did() -> None:
    teacher = (
        T("teacher", "run-teacher-1", task="fix-json")
        .write("config.json", content='{"a": 1}')
        .run(JSON_CHECK, 0, "")
        .say("done")
        .build(passed=True)
    )
    student = (
        T("student", task="fix-json")
        .write("config.json", content="{'a': 1}")
        .say("Fixed, done.")
        .build()
    )
    d = diagnose(student, teacher, None, checks=verifier_checks(VERIFIER))
    assert d.skill_compilable
    assert d.failure_class in (
        FailureClass.reported_success_without_verification,
        FailureClass.missing_validation,
    )
    assert d.teacher_behavior.relevant_actions  # the teacher's check is seen: "Teacher: -" no more
    assert set(d.teacher_behavior.relevant_actions) <= {"run_target_test", "run_related_tests"}


def test_zero_tool_calls_is_a_harness_failure_with_the_fix_named() -> None:
    student = T(task="fix-json").say("I would fix the JSON file.").build()
    teacher = (
        T("teacher", "run-teacher-1", task="fix-json")
        .write("config.json", content="{}")
        .say("done")
        .build(passed=True)
    )
    for t in (None, teacher):
        d = diagnose(student, t, None)
        assert d.failure_class is FailureClass.harness_failure and not d.skill_compilable
        assert d.upgrade_path is UpgradePath.fix_harness
        assert "tool_choice" in d.rationale and "capability" not in d.rationale


def test_output_cut_by_length_below_the_window_is_not_context_overflow() -> None:
    student = (
        T(task="fix-json", context_window=8192)
        .read("config.json")
        .say("....", input_tokens=2314)
        .build(stop_reason="length")
    )
    d = diagnose(student, None, None)
    assert d.failure_class is FailureClass.harness_failure
    assert "finish_reason length" in d.rationale and "max_tokens" in d.rationale


def test_a_context_error_far_below_the_window_names_the_server() -> None:
    student = (
        T(task="fix-json", context_window=32768)
        .read("config.json")
        .say("..", input_tokens=2314)
        .error("ContextWindowExceeded", "context length exceeded")
        .build(stop_reason="context_window_exceeded")
    )
    d = diagnose(student, None, None)
    assert d.failure_class is FailureClass.harness_failure and "n_ctx" in d.rationale


def test_a_real_overflow_is_still_context_overflow() -> None:
    student = (
        T(task="fix-json", context_window=4096)
        .read("big.log")
        .say("..", input_tokens=4090)
        .error("ContextWindowExceeded", "context length exceeded")
        .build(stop_reason="context_window_exceeded")
    )
    assert diagnose(student, None, None).failure_class is FailureClass.context_overflow
