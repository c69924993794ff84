"""Compiler failures are recorded, bounded and never replaced silently (issue 29)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from skillci.analyze.modelio import KEEP_ANSWER_CHARS, MAX_ANSWER_CHARS
from skillci.compile import LLMCompiler, TemplateCompiler, propose_task
from skillci.flows.propose import _compiler_section
from tests.unit.compile.test_loop import ScriptedStudent, Teacher, cut

TWO_MB = "x" * (2 * 1024 * 1024)


@dataclass
class Reply:
    content: str
    finish_reason: str | None = "stop"
    input_tokens: int = 10
    output_tokens: int = 5
    usd: float | None = 0.0


class Model:
    """Answers in order; records every conversation it was sent."""

    def __init__(self, *answers: Reply) -> None:
        self.answers = list(answers)
        self.seen: list[list[dict[str, Any]]] = []

    def __call__(self, messages: list[dict[str, Any]]) -> Reply:
        self.seen.append(messages)
        return self.answers[min(len(self.seen) - 1, len(self.answers) - 1)]


def _run(model: Model, fallback: bool) -> Any:
    return propose_task(
        "task-calc",
        cut("skillci/rules/finish.yaml"),
        run_student=ScriptedStudent(),
        run_teacher=Teacher(),
        compiler=LLMCompiler(model, model="fake/model"),
        fallback=TemplateCompiler() if fallback else None,
    ).proposal


def test_a_truncated_answer_is_named_recorded_and_not_replaced_without_fallback() -> None:
    cut_json = '{"rationale": "add a check", "ops": [{"op": "add_rule", "rule": {"id": "a.b"'
    model = Model(Reply(cut_json, finish_reason="length"))
    p = _run(model, fallback=False)
    assert p.status == "compiler_failed" and not p.patches and p.fallback_used is None
    rnd = p.rounds[0]
    assert rnd.compiler_error is not None and "finish_reason: length" in rnd.compiler_error
    ex = rnd.compiler_exchange
    assert ex is not None and ex.failures == ["truncated", "truncated"]
    assert ex.finish_reasons == ["length", "length"] and ex.responses[0] == cut_json
    assert any("truncated" in f for f in p.compiler_failures)


def test_a_2mb_answer_is_capped_in_the_record_and_in_the_retry() -> None:
    model = Model(Reply(TWO_MB), Reply("still not json"))
    p = _run(model, fallback=True)
    rnd = p.rounds[0]
    ex = rnd.compiler_exchange
    assert ex is not None and ex.failures == ["oversized", "malformed"]
    assert ex.answer_chars[0] == len(TWO_MB) > MAX_ANSWER_CHARS
    assert len(ex.responses[0]) <= KEEP_ANSWER_CHARS + 40  # kept capped, with a cut marker
    # the retry sent back the capped answer, never the 2 MB one
    retry = model.seen[1]
    assert len(json.dumps(retry)) < len(json.dumps(model.seen[0])) + KEEP_ANSWER_CHARS + 2000
    # the template wrote the patch, and that is said
    assert p.status == "proposed" and p.fallback_used == "template" and rnd.fallback == "template"
    assert rnd.compile is not None and rnd.compile.compiler == "template"
    body = "\n".join(_compiler_section(p))
    assert "compiler failed" in body and "oversized" in body and "`template`" in body
    assert "not by the model" in body


def test_a_refusal_and_malformed_json_are_told_apart() -> None:
    model = Model(Reply("I'm sorry, I can't help with that."), Reply("{not json at all}"))
    p = _run(model, fallback=False)
    ex = p.rounds[0].compiler_exchange
    assert ex is not None and ex.failures == ["refused", "malformed"]
    assert p.status == "compiler_failed"
