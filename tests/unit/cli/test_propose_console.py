"""`skillci propose` says on the console when the compiler failed and what wrote the patch."""

from __future__ import annotations

from skillci.cli.output import console
from skillci.cli.propose import _show
from skillci.compile import LLMCompiler, TemplateCompiler, propose_task
from skillci.flows.propose import ProposeOutcome
from tests.unit.compile.test_compiler_failures import Model, Reply
from tests.unit.compile.test_loop import ScriptedStudent, Teacher, cut


def _printed(fallback: bool) -> str:
    model = Model(Reply('{"rationale": "x", "ops": [', finish_reason="length"))
    p = propose_task(
        "task-calc",
        cut("skillci/rules/finish.yaml"),
        run_student=ScriptedStudent(),
        run_teacher=Teacher(),
        compiler=LLMCompiler(model, model="fake/model"),
        fallback=TemplateCompiler() if fallback else None,
    ).proposal
    with console.capture() as cap:
        _show(ProposeOutcome(p, "dry_run", "would open a PR"))
    return cap.get()


def test_the_fallback_is_printed() -> None:
    out = _printed(fallback=True)
    assert "compiler failed" in out and "finish_reason: length" in out
    assert "fallback" in out and "template compiler" in out and "not by the model" in out


def test_no_fallback_says_how_to_get_one() -> None:
    out = _printed(fallback=False)
    assert "compiler_failed" in out and "--fallback template" in out
