"""The pure span builder of ``trace export --format otlp`` (skillci.trace.otel, design 411)."""

from __future__ import annotations

from datetime import UTC, datetime

from skillci.trace.models import (
    Cost,
    ErrorEvent,
    EvalState,
    MessageEvent,
    ModelInfo,
    ToolCallEvent,
    ToolResultEvent,
)
from skillci.trace.otel import provider_of, span_id_of, trace_id_of, trial_spans
from skillci.trace.redact import Redactor
from tests.builders import run_record
from tests.unit.trace.helpers import make_record

NO_ENV = Redactor(env={})


def test_ids_are_derived_from_the_run_id() -> None:
    a, b = make_record("run-a"), make_record("run-b")
    spans_a = trial_spans(a, redactor=NO_ENV)
    assert [(s.trace_id, s.span_id) for s in spans_a] == [
        (s.trace_id, s.span_id) for s in trial_spans(a, redactor=NO_ENV)
    ]
    assert spans_a[0].trace_id == trace_id_of("run-a") != trace_id_of("run-b")
    assert spans_a[0].span_id == span_id_of("run-a", "trial")
    assert {s.span_id for s in spans_a}.isdisjoint(
        {s.span_id for s in trial_spans(b, redactor=NO_ENV)}
    )
    assert 0 < trace_id_of("run-a") < 2**128
    assert 0 < span_id_of("run-a", "event:3") < 2**64


def test_an_infra_error_has_an_error_root_and_no_verifier_span() -> None:
    rec = run_record(
        run_id="run-infra",
        task_id="t1",
        state=EvalState.infra_error,
        events=[
            MessageEvent(step=0, t=0.0, role="user", content="do it", untrusted=False),
            ErrorEvent(step=1, t=0.5, error_type="ModelError", message="connection refused"),
        ],
        cost=Cost(input_tokens=None, output_tokens=None, wall_time_sec=0.5),
        created_at=datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC),
    )
    (root,) = trial_spans(rec, redactor=NO_ENV)  # no model call, no tool, no verifier
    assert root.error == "infra_error"
    assert root.attributes["error.type"] == "infra_error"
    assert root.attributes["skillci.outcome"] == "infra_error"
    assert "gen_ai.usage.input_tokens" not in root.attributes  # unknown is not 0
    (err,) = root.events
    assert (err.name, err.attributes["error.type"]) == ("skillci.error", "ModelError")
    assert err.attributes["skillci.error.message"] == "connection refused"  # ours: trusted
    end = int(datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC).timestamp()) * 10**9
    assert (root.start_ns, root.end_ns, err.time_ns) == (end - 5 * 10**8, end, end)


def test_untrusted_error_text_and_tool_errors_are_content() -> None:
    rec = run_record(
        run_id="run-tool-error",
        task_id="t1",
        events=[
            ToolCallEvent(step=0, t=1.0, tool="run", call_id="c1", arguments={"cmd": "ls"}),
            ToolResultEvent(step=1, t=2.0, call_id="c1", tool="run", error="bad args: cmd"),
            ErrorEvent(step=2, t=2.0, error_type="Parse", message="model said x", untrusted=True),
            ToolResultEvent(step=3, t=2.5, call_id="orphan", tool="read_file", output="text"),
        ],
        cost=Cost(wall_time_sec=3.0),
    )
    root, tool, orphan, _verifier = trial_spans(rec, redactor=NO_ENV)
    assert tool.name == "execute_tool run"
    assert (tool.error, tool.attributes["error.type"]) == ("tool_error", "tool_error")
    assert tool.end_ns - tool.start_ns == 10**9
    assert "skillci.error.message" not in root.events[0].attributes
    assert (orphan.name, orphan.start_ns == orphan.end_ns) == ("execute_tool read_file", True)
    full = trial_spans(rec, redactor=NO_ENV, include_content=True)
    assert full[1].error == "bad args: cmd"
    assert full[1].attributes["gen_ai.tool.call.arguments"] == '{"cmd": "ls"}'
    assert full[0].events[0].attributes["skillci.error.message"] == "model said x"


def test_content_is_redacted_with_the_redactor_given() -> None:
    rec = make_record("run-secret", final_output="done; the deploy key is zq8Xv1pLm0Tt")
    env = Redactor(env={"DEPLOY_KEY": "zq8Xv1pLm0Tt"})
    root = trial_spans(rec, redactor=env, include_content=True)[0]
    out = str(root.attributes["gen_ai.output.messages"])
    assert "zq8Xv1pLm0Tt" not in out
    assert "[REDACTED:env:DEPLOY_KEY]" in out


def test_events_without_times_take_the_last_known_time() -> None:
    rec = run_record(
        run_id="run-untimed",
        task_id="t1",
        events=[
            MessageEvent(step=0, t=2.0, role="user", content="go", untrusted=False),
            MessageEvent(step=1, role="assistant", content="ok", input_tokens=3, output_tokens=1),
        ],
        cost=Cost(wall_time_sec=0.0),
    )
    root, chat, _verifier = trial_spans(rec, redactor=NO_ENV)
    assert chat.start_ns == chat.end_ns == root.start_ns + 2 * 10**9 == root.end_ns


def test_provider_and_request_attributes_of_the_route() -> None:
    assert provider_of("sim/student") == "sim"
    assert provider_of("siliconflow/Qwen/Qwen3.5-27B") == "siliconflow"
    assert provider_of("oracle") == "oracle"
    rec = make_record(
        "run-model", model=ModelInfo(route="openai/gpt-4o", params={"temperature": 0.2})
    )
    attrs = trial_spans(rec, redactor=NO_ENV)[0].attributes
    assert (attrs["gen_ai.provider.name"], attrs["gen_ai.request.model"]) == (
        "openai",
        "openai/gpt-4o",
    )
    assert attrs["gen_ai.request.temperature"] == 0.2
