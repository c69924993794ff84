from __future__ import annotations

import pytest

from skillci.analyze.align import align
from skillci.analyze.trajectory import (
    ActionKind,
    Trajectory,
    call_key,
    classify_call,
    named_tests,
    norm_path,
)
from tests.unit.analyze.traj import LOG, SRC, TEST, TEST_FILE, T, teacher_ok

K = ActionKind


@pytest.mark.parametrize(
    ("tool", "args", "kind", "files"),
    [
        ("read_file", {"path": "ci/failure.log"}, K.read_log, ("ci/failure.log",)),
        ("read_file", {"path": "./src//calc.py"}, K.read_source, ("src/calc.py",)),
        (
            "read_file",
            {"path": "/workspace/tests/test_calc.py"},
            K.read_test,
            ("tests/test_calc.py",),
        ),
        ("read_file", {"path": "docs/api.md"}, K.read_doc, ("docs/api.md",)),
        ("list_files", {"path": "."}, K.list_files, ()),
        ("search_code", {"pattern": "def add("}, K.search_code, ()),
        ("write_file", {"path": "src/calc.py", "content": "x"}, K.edit_source, ("src/calc.py",)),
        (
            "apply_patch",
            {"path": "tests/test_calc.py", "old": "1", "new": "2"},
            K.edit_test,
            ("tests/test_calc.py",),
        ),
        (
            "apply_patch",
            {"patch": "--- a/src/x.py\n+++ b/src/x.py\n@@\n-a\n+b\n"},
            K.edit_source,
            ("src/x.py",),
        ),
        (
            "apply_patch",
            {"input": "*** Begin Patch\n*** Update File: src/y.py\n"},
            K.edit_source,
            ("src/y.py",),
        ),
        ("load_skill_file", {"path": "skillci/workflows/ci-failure.md"}, K.load_skill_file, ()),
        ("run", {"command": "cat src/calc.py"}, K.shell_read, ()),
        ("run", {"command": "grep -rn add src"}, K.shell_search, ()),
        ("run", {"command": "find . -name '*.py'"}, K.shell_search, ()),
        ("run", {"command": "ls -la"}, K.shell_list, ()),
        ("run", {"command": "sed -i 's/a/b/' src/calc.py"}, K.edit_source, ("src/calc.py",)),
        ("run", {"command": "echo x >> tests/test_calc.py"}, K.edit_test, ("tests/test_calc.py",)),
        ("run", {"command": "git diff --stat"}, K.inspect_diff, ()),
        ("run", {"command": "python -m pytest -q 2>&1 | tail"}, K.run_test, ()),
        ("run", {"command": "pip install requests"}, K.run_other, ()),
        ("browse", {"url": "x"}, K.other, ()),
    ],
)
def test_classify_call(
    tool: str, args: dict[str, str], kind: ActionKind, files: tuple[str, ...]
) -> None:
    got_kind, _target, got_files, _tests = classify_call(tool, args)
    assert (got_kind, got_files) == (kind, files)


def test_named_tests() -> None:
    assert named_tests("python -m pytest -x -q tests/test_a.py::test_b") == (
        "tests/test_a.py::test_b",
    )
    assert named_tests("pytest tests/test_a.py -k 'expiry and not slow'") == (
        "tests/test_a.py",
        "-k expiry and not slow",
    )
    assert named_tests("python -m pytest -q") == ()
    assert named_tests("python -m unittest tests.test_a.TestX.test_y") == (
        "tests.test_a.TestX.test_y",
    )


def test_norm_path_and_call_key() -> None:
    assert norm_path("/tmp/x/workspace/src/a.py") == "src/a.py"
    assert norm_path("./a/../b.py") == "b.py"
    assert call_key("run", {"command": " pytest   -q "}) == call_key(
        "run", {"command": "pytest -q"}
    )
    assert call_key("run", {"command": "pytest -q"}) != call_key("run", {"command": "pytest -x"})


def test_milestones_of_the_textbook_teacher() -> None:
    t = Trajectory.from_record(teacher_ok())
    m = t.milestones
    steps = [a.step for a in t.actions]
    assert m.log_read == steps[0]
    assert m.first_localize == steps[1]
    assert m.reproduced == steps[2]
    assert m.first_edit == m.last_edit == steps[3]
    assert m.verified == m.target_test_passed == steps[4]
    assert m.related_tests_passed == steps[5]
    assert m.diff_inspected == steps[6]
    assert t.targets == (TEST,)
    assert t.claims_success and t.finished_voluntarily and t.passed


def test_failed_edit_is_not_an_edit_milestone() -> None:
    t = Trajectory.from_record(T().patch(error="no match").build())
    assert t.milestones.first_edit is None and t.edited_files == []


@pytest.mark.parametrize(
    ("text", "claims"),
    [
        ("I fixed the bug. The tests should pass now.", True),
        ("Fixed src/calc.py; verified.", True),
        ("I could not fix the failure; I stopped.", False),
        ("The test still fails.", False),
        ("已修复，测试通过。", True),
        ("", False),
    ],
)
def test_claims_success(text: str, claims: bool) -> None:
    rec = T().say(text).build() if text else T().build()
    assert Trajectory.from_record(rec).claims_success is claims


def test_stop_reason_decides_voluntary_finish() -> None:
    assert Trajectory.from_record(
        T().say("x").build(stop_reason="final_answer")
    ).finished_voluntarily
    assert not Trajectory.from_record(
        T().say("x").build(stop_reason="max_steps")
    ).finished_voluntarily
    assert Trajectory.from_record(
        T().read(SRC).say("x").build(stop_reason=None)
    ).finished_voluntarily


def test_alignment_finds_common_actions_and_missing_states() -> None:
    s = Trajectory.from_record(T().read(LOG).read(SRC).patch().say("Fixed.").build())
    t = Trajectory.from_record(teacher_ok())
    al = align(s, t)
    assert len(al.pairs) == 3  # log, source, edit
    assert al.missing_states == ["reproduced", "verified", "target_test_passed", "diff_inspected"]
    assert al.first_divergence == (None, 2)
    assert al.similarity == pytest.approx(6 / 10)


def test_alignment_matches_test_runs_by_file_and_is_symmetric_in_size() -> None:
    s = Trajectory.from_record(T().test(TEST_FILE).test(TEST).build())
    t = Trajectory.from_record(T("teacher", "run-t").test(TEST).build(passed=True))
    al = align(s, t)
    assert len(al.pairs) == 1
    assert (
        align(Trajectory.from_record(T().build()), Trajectory.from_record(T().build())).similarity
        == 1.0
    )
