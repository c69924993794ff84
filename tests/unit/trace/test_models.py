from __future__ import annotations

import json
from datetime import datetime

import pytest
from pydantic import ValidationError

from skillci.trace.models import (
    SCHEMA_VERSION,
    EvalState,
    Evaluation,
    MessageEvent,
    RunRecord,
    ToolCallEvent,
    ToolResultEvent,
    new_run_id,
)
from tests.unit.trace.helpers import make_record


def test_round_trip_json_keeps_every_field() -> None:
    rec = make_record()
    again = RunRecord.model_validate_json(rec.model_dump_json())
    assert again == rec
    doc = json.loads(rec.model_dump_json())
    assert doc["schema_version"] == SCHEMA_VERSION
    assert [e["kind"] for e in doc["events"]] == [
        "message",
        "message",
        "skill_load",
        "tool_call",
        "tool_result",
        "message",
        "error",
    ]
    assert rec.skill_hash == "a" * 64
    assert rec.passed is False


def test_model_and_tool_payloads_are_untrusted() -> None:
    rec = make_record()
    by_kind = {(e.kind, getattr(e, "role", None)): e.untrusted for e in rec.events}
    assert by_kind[("tool_call", None)] is True
    assert by_kind[("tool_result", None)] is True
    assert by_kind[("message", "assistant")] is True
    # tool calls/results cannot be recorded as trusted at all
    with pytest.raises(ValidationError):
        ToolCallEvent(step=0, tool="run", call_id="x", untrusted=False)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        ToolResultEvent(step=0, call_id="x", untrusted=False)  # type: ignore[arg-type]
    with pytest.raises(ValidationError, match="must be untrusted"):
        MessageEvent(step=0, role="assistant", content="hi", untrusted=False)


def test_events_must_be_numbered_in_order() -> None:
    rec = make_record()
    events = list(rec.events)
    events[2], events[3] = events[3], events[2]
    with pytest.raises(ValidationError, match="numbered"):
        make_record(events=events)


def test_passed_must_agree_with_state() -> None:
    with pytest.raises(ValidationError, match="contradicts"):
        Evaluation(state=EvalState.failed, passed=True)
    with pytest.raises(ValidationError, match="contradicts"):
        Evaluation(state=EvalState.passed)
    assert Evaluation(state=EvalState.verifier_error).passed is False


def test_unknown_fields_are_rejected_and_times_need_a_zone() -> None:
    with pytest.raises(ValidationError):
        make_record(surprise=1)
    with pytest.raises(ValidationError, match="timezone"):
        make_record(created_at=datetime(2026, 1, 1))


@pytest.mark.parametrize("bad", ["", "has space", "../etc", "x" * 201])
def test_run_id_shape(bad: str) -> None:
    with pytest.raises(ValidationError):
        make_record(run_id=bad)


def test_new_run_id_is_valid_and_unique() -> None:
    ids = {new_run_id() for _ in range(200)}
    assert len(ids) == 200
    for rid in list(ids)[:5]:
        assert make_record(run_id=rid).run_id.startswith("run-")


def test_schema_is_discriminated_by_kind() -> None:
    schema = RunRecord.model_json_schema()
    assert "discriminator" in json.dumps(schema["properties"]["events"])


def test_version_1_records_read_unchanged_and_unknown_tokens_stay_null() -> None:
    """Schema 2 (design 389): token counts may be null; a version-1 record (counts always
    numbers) still validates as it was written; a newer version is refused."""
    doc = make_record().model_dump(mode="json")
    old = RunRecord.model_validate({**doc, "schema_version": 1})
    assert (
        old.schema_version == 1
        and old.cost.tokens == doc["cost"]["input_tokens"] + doc["cost"]["output_tokens"]
    )
    cost = {**doc["cost"], "input_tokens": None}
    rec = RunRecord.model_validate_json(json.dumps({**doc, "cost": cost}))
    assert rec.cost.input_tokens is None and rec.cost.tokens is None
    assert json.loads(rec.model_dump_json())["cost"]["input_tokens"] is None
    with pytest.raises(ValidationError, match="schema_version"):
        RunRecord.model_validate({**doc, "schema_version": SCHEMA_VERSION + 1})
