"""What the harness importers fill from the real result dirs under
tests/fixtures/harness-results/ (copied from the harnesses' repositories; see each SOURCES.yaml),
and the agent importers from the session logs under tests/fixtures/agent-logs/ (written by the
real agents in tests/integration/agents/; design 388).

Per corpus item (a BenchFlow rollout dir / a Harbor job dir) and split (dev / test-only, by a hash
of the item id, chosen before the items were looked at): the records' states, rewards, tool calls
with arguments, tokens, models, agents, user rounds, reward-hack evidence. Per *shape* (the set of
top-level fields of the result file, so each upstream version of the format is its own shape):
the fields the importer maps or keeps and the ones it lists as unmapped. A *silent drop* is a
non-empty source field that is neither mapped, kept, nor listed as unmapped on its record; the
last lines count them (they must be 0).

    python benchmarks/import_fields.py
"""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "harness-results"
AGENT_LOGS = ROOT.parent / "agent-logs"
RESULT_FILES = ("result.json", "gold-result.json")


def _atif_check(t: dict[str, int], rec: Any, source: Path) -> None:
    """Import → export of the trial's ATIF trajectory equals the file, ids and times intact."""
    from skillci.trace.atif import to_atif

    if rec.atif is None:
        return
    original = json.loads((source / "agent" / "trajectory.json").read_text(encoding="utf-8"))
    out = to_atif(rec)
    t["atif"] += 1
    t["atif_equal"] += out == original
    steps, back = original.get("steps") or [], out.get("steps") or []
    t["atif_steps"] += len(steps)
    ids = [c.get("tool_call_id") for s in steps for c in s.get("tool_calls") or []]
    event_ids = {e.call_id for e in rec.events if e.kind == "tool_call"}
    t["atif_ids"] += len(ids)
    t["atif_ids_intact"] += sum(1 for i in ids if i in event_ids)
    stamps = [(s.get("timestamp"), b.get("timestamp")) for s, b in zip(steps, back, strict=False)]
    t["atif_stamps"] += sum(1 for a, _ in stamps if a)
    t["atif_stamps_intact"] += sum(1 for a, b in stamps if a and a == b)
    for s, meta in zip(steps, rec.atif.steps, strict=False):
        t["atif_verbatim"] += len(meta.rest)
        t["atif_by_events"] += len(set(s) - set(meta.rest))


def split_of(item_id: str) -> str:
    """dev or test: sha256 of ``<harness>/<item dir>``, first 8 hex digits mod 4 == 0 → test."""
    return "test" if int(hashlib.sha256(item_id.encode()).hexdigest()[:8], 16) % 4 == 0 else "dev"


def _result(source: Path) -> dict[str, Any]:
    for name in RESULT_FILES:
        try:
            data = json.loads((source / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict):
            return data
    return {}


def _source_fields(fmt: str, res: dict[str, Any]) -> set[str]:
    """The non-empty fields a record could lose, named as the importer names them."""
    if fmt == "benchflow":
        return {f"result.json:{k}" for k, v in res.items() if v not in (None, {}, [], "")}
    blocks = ("agent_info", "agent_result", "verifier_result", "exception_info")
    out = {f"result.json:{k}" for k, v in res.items() if v not in (None, {}, [], "")}
    for block in blocks:
        data = res.get(block)
        if isinstance(data, dict):
            out |= {
                f"result.json:{block}.{k}" for k, v in data.items() if v not in (None, {}, [], "")
            }
    return out


def _accounted(fmt: str, rec: Any) -> set[str]:
    """Fields the record maps, keeps or lists as unmapped."""
    mod = importlib.import_module(f"skillci.trace.importers.{fmt}")
    unmapped = set(rec.metadata.get("unmapped") or {})
    if fmt == "benchflow":
        known = set(mod._RESULT_FIELDS) | set(mod._KEPT_FIELDS)
        return {f"result.json:{k}" for k in known} | unmapped
    names: set[str] = set()
    for table in (mod.MAPPED_FIELDS, mod.KEPT_FIELDS):
        for block, keys in table.items():
            names |= {f"result.json:{block}.{k}" if block else f"result.json:{k}" for k in keys}
    return names | unmapped


def _agent_logs(totals: dict[str, dict[str, int]]) -> None:
    """Codex rollouts: every line a step or kept verbatim, every unmapped payload key's value in
    the export, call ids paired, step times as written, ATIF export equal to the conversion."""
    from skillci.trace.atif import to_atif
    from skillci.trace.importers.claude_code import read_session
    from skillci.trace.importers.codex import _MAPPED, import_rollout, rollout_to_atif

    for path in sorted((AGENT_LOGS / "codex").glob("*.jsonl")):
        t = totals[f"codex {split_of('codex/' + path.name)}"]
        entries, _ = read_session(path)
        rec = import_rollout(path)
        out = to_atif(rec)
        text = json.dumps(out["steps"], sort_keys=True)  # the steps, without kept lines
        kept = (out.get("extra") or {}).get("codex_entries") or []
        t["items"] += 1
        t["records"] += 1
        t["lines"] += len(entries)
        t["atif"] += 1
        t["atif_equal"] += out == rollout_to_atif(entries)
        for e in entries:
            payload = e.get("payload") if isinstance(e.get("payload"), dict) else {}
            fields = [k for k, v in payload.items() if v not in (None, {}, [], "")]
            t["fields"] += len(fields)
            if e.get("type") != "response_item" or e in kept:  # kept as written?
                lost = [] if e in kept else fields
            else:  # each unmapped key with its value, in a step's extra
                mapped = _MAPPED.get(str(payload.get("type")), frozenset({"type"}))
                lost = [
                    k
                    for k in fields
                    if k not in mapped
                    and json.dumps({k: payload[k]}, sort_keys=True)[1:-1] not in text
                ]
            t["silent_drops"] += len(lost)
            for k in lost:
                print(f"SILENT DROP codex {path.name}: {e.get('type')}.{k}")
        calls = [e for e in rec.events if e.kind == "tool_call"]
        results = {e.call_id for e in rec.events if e.kind == "tool_result"}
        t["tool_calls"] += len(calls)
        t["tool_calls_with_args"] += sum(1 for c in calls if getattr(c, "arguments", None))
        t["calls_paired"] += sum(1 for c in calls if c.call_id in results)
        src = [s.get("timestamp") for s in rollout_to_atif(entries)["steps"]]
        back = [s.get("timestamp") for s in out["steps"]]
        t["atif_stamps"] += sum(1 for a in src if a)
        t["atif_stamps_intact"] += sum(1 for a, b in zip(src, back, strict=True) if a and a == b)
        t["with_tokens"] += not rec.metadata.get("unknown_counts")
        t["with_model"] += rec.model.name is not None
        t["with_agent"] += rec.runtime.harness_version != "unknown"
        t["unmapped_fields"] += len(rec.metadata.get("unmapped") or {})


def _opencode(totals: dict[str, dict[str, int]]) -> None:
    """OpenCode sessions (the fixture's rows): every message a step, every part and message
    key kept, calls paired, step times, ATIF export equal to the conversion."""
    from skillci.trace.atif import to_atif
    from skillci.trace.importers.opencode import _MAPPED, import_session, session_to_atif

    for path in sorted((AGENT_LOGS / "opencode").glob("*.json")):
        session = json.loads(path.read_text(encoding="utf-8"))
        t = totals[f"opencode {split_of('opencode/' + path.name)}"]
        rec = import_session(session, path)
        out = to_atif(rec)
        t["items"] += 1
        t["lines"] += len(session["messages"])
        t["atif"] += 1
        t["atif_equal"] += out == session_to_atif(session)
        for msg, step in zip(session["messages"], out["steps"], strict=True):
            kept = step["extra"]
            fields = [k for k in msg["info"] if k not in _MAPPED]
            parts = [p for p in msg["parts"] if p.get("type") not in ("text", "reasoning", "tool")]
            t["fields"] += len(msg["info"]) + len(msg["parts"])
            lost = [k for k in fields if kept["opencode"].get(k) != msg["info"][k]]
            lost += [p["id"] for p in parts if p not in kept.get("opencode_parts", [])]
            t["silent_drops"] += len(lost)
            for k in lost:
                print(f"SILENT DROP opencode {path.name}: {k}")
        calls = [e for e in rec.events if e.kind == "tool_call"]
        results = {e.call_id for e in rec.events if e.kind == "tool_result"}
        t["tool_calls"] += len(calls)
        t["tool_calls_with_args"] += sum(1 for c in calls if getattr(c, "arguments", None))
        t["calls_paired"] += sum(1 for c in calls if c.call_id in results)
        t["atif_stamps"] += sum(1 for s in out["steps"] if s.get("timestamp"))
        t["atif_stamps_intact"] += sum(
            1 for s in out["steps"] if str(s.get("timestamp", "")).endswith("Z")
        )
        t["with_tokens"] += rec.cost.tokens is not None
        t["with_model"] += rec.model.name is not None
        t["with_agent"] += rec.runtime.harness_version != "unknown"


def main() -> int:
    totals: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    shapes: dict[tuple[str, frozenset[str]], dict[str, Any]] = {}
    for fmt in ("benchflow", "harbor"):
        corpus = ROOT / fmt
        if not corpus.is_dir():
            print(f"{fmt}: no corpus at {corpus}")
            continue
        importer = importlib.import_module(f"skillci.trace.importers.{fmt}")
        items = sorted(d for d in corpus.iterdir() if d.is_dir())
        for item in items:
            split = split_of(f"{fmt}/{item.name}")
            records = importer.import_jobs(item)
            t = totals[f"{fmt} {split}"]
            t["items"] += 1
            trial_dirs = importer.find_trials(item) if fmt == "harbor" else [None] * len(records)
            for rec, trial_dir in zip(records, trial_dirs, strict=True):
                source = trial_dir or Path(str(rec.metadata.get("source")))
                _atif_check(t, rec, source)
                res = _result(source)
                fields = _source_fields(fmt, res)
                unmapped = set(rec.metadata.get("unmapped") or {})
                silent = fields - _accounted(fmt, rec)
                key = (fmt, frozenset(res))
                shape = shapes.setdefault(
                    key, {"records": 0, "unmapped": set(), "mapped": set(), "items": set()}
                )
                shape["records"] += 1
                shape["items"].add(f"{item.name} ({split})")
                shape["unmapped"] |= {f for f in unmapped if f.startswith("result.json:")}
                shape["mapped"] |= fields - unmapped
                calls = [e for e in rec.events if e.kind == "tool_call"]
                t["records"] += 1
                t["with_reward"] += rec.evaluation.reward is not None
                t["tool_calls"] += len(calls)
                t["tool_calls_with_args"] += sum(1 for c in calls if getattr(c, "arguments", None))
                t["with_tokens"] += bool(rec.cost.tokens)
                t["tokens_unknown"] += rec.cost.tokens is None
                t["with_model"] += rec.model.name is not None
                t["with_agent"] += rec.runtime.harness != "unknown"
                t["user_rounds"] += len(rec.metadata.get("user_rounds") or [])
                t["unmapped_fields"] += len(unmapped)
                t["hack_evidence"] += bool(rec.reward_hack_evidence)
                t["silent_drops"] += len(silent)
                t[f"state:{rec.evaluation.state.value}"] += 1
                for name in sorted(silent):
                    print(f"SILENT DROP {fmt} {source.name}: {name}")
    _agent_logs(totals)
    _opencode(totals)
    print("== per shape (top-level fields of the result file)")
    for n, ((fmt, keys), shape) in enumerate(sorted(shapes.items(), key=lambda kv: kv[0][0]), 1):
        print(
            f"{fmt} shape {n}: {len(keys)} top-level fields, {shape['records']} record(s) in "
            f"{len(shape['items'])} item(s); mapped/kept {len(shape['mapped'])} field(s), "
            f"unmapped {len(shape['unmapped'])}"
            + (f": {', '.join(sorted(shape['unmapped']))}" if shape["unmapped"] else "")
        )
    print("== per harness and split")
    for name in sorted(totals):
        t = totals[name]
        states = ", ".join(f"{k[6:]}={v}" for k, v in sorted(t.items()) if k.startswith("state:"))
        if name.startswith(("codex", "opencode")):
            print(
                f"{name:15} sessions={t['items']} lines/messages={t['lines']} "
                f"fields={t['fields']} "
                f"tool_calls={t['tool_calls']} (with args {t['tool_calls_with_args']}, paired "
                f"with their output {t['calls_paired']}) timestamps={t['atif_stamps']} (intact "
                f"{t['atif_stamps_intact']}) with_tokens={t['with_tokens']} "
                f"with_model={t['with_model']} with_version={t['with_agent']} "
                f"unmapped={t['unmapped_fields']} silent_drops={t['silent_drops']} "
                f"ATIF round_trip_equal={t['atif_equal']}/{t['atif']}"
            )
            continue
        print(
            f"{name:15} items={t['items']} records={t['records']} with_reward={t['with_reward']} "
            f"tool_calls={t['tool_calls']} (with args {t['tool_calls_with_args']}) "
            f"with_tokens={t['with_tokens']} (unknown, null: {t['tokens_unknown']}) "
            f"with_model={t['with_model']} with_agent={t['with_agent']} user_rounds={t['user_rounds']} "
            f"unmapped={t['unmapped_fields']} (each warned on its record) "
            f"hack_evidence={t['hack_evidence']} silent_drops={t['silent_drops']} [{states}]"
        )
        if t["atif"]:
            print(
                f"{'':15} ATIF: trajectories={t['atif']} round_trip_equal={t['atif_equal']} "
                f"steps={t['atif_steps']} tool_call_ids={t['atif_ids']} "
                f"(intact {t['atif_ids_intact']}) timestamps={t['atif_stamps']} "
                f"(intact {t['atif_stamps_intact']}) step fields carried by events="
                f"{t['atif_by_events']} kept verbatim={t['atif_verbatim']} dropped=0"
            )
    drops = sum(t["silent_drops"] for t in totals.values())
    unequal = sum(t["atif"] - t["atif_equal"] for t in totals.values())
    print(f"silent drops: {drops}")
    print(f"ATIF round trips not equal: {unequal}")
    return 1 if drops or unequal else 0


if __name__ == "__main__":
    sys.exit(main())
