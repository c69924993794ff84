"""Regression guard for issue 35 item 5 (design 408): importing one small trajectory per format
through the store (redaction on) changes no tool-call id, run id, hash, path, URL or timestamp,
and the measurement behind benchmarks/redaction_structure.py does see a redacted id."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.redaction_structure import KINDS, Tally, corpora, measure, store_and_read
from skillci.trace.importers.claude_code import import_session
from skillci.trace.models import RunRecord
from skillci.trace.redact import Redactor
from tests.integration.importers.test_claude_code_session import SESSION


def _records(tmp_path: Path) -> dict[str, list[RunRecord]]:
    out: dict[str, list[RunRecord]] = {}
    for name, _item, records in corpora(one_each=True):
        out.setdefault(name, []).extend(records)
    session = tmp_path / "session.jsonl"
    session.write_text("".join(json.dumps(e) + "\n" for e in SESSION), encoding="utf-8")
    out["claude-code"] = [import_session(session)]
    return out


def test_one_trajectory_per_format_keeps_every_id_and_path(tmp_path: Path) -> None:
    records = _records(tmp_path)
    assert set(records) == {"harbor", "benchflow", "codex", "opencode", "claude-code"}
    redactor = Redactor(env={})
    for name, recs in records.items():
        tally = Tally()
        for rec, stored in zip(recs, store_and_read(recs, redactor, tmp_path / name), strict=True):
            measure(rec, stored, tally)
        assert tally.seen["run_id"] and tally.seen["timestamp"] and tally.seen["tool_call_id"], name
        assert tally.seen["path"] or name == "claude-code", name
        changed = {k: tally.changed[k] for k in KINDS if tally.changed[k]}
        assert changed == {}, (name, {k: tally.examples[k][:3] for k in changed})
        assert tally.calls_intact == tally.calls, name
    calls = sum(1 for r in records["claude-code"] for e in r.events if e.kind == "tool_call")
    assert calls > 0


def test_the_measurement_sees_an_id_the_redactor_takes(tmp_path: Path) -> None:
    """A redactor told that a tool-call id is a secret: the guard above would fail."""
    rec = _records(tmp_path)["claude-code"][0]
    call_id = next(e.call_id for e in rec.events if e.kind == "tool_call")
    tally = Tally()
    [stored] = store_and_read([rec], Redactor(env={}, extra_secrets=[call_id]), tmp_path / "s")
    measure(rec, stored, tally)
    assert tally.changed["tool_call_id"] >= 2  # the call and its result
    assert tally.calls_intact < tally.calls
