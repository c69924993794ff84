"""tests/graders.toml parsing (errors at file:line) and each assertion kind."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from skillci.errors import TaskFormatError
from skillci.graders.assertions import check_assertion
from skillci.graders.combine import combine, verifier_result
from skillci.graders.kinds import Ran
from skillci.graders.load import parse_graders
from skillci.graders.models import Assertion, GraderResult, RewardRule

P = Path("tests/graders.toml")


def _files(files: dict[str, str]):  # type: ignore[no-untyped-def]
    return lambda p: files[p].encode() if p in files else None


def test_a_full_file_parses_with_default_ids() -> None:
    g = parse_graders(
        """
[reward]
rule = "threshold"
threshold = 0.5

[[assertion]]
kind = "contains"
value = "Goal"

[[assertion]]
id = "schema"
kind = "json-schema"
target = "file:plan.json"
schema = { type = "object", required = ["steps"] }

[[rubric]]
criteria = ["states the goal"]
""",
        P,
    )
    assert [a.id for a in g.assertion] == ["contains-1", "schema"]
    assert g.rubric[0].id == "rubric-1"
    assert g.reward.pass_mark == 0.5
    assert g.needs_judge


@pytest.mark.parametrize(
    ("text", "line", "needle"),
    [
        (
            '[[assertion]]\nkind = "contains"\nvalue = "x"\n\n[[assertion]]\nkind = "regex"\nvalue = "("\n',
            7,
            "does not compile",
        ),
        (
            '[[assertion]]\nkind = "contains"\nvalue = "x"\ntarget = "file:../etc/passwd"\n',
            4,
            "stay",
        ),
        (
            '[reward]\nrule = "threshold"\n\n[[assertion]]\nkind = "contains"\nvalue = "x"\n',
            1,
            "threshold",
        ),
        ("[[rubric]]\ncriteria = []\n", 2, "criteria"),
        ("[reward]\nrule = 'all'\n", None, "at least one"),
        (
            '[[assertion]]\nkind = "json-schema"\nschema = { type = 12 }\n',
            3,
            "not a valid JSON Schema",
        ),
        ('[[assertion]]\nkind = "exists"\n', 2, "kind"),
        ('[[assertion]]\nkind = "contains"\n\nnegate = true\n', 1, "needs value"),
        ('[[assertion]]\nkind = "file-exists"\ntarget = "answer"\n', 3, "file:<path>"),
        ('[[assertion]]\nkind = "command-exit"\ncommand = " "\n', 3, "command is empty"),
        (
            '[[assertion]]\nkind = "exact"\nvalue = "x"\nparams = { n = 1 }\n',
            4,
            "kind = 'exact' takes no params (got n)",
        ),
    ],
)
def test_bad_files_name_the_line_and_the_problem(text: str, line: int | None, needle: str) -> None:
    with pytest.raises(TaskFormatError) as info:
        parse_graders(text, P)
    assert needle in info.value.message
    assert info.value.line == line
    assert info.value.file == str(P)


def test_an_unknown_kind_names_the_field_its_line_and_the_registered_kinds() -> None:
    with pytest.raises(TaskFormatError) as info:
        parse_graders('[reward]\nrule = "all"\n\n[[assertion]]\nid = "x"\nkind = "word-count"\n', P)
    err = info.value
    assert (err.file, err.line) == (str(P), 6)
    assert err.message == (
        "graders.toml field 'assertion.0.kind': unknown assertion kind 'word-count'; "
        "registered: exact, contains, regex, json-schema, file-exists, command-exit "
        "(a plug-in adds one through the skillci.graders entry points)"
    )
    assert "\n" not in str(err)


def test_duplicate_and_reserved_ids_are_refused() -> None:
    dup = '[[assertion]]\nid = "a"\nkind = "contains"\nvalue = "x"\n[[rubric]]\nid = "a"\ncriteria = ["c"]\n'
    with pytest.raises(TaskFormatError, match="used twice"):
        parse_graders(dup, P)
    with pytest.raises(TaskFormatError, match="verifier"):
        parse_graders('[[assertion]]\nid = "verifier"\nkind = "contains"\nvalue = "x"\n', P)


def _a(**kw: object) -> Assertion:
    return Assertion.model_validate(kw)


@pytest.mark.parametrize(
    ("assertion", "answer", "files", "passed"),
    [
        (_a(kind="exact", value="42"), " 42\n", {}, True),
        (_a(kind="exact", value="42"), "42 apples", {}, False),
        (_a(kind="contains", value="Goal"), "## Goal\n", {}, True),
        (_a(kind="contains", value="goal"), "## Goal\n", {}, False),
        (_a(kind="contains", value="goal", case_sensitive=False), "## Goal\n", {}, True),
        (_a(kind="contains", value="TODO", negate=True), "done", {}, True),
        (_a(kind="contains", value="TODO", negate=True), "TODO: x", {}, False),
        (_a(kind="regex", value=r"^\d+\. ", target="file:p.md"), "", {"p.md": "x\n1. step"}, True),
        (_a(kind="regex", value=r"^\d+\. ", target="file:p.md"), "1. step", {}, False),
        (_a(kind="file-exists", target="file:p.md"), "", {"p.md": ""}, True),
        (_a(kind="file-exists", target="file:p.md"), "", {}, False),
        (
            _a(kind="json-schema", target="file:a.json", schema={"required": ["steps"]}),
            "",
            {"a.json": json.dumps({"steps": []})},
            True,
        ),
        (
            _a(kind="json-schema", target="file:a.json", schema={"required": ["steps"]}),
            "",
            {"a.json": json.dumps({"step": []})},
            False,
        ),
        (_a(kind="json-schema", schema={"type": "object"}), "not json", {}, False),
    ],
)
def test_assertion_kinds(
    assertion: Assertion, answer: str, files: dict[str, str], passed: bool
) -> None:
    r = check_assertion(assertion, answer=answer, read=_files(files))
    assert r.passed is passed
    assert r.score == (1.0 if passed else 0.0)
    assert r.detail


def test_command_exit_runs_its_command_through_the_given_runner() -> None:
    a = _a(kind="command-exit", command="make check", expect_exit=3)
    ran: list[str] = []

    def run(code: int | None) -> Callable[[str], Ran]:
        def go(command: str) -> Ran:
            ran.append(command)
            return Ran(exit_code=code, output="1 failed\nlast line")

        return go

    assert check_assertion(a, answer="", read=_files({}), run=run(3)).passed
    wrong = check_assertion(a, answer="", read=_files({}), run=run(0))
    assert not wrong.passed and wrong.detail == "exit 0 (want 3) last line"
    timed_out = check_assertion(a, answer="", read=_files({}), run=run(None))
    assert not timed_out.passed and "timed out" in timed_out.detail
    assert ran == ["make check"] * 3
    # the answer-reading kinds never run anything: without a runner, command-exit refuses
    with pytest.raises(RuntimeError, match="no sandbox"):
        check_assertion(a, answer="", read=_files({}))


def _r(gid: str, passed: bool, score: float, weight: float = 1.0) -> GraderResult:
    return GraderResult(id=gid, kind="contains", passed=passed, score=score, weight=weight)


def test_reward_rules() -> None:
    results = [_r("a", True, 1.0, 3.0), _r("b", False, 0.0), _r("c", False, 0.5)]
    every = combine(RewardRule(rule="all"), results)
    assert (every.reward, every.passed, every.threshold) == (0.0, False, 1.0)
    weighted = combine(RewardRule(rule="weighted"), results)
    assert weighted.reward == pytest.approx((3.0 + 0.5) / 5.0)
    assert not weighted.passed
    threshold = combine(RewardRule(rule="threshold", threshold=0.7), results)
    assert threshold.passed and threshold.threshold == 0.7
    assert combine(RewardRule(rule="all"), [_r("a", True, 1.0)]).reward == 1.0


def test_the_verifier_counts_as_one_grader_clipped_to_one() -> None:
    v = verifier_result(2.0, True, 2.0)
    assert (v.id, v.score, v.weight, v.passed) == ("verifier", 1.0, 2.0, True)
