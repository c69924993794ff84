"""``skillci trace export --format otlp``: real trials (the embedded sim/student on a bundled
task) reach a loopback OTLP/HTTP collector as GenAI spans (design 411)."""

from __future__ import annotations

import base64
import json
import os
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from google.protobuf.json_format import ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from skillci.cli.main import main
from skillci.trace.models import (
    Cost,
    ErrorEvent,
    MessageEvent,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillLoadEvent,
    SkillRef,
    ToolCallEvent,
    ToolResultEvent,
)
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore
from tests.builders import run_record
from tests.fakes.otlp_collector import OtlpCollector

ROOT = Path(__file__).resolve().parents[2]
TASK = "cfg-log-level"
CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
    "skillci.verifier.output",
}


def trial(run_id: str = "run-20261204-120000-0a0b0c0d") -> RunRecord:
    """A trial as the built-in agent records one (times, tokens, calls, a failed tool call,
    a retry, skill loads), on the sim/student route."""
    events: list[Any] = [
        MessageEvent(step=0, t=0.0, role="system", content="You are a software agent.",
                     untrusted=False),
        MessageEvent(step=1, t=0.0001, role="user", untrusted=False,
                     content="Fix the failing CI check: python tools/check_config.py"),
        SkillLoadEvent(step=2, t=0.0001, path="SKILL.md", on_demand=False, tokens=800),
        MessageEvent(step=3, t=1.25, role="assistant", content="", input_tokens=1454,
                     output_tokens=20),
        ToolCallEvent(step=4, t=1.2501, tool="load_skill_file", call_id="call_1",
                      arguments={"path": "skillci/workflows/ci-failure.md"}),
        ToolResultEvent(step=5, t=1.2503, call_id="call_1", tool="load_skill_file",
                        output="# Workflow: CI failure"),
        SkillLoadEvent(step=6, t=1.2503, path="skillci/workflows/ci-failure.md", tokens=121),
        MessageEvent(step=7, t=2.5, role="assistant", content="Running the check.",
                     input_tokens=1633, output_tokens=12),
        ToolCallEvent(step=8, t=2.5001, tool="run", call_id="call_2",
                      arguments={"command": "python tools/check_config.py config/service.ini"}),
        ToolResultEvent(step=9, t=2.75, call_id="call_2", tool="run", exit_code=1,
                        output="config/service.ini:13: invalid value 'verbose' for 'log_level'"),
        ToolCallEvent(step=10, t=2.7501, tool="apply_patch", call_id="call_3",
                      arguments={"path": "config/service.ini", "old": "log_level = verbos"}),
        ToolResultEvent(step=11, t=2.8, call_id="call_3", tool="apply_patch",
                        error="old text not found"),
        ErrorEvent(step=12, t=2.9, error_type="ModelRetry", message="rate limited, retry 1"),
        MessageEvent(step=13, t=3.5, role="assistant", content="Fixed line 13 (log_level).",
                     input_tokens=2782, output_tokens=74),
    ]  # fmt: skip
    return run_record(
        run_id=run_id,
        task_id=TASK,
        model=ModelInfo(route="sim/student", name="student", params={"temperature": 0.0}),
        runtime=RuntimeInfo(
            harness="skillci-builtin",
            harness_version="1+skillci-prompt-1",
            runner="local (local-1)",
            sandbox="bwrap",
            seed=0,
            skill=SkillRef(name="repo-debugger", version="0.7.0", content_hash="c" * 64),
        ),
        passed=True,
        verdict={"verifier_exit_code": 0, "verifier_output": "PASS command_0\nreward 1\n"},
        events=events,
        final_output="Fixed config/service.ini line 13: log_level = debug",
        stop_reason="final_answer",
        cost=Cost(input_tokens=5869, output_tokens=106, model_calls=3, tool_calls=3,
                  wall_time_sec=3.6, usd=0.0123),
        created_at=datetime(2026, 12, 4, 12, 0, 4, 250000, tzinfo=UTC),
    )  # fmt: skip


@pytest.fixture
def home(tmp_path: Path) -> Path:
    root = tmp_path / "home"
    TraceStore(root, redactor=Redactor(env={})).put(trial())
    return root


@pytest.fixture
def record(home: Path) -> RunRecord:
    (row,) = TraceStore(home).query()
    return TraceStore(home).get(row.run_id)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind)


def _attrs(items: Any) -> dict[str, Any]:
    return {kv.key: _value(kv.value) for kv in items}


def _spans(req: ExportTraceServiceRequest) -> list[Any]:
    return [s for rs in req.resource_spans for ss in rs.scope_spans for s in ss.spans]


def _ns(rec: RunRecord, t: float | None = None) -> int:
    """The record's time of offset ``t`` (None: its end), in ns since the epoch."""
    end = (rec.created_at - datetime(1970, 1, 1, tzinfo=UTC)) // timedelta(microseconds=1) * 1000
    if t is None:
        return end
    last = max(e.t or 0.0 for e in rec.events)
    return end - round(max(rec.cost.wall_time_sec, last) * 1e9) + round(t * 1e9)


def _export(home: Path, *args: str) -> int:
    return main(["trace", "export", "--home", str(home), "--format", "otlp", *args])


def check_trial_spans(rec: RunRecord, req: ExportTraceServiceRequest, body: bytes) -> None:
    """The spans of ``rec`` as the collector got them: names, parents, the record's numbers
    and times, and no content."""
    spans = _spans(req)
    resource = _attrs(req.resource_spans[0].resource.attributes)
    assert resource["service.name"] == "skillci"
    root, *children, verifier = spans
    assert {s.trace_id for s in spans} == {root.trace_id}
    assert root.parent_span_id == b""
    assert all(s.parent_span_id == root.span_id for s in [*children, verifier])
    assert root.name == f"invoke_agent {rec.runtime.harness}"
    top = _attrs(root.attributes)
    assert rec.runtime.skill is not None
    assert {
        k: top[k]
        for k in ("gen_ai.operation.name", "skillci.task_id", "skillci.skill.version",
                  "skillci.outcome", "skillci.reward", "skillci.agent.role",
                  "gen_ai.request.model", "gen_ai.provider.name", "gen_ai.agent.name")
    } == {
        "gen_ai.operation.name": "invoke_agent",
        "skillci.task_id": rec.task_id,
        "skillci.skill.version": rec.runtime.skill.version,
        "skillci.outcome": "passed",
        "skillci.reward": rec.evaluation.reward,
        "skillci.agent.role": "student",
        "gen_ai.request.model": rec.model.name,
        "gen_ai.provider.name": "sim",
        "gen_ai.agent.name": rec.runtime.harness,
    }  # fmt: skip
    assert top["gen_ai.usage.input_tokens"] == rec.cost.input_tokens
    assert top["gen_ai.usage.output_tokens"] == rec.cost.output_tokens
    assert top["skillci.cost.usd"] == rec.cost.usd
    assert top["skillci.cost.model_calls"] == rec.cost.model_calls
    assert (root.start_time_unix_nano, root.end_time_unix_nano) == (_ns(rec, 0.0), _ns(rec))
    loads = [e for e in rec.events if isinstance(e, SkillLoadEvent)]
    loaded = [e for e in root.events if e.name == "skillci.skill_load"]
    assert [_attrs(e.attributes)["skillci.skill.file.path"] for e in loaded] == [
        e.path for e in loads
    ]
    assert [e.time_unix_nano for e in loaded] == [_ns(rec, e.t) for e in loads]
    errors = [e for e in rec.events if isinstance(e, ErrorEvent)]
    assert [
        _attrs(e.attributes)["error.type"] for e in root.events if e.name == "skillci.error"
    ] == [e.error_type for e in errors]

    answers = [e for e in rec.events if isinstance(e, MessageEvent) and e.role == "assistant"]
    calls = [e for e in rec.events if isinstance(e, ToolCallEvent)]
    chats = [s for s in children if _attrs(s.attributes)["gen_ai.operation.name"] == "chat"]
    tools = [s for s in children if _attrs(s.attributes)["gen_ai.operation.name"] == "execute_tool"]
    assert len(chats) + len(tools) == len(children)
    assert len(chats) == len(answers) == rec.cost.model_calls
    assert len(tools) == len(calls) == rec.cost.tool_calls
    for span, ev in zip(chats, answers, strict=True):
        a = _attrs(span.attributes)
        assert span.name == f"chat {rec.model.name}"
        assert span.kind == span.SPAN_KIND_CLIENT
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (
            ev.input_tokens,
            ev.output_tokens,
        )
        before = rec.events[ev.step - 1]
        assert (span.start_time_unix_nano, span.end_time_unix_nano) == (
            _ns(rec, before.t),
            _ns(rec, ev.t),
        )
    results = {e.call_id: e for e in rec.events if isinstance(e, ToolResultEvent)}
    for span, call in zip(tools, calls, strict=True):
        a = _attrs(span.attributes)
        res = results[call.call_id]
        assert span.name == f"execute_tool {call.tool}"
        assert (a["gen_ai.tool.name"], a["gen_ai.tool.call.id"]) == (call.tool, call.call_id)
        assert a.get("skillci.tool.exit_code") == res.exit_code
        assert (span.status.code == span.status.STATUS_CODE_ERROR) == (res.error is not None)
        assert (span.start_time_unix_nano, span.end_time_unix_nano) == (
            _ns(rec, call.t),
            _ns(rec, res.t),
        )
    assert sum(s.end_time_unix_nano - s.start_time_unix_nano for s in tools) > 0
    v = _attrs(verifier.attributes)
    assert verifier.name == f"verifier {rec.task_id}"
    assert (v["gen_ai.evaluation.score.value"], v["gen_ai.evaluation.score.label"]) == (
        rec.evaluation.reward,
        "passed",
    )
    assert v["skillci.verifier.exit_code"] == rec.evaluation.verifier_exit_code
    assert verifier.end_time_unix_nano == _ns(rec)
    # no content unless asked for: neither the keys nor the texts
    assert not CONTENT_KEYS & {k for s in spans for k in _attrs(s.attributes)}
    instruction = next(e for e in rec.events if isinstance(e, MessageEvent) and e.role == "user")
    assert instruction.content[:40].encode() not in body
    assert rec.final_output and rec.final_output[:30].encode() not in body
    outputs = [r.output for r in results.values() if len(r.output) >= 12]
    assert outputs and not [o for o in outputs if o[:24].encode() in body]


def test_a_trial_reaches_the_collector_as_genai_spans(
    home: Path, record: RunRecord, capsys: pytest.CaptureFixture[str]
) -> None:
    with OtlpCollector() as col:
        assert _export(home, record.run_id, "--endpoint", col.url, "--json") == 0
    summary = json.loads(capsys.readouterr().out)
    (req,) = col.requests
    assert col.headers[0]["content-type"] == "application/x-protobuf"
    assert summary["sent"] is True
    assert summary["spans"] == len(_spans(req)) == 1 + 3 + 3 + 1
    assert summary["runs"] == [
        {"run_id": record.run_id, "trace_id": req.resource_spans[0].scope_spans[0].spans[0]
         .trace_id.hex(), "spans": 8, "outcome": "passed"}
    ]  # fmt: skip
    check_trial_spans(record, req, col.bodies[0])


def test_several_trials_go_in_one_request_one_trace_each(
    home: Path, record: RunRecord, capsys: pytest.CaptureFixture[str]
) -> None:
    other = trial("run-20261204-120500-0e0f1011")
    TraceStore(home, redactor=Redactor(env={})).put(other)
    with OtlpCollector() as col:
        assert _export(home, record.run_id, other.run_id, record.run_id, "--endpoint", col.url) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert f"sent 16 span(s) of 2 trial(s) to {col.url}/v1/traces" in out
    (req,) = col.requests
    spans = _spans(req)
    assert len({s.trace_id for s in spans}) == 2
    assert [s.name for s in spans if not s.parent_span_id] == ["invoke_agent skillci-builtin"] * 2
    with OtlpCollector() as dry:
        assert _export(home, record.run_id, other.run_id, "--endpoint", dry.url, "--dry-run") == 0
    assert dry.requests == []
    assert "would export 16 span(s) of 2 trial(s) to" in " ".join(capsys.readouterr().out.split())


@pytest.mark.slow  # a real trial: ~15 s of eval run before the export
def test_a_real_eval_run_trial_reaches_the_collector(tmp_path: Path) -> None:
    """The embedded default end to end: `skillci eval run` (built-in agent, sim/student, the
    bundled repo-debugger skill) stores a trial; its export is checked like the built one."""
    home = tmp_path / "home"
    cmd = [sys.executable, "-m", "skillci", "eval", "run", "--home", str(home), "--task", TASK]
    cmd += ["--skill", str(ROOT / "skills" / "repo-debugger"), "--json"]
    env = {k: v for k, v in os.environ.items() if k != "SKILLCI_HOME"}
    done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 0, done.stderr
    (row,) = TraceStore(home).query()
    rec = TraceStore(home).get(row.run_id)
    with OtlpCollector() as col:
        assert _export(home, rec.run_id, "--endpoint", col.url) == 0
        assert _export(home, rec.run_id, "--endpoint", col.url) == 0
    check_trial_spans(rec, col.requests[0], col.bodies[0])
    assert col.bodies[0] == col.bodies[1]


def test_ids_and_bytes_are_the_same_on_every_export(home: Path, record: RunRecord) -> None:
    with OtlpCollector() as col:
        assert _export(home, record.run_id, "--endpoint", col.url) == 0
        assert _export(home, record.run_id[:20], "--endpoint", col.url + "/v1/traces/") == 0
    first, second = col.requests
    assert [(s.trace_id, s.span_id) for s in _spans(first)] == [
        (s.trace_id, s.span_id) for s in _spans(second)
    ]
    assert col.bodies[0] == col.bodies[1]
    assert len({s.span_id for s in _spans(first)}) == len(_spans(first))


def test_include_content_sends_texts_through_the_redactor(
    home: Path, record: RunRecord, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a value in the stored record that became a secret after it was stored: the export's own
    # redaction removes it, wherever it is (instruction, tool arguments and outputs, answers)
    monkeypatch.setenv("DEPLOY_CHECK_TOKEN", "check_config")
    assert "check_config" in record.model_dump_json()
    with OtlpCollector() as col:
        assert _export(home, record.run_id, "--endpoint", col.url, "--include-content") == 0
    spans = _spans(col.requests[0])
    keys = {k for s in spans for k in _attrs(s.attributes)}
    assert keys >= CONTENT_KEYS
    assert b"check_config" not in col.bodies[0]
    assert b"[REDACTED:env:DEPLOY_CHECK_TOKEN]" in col.bodies[0]
    results = [_attrs(s.attributes).get("gen_ai.tool.call.result") for s in spans]
    assert any(r and "invalid value 'verbose'" in r for r in results)  # content is there


def test_out_writes_otlp_json_without_a_server(
    home: Path, record: RunRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "spans.json"
    assert _export(home, record.run_id, "--out", str(out)) == 0
    assert f"wrote {out}" in " ".join(capsys.readouterr().out.split())
    doc = json.loads(out.read_text())
    assert _export(home, record.run_id) == 0  # no --out, no --endpoint: the same on stdout
    assert json.loads(capsys.readouterr().out) == doc
    spans = doc["resourceSpans"][0]["scopeSpans"][0]["spans"]
    root = spans[0]
    assert len(root["traceId"]) == 32 and int(root["traceId"], 16)  # OTLP/JSON: hex ids
    assert all(s["parentSpanId"] == root["spanId"] for s in spans[1:])
    assert root["startTimeUnixNano"] == str(_ns(record, 0.0))
    # it is a valid ExportTraceServiceRequest once ids are bytes again
    for s in spans:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in s:
                s[key] = base64.b64encode(bytes.fromhex(s[key])).decode()
    req = ParseDict(doc, ExportTraceServiceRequest())
    assert [s.name for s in _spans(req)][:2] == [
        f"invoke_agent {record.runtime.harness}",
        f"chat {record.model.name}",
    ]
    dry = tmp_path / "dry.json"
    assert _export(home, record.run_id, "--out", str(dry), "--dry-run", "--json") == 0
    assert json.loads(capsys.readouterr().out)["written"] is False
    assert not dry.exists()


def test_an_unreachable_endpoint_is_exit_4_with_the_cause_and_nothing_written(
    home: Path, record: RunRecord, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with OtlpCollector() as col:
        closed = col.url  # the port is free again once the collector has stopped
    out = tmp_path / "spans.json"
    code = _export(home, record.run_id, "--endpoint", closed, "--timeout", "1", "--out", str(out))
    err = capsys.readouterr()
    assert code == 4
    assert err.out == ""
    (line,) = err.err.strip().splitlines()
    assert f"OTLP export to {closed}/v1/traces failed: [Errno 111] Connection refused" in line
    assert not out.exists()


def test_a_collector_that_refuses_is_exit_4_with_its_status(
    home: Path, record: RunRecord, capsys: pytest.CaptureFixture[str]
) -> None:
    with OtlpCollector(status=400) as col:
        assert _export(home, record.run_id, "--endpoint", col.url) == 4
    assert "failed: HTTP 400 refused by the test collector" in capsys.readouterr().err
    assert col.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--endpoint", "localhost:4318"], "--endpoint localhost:4318: not an http(s) URL"),
        (["--format", "atif", "--endpoint", "http://x"], "options of --format otlp"),
        (["--format", "atif", "run-a", "run-b"], "--format atif exports one run, 3 given"),
        (["--format", "csv"], "--format csv: unknown export format"),
    ],
)
def test_bad_options_are_exit_2(
    home: Path, record: RunRecord, args: list[str], message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["trace", "export", "--home", str(home), record.run_id, "--format", "otlp", *args]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert main(["trace", "export", "--home", str(home), "--format", "otlp", "run-nope"]) == 2


def test_without_the_extra_it_names_the_pip_install(home: Path, record: RunRecord) -> None:
    code = (
        "import sys\n"
        "class Block:\n"
        "    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('opentelemetry', 'google'):\n"
        "            raise ImportError(f'No module named {name!r}', name=name)\n"
        "sys.meta_path.insert(0, Block())\n"
        "from skillci.cli.main import main\n"
        f"sys.exit(main(['trace', 'export', '--home', {str(home)!r}, '--format', 'otlp', "
        f"{record.run_id!r}]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 4
    (line,) = done.stderr.strip().splitlines()
    assert "OpenTelemetry export needs the otel extra" in line
    assert "pip install 'skillci[otel]'" in line


def test_trace_commands_do_not_import_opentelemetry(home: Path, record: RunRecord) -> None:
    code = (
        "import sys\n"
        "from skillci.cli.main import main\n"
        f"assert main(['trace', 'show', '--home', {str(home)!r}, {record.run_id!r}, '--json']) == 0\n"
        f"assert main(['trace', 'ls', '--home', {str(home)!r}, '--limit', '5']) == 0\n"
        "print('loaded:', sorted(m for m in sys.modules if m.startswith(('opentelemetry', 'google.protobuf'))))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.rstrip().endswith("loaded: []")
