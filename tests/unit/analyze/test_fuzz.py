"""Random trajectories: diagnose never crashes, and what it calls compilable compiles."""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from skillci.analyze import Diagnosis, diagnose
from skillci.compile import CompileInput, TemplateCompiler, check_patch, untrusted_texts
from skillci.errors import CompileError
from tests.unit.analyze.traj import LOG, SRC, TEST, TEST_FILE, T, teacher_ok
from tests.unit.skill.helpers import bundled

PATHS = st.sampled_from(
    [LOG, SRC, "src/helpers.py", TEST_FILE, "docs/api.md", ".env", "/workspace/src/calc.py"]
)
COMMANDS = st.sampled_from(
    [
        f"python -m pytest -x -q {TEST}",
        f"python -m pytest -q {TEST_FILE}",
        "python -m pytest -q",
        "git diff --stat",
        "git status --porcelain",
        "cat src/calc.py",
        "grep -rn add src",
        "ls",
        "tox -e py311",
        "echo hi > notes.txt",
    ]
)

STEP = st.one_of(
    st.tuples(st.just("read"), PATHS, st.text(max_size=40)),
    st.tuples(st.just("run"), COMMANDS, st.integers(min_value=0, max_value=5)),
    st.tuples(st.just("patch"), PATHS, st.sampled_from(["a - b", "a + b", "x"])),
    st.tuples(st.just("write"), PATHS, st.sampled_from(["v1", "v2"])),
    st.tuples(st.just("ls"), st.just("."), st.just(0)),
    st.tuples(st.just("search"), st.just("def add"), st.just(0)),
    st.tuples(
        st.just("load"),
        st.sampled_from(["skillci/workflows/unit-test-failure.md", "skillci/tools/run-tests.md"]),
        st.just(0),
    ),
    st.tuples(
        st.just("error"), st.sampled_from(["ContextWindowExceeded", "ModelError"]), st.just(0)
    ),
)


def build(steps: list[tuple[str, Any, Any]], final: str, stop: str | None) -> T:
    t = T()
    for kind, a, b in steps:
        if kind == "read":
            t.read(a, output=b)
        elif kind == "run":
            t.run(a, b)
        elif kind == "patch":
            t.patch(a, new=b)
        elif kind == "write":
            t.write(a, b)
        elif kind == "ls":
            t.ls()
        elif kind == "search":
            t.search(a)
        elif kind == "load":
            t.load(a)
        else:
            t.error(a, "boom")
    if final:
        t.say(final)
    return t


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    steps=st.lists(STEP, max_size=25),
    final=st.sampled_from(["", "Fixed it.", "I could not fix it.", "Done, tests pass."]),
    stop=st.sampled_from(["final_answer", "max_steps", None, "error"]),
    with_teacher=st.booleans(),
)
def test_random_trajectories_diagnose_and_compile(
    steps: list[tuple[str, Any, Any]], final: str, stop: str | None, with_teacher: bool
) -> None:
    rec = build(steps, final, stop).build(stop_reason=stop)
    teacher = teacher_ok() if with_teacher else None
    d = diagnose(rec, teacher, bundled())
    event(d.failure_class.value)
    assert Diagnosis.model_validate_json(d.model_dump_json()) == d
    if not d.skill_compilable:
        assert d.upgrade_path is not None
        return
    try:
        out = TemplateCompiler().compile(
            CompileInput(d, bundled(), teacher=teacher, students=[rec])
        )
    except CompileError:
        return  # the rule already says everything the template has
    check, _ = check_patch(
        bundled(), out.patch, untrusted_texts([rec, *([teacher] if teacher else [])])
    )
    assert check.applies and check.within_limits and not check.lint_errors, check.problems()
    assert check.guard_verdict != "reject", check.problems()
