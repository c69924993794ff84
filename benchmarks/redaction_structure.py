"""Redaction false positives on trajectories (issue 35 item 5), next to the secrets catch rate.

    python -m benchmarks.redaction_structure [--examples N]

Every trajectory of the project's corpora goes through its importer and then through
``TraceStore.put`` (the real write path: ``Redactor.redact_model``) into a temporary store; the
stored record is compared with the imported one, string by string:

- harbor / benchflow: every job dir under tests/fixtures/harness-results/<format>;
- codex: the rollouts under tests/fixtures/agent-logs/codex;
- opencode: the sessions under tests/fixtures/agent-logs/opencode (``session.json`` rows);
- claude-code: the sessions under tests/fixtures/agent-logs/claude-code (none stored yet: the
  Claude Code stream logs inside Harbor trials come in through the Harbor importer).

Per corpus and kind, how many structural values redaction changed (a false positive; goal 0):
tool-call ids (``call_id`` fields and ``toolu_``/``call_``-shaped tokens; plus call/result
pairing: every stored call id equals the original and its result's id), run/trial ids
(``run_id``-like fields, UUIDs, Harbor trial names ``<task>__<7 chars>``, skillci run ids),
hashes (sha1/sha256 hex, ``sha256:``), filesystem paths, URLs without credentials (webhook
URLs are credentials and are not counted) and timestamps. A token inside free text counts once
per kind it matches. The secrets catch rate of benchmarks/secrets_corpus.py is printed from
the same run with the same ``Redactor``.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillci.trace.models import RunRecord
from skillci.trace.redact import _WEBHOOK, Redactor

ROOT = Path(__file__).resolve().parents[1] / "tests" / "fixtures"
HARNESS = ROOT / "harness-results"
AGENT_LOGS = ROOT / "agent-logs"
KINDS = ("tool_call_id", "run_id", "hash", "path", "url", "timestamp")

#: Fields whose whole value is one structural id.
_FIELD_KIND = {
    "call_id": "tool_call_id",
    "tool_call_id": "tool_call_id",
    "tool_use_id": "tool_call_id",
    "source_call_id": "tool_call_id",
    "callID": "tool_call_id",
    "run_id": "run_id",
    "trial_id": "run_id",
    "trial_name": "run_id",
    "session_id": "run_id",
    "sessionId": "run_id",
    "sessionID": "run_id",
    "trial_cache_key": "hash",
    "content_hash": "hash",
    "digest": "hash",
}
_TOKENS: dict[str, re.Pattern[str]] = {
    "tool_call_id": re.compile(
        r"\b(?:(?:srv)?toolu_(?:vrtx_)?|call_|fc_|chatcmpl-)[A-Za-z0-9_-]{10,}"
    ),
    "run_id": re.compile(
        r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b|"
        r"\b[A-Za-z0-9][\w.-]*__[A-Za-z0-9]{7}\b|"
        r"\b(?:run|trial|harbor|benchflow|codex|opencode|claude-code|ses|prt|msg)[-_][\w.-]{6,}"
    ),
    "hash": re.compile(r"\bsha256:[0-9a-f]{64}\b|\b[0-9a-f]{64}\b|\b[0-9a-f]{40}\b"),
    "path": re.compile(r"(?<![\w:/.~-])(?:~|\.{1,2})?(?:/[\w.@+~=-]+){2,}/?"),
    "url": re.compile(r"\bhttps?://[^\s\"'<>)\]\\`]+"),
    "timestamp": re.compile(
        r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?"
    ),
}


@dataclass
class Tally:
    """Per kind: values seen and values redaction changed, with the first examples."""

    seen: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    changed: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    examples: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    records: int = 0
    calls: int = 0
    calls_intact: int = 0

    def add(self, kind: str, value: str, after: str, where: str, *, lost: bool) -> None:
        self.seen[kind] += 1
        if lost:
            self.changed[kind] += 1
            self.examples[kind].append(f"{where}: {value[:100]!r} -> {after[:160]!r}")

    @property
    def total_changed(self) -> int:
        return sum(self.changed.values())


def _leaves(a: Any, b: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[str, str, str]]:
    """(field name, original string, stored string) for every string, dict keys included."""
    if isinstance(a, str):
        yield (path[-1] if path else "", a, b if isinstance(b, str) else json.dumps(b)[:100])
    elif isinstance(a, dict) and isinstance(b, dict):
        for k, va in a.items():  # the stored file has sorted keys; a redacted key is missing
            yield ("<key>", k, k if k in b else "(key redacted)")
            yield from _leaves(va, b.get(k), (*path, k))
    elif isinstance(a, list) and isinstance(b, list):
        for va, vb in zip(a, b, strict=False):
            yield from _leaves(va, vb, path)


def _url_ok(url: str) -> bool:
    """A URL that carries no credential (no user:pass@, not a webhook whose path is the key)."""
    host = url.split("/", 3)[2] if url.count("/") >= 2 else ""
    return "@" not in host and not _WEBHOOK.match(url)


def _after(a: str, b: str, tok: str) -> str:
    """What became of ``tok`` in ``b``: the stored text after the original's left context."""
    for m in re.finditer(re.escape(tok), a):
        for width in (120, 60, 40, 20, 8):
            ctx = a[max(0, m.start() - width) : m.start()]
            j = b.find(ctx) if ctx and a.count(ctx) == 1 else -1
            if j >= 0 and not b.startswith(tok, j + len(ctx)):
                return b[j : j + len(ctx) + len(tok) + 20]
    marked = re.search(r".{0,60}\[REDACTED:[^\]]*\].{0,20}", b)  # the context was redacted too
    return marked.group(0) if marked else b[:100]


def measure(original: RunRecord, stored: dict[str, Any], tally: Tally) -> None:
    """Count the structural values of ``original`` and those redaction changed in ``stored``."""
    tally.records += 1
    where = original.run_id
    for name, a, b in _leaves(original.model_dump(mode="json"), stored):
        kind = _FIELD_KIND.get(name)
        if kind is not None and a:
            tally.add(kind, a, b, f"{where} {name}", lost=a != b)
            continue
        for k, rx in _TOKENS.items():
            for tok in set(rx.findall(a)):
                if k == "url" and not _url_ok(tok):
                    continue
                n, kept = a.count(tok), b.count(tok)
                for i in range(n):
                    after = _after(a, b, tok) if i >= kept else tok
                    tally.add(k, tok, after, f"{where} {name}", lost=i >= kept)
    calls = [e for e in original.events if e.kind == "tool_call"]
    results = {e.call_id for e in original.events if e.kind == "tool_result"}
    back = stored.get("events") or []
    back_calls = [e.get("call_id") for e in back if e.get("kind") == "tool_call"]
    back_results = {e.get("call_id") for e in back if e.get("kind") == "tool_result"}
    for c, b in zip(calls, back_calls + [None] * len(calls), strict=False):
        tally.calls += 1
        paired = c.call_id in results
        tally.calls_intact += b == c.call_id and (not paired or b in back_results)


def store_and_read(records: list[RunRecord], redactor: Redactor, home: Path) -> list[Any]:
    """Each record as ``TraceStore.put`` wrote it (a record stored twice is redacted again)."""
    from skillci.errors import ConflictError
    from skillci.trace.store import TraceStore

    store = TraceStore(home, redactor=redactor)
    out: list[Any] = []
    for rec in records:
        try:
            path = store.put(rec).path
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except ConflictError:  # the same trial under two job dirs: same redaction
            out.append(redactor.redact_model(rec).model_dump(mode="json"))
    return out


def corpora(one_each: bool = False) -> Iterator[tuple[str, Path, list[RunRecord]]]:
    """(corpus, item, imported records) for every trajectory; ``one_each``: one file per agent
    log format, and harness items smallest first up to the first with a tool call (the
    regression test)."""
    from skillci.trace.importers import benchflow, claude_code, codex, harbor, opencode

    def pick(items: list[Path]) -> list[Path]:
        if not one_each:
            return items
        return sorted(items, key=lambda p: sum(f.stat().st_size for f in _files(p)))

    first = 1 if one_each else None
    for name, mod in (("harbor", harbor), ("benchflow", benchflow)):
        for item in pick(sorted(d for d in (HARNESS / name).iterdir() if d.is_dir())):
            records = mod.import_jobs(item)
            yield name, item, records
            if one_each and any(e.kind == "tool_call" for r in records for e in r.events):
                break  # the smallest item with a tool call
    for path in pick(sorted((AGENT_LOGS / "codex").glob("*.jsonl")))[:first]:
        yield "codex", path, codex.import_jobs(path)
    for path in pick(sorted((AGENT_LOGS / "opencode").glob("*.json")))[:first]:
        session = json.loads(path.read_text(encoding="utf-8"))
        yield "opencode", path, [opencode.import_session(session, path)]
    cc = AGENT_LOGS / "claude-code"
    for path in pick(sorted(cc.glob("*.jsonl")) if cc.is_dir() else [])[:first]:
        yield "claude-code", path, claude_code.import_jobs(path)


def _files(p: Path) -> list[Path]:
    return [p] if p.is_file() else [f for f in p.rglob("*") if f.is_file()]


def run(redactor: Redactor, *, one_each: bool = False) -> dict[str, Tally]:
    tallies: dict[str, Tally] = defaultdict(Tally)
    with tempfile.TemporaryDirectory(prefix="redaction-structure-") as tmp:
        for name, _item, records in corpora(one_each):
            for rec, stored in zip(
                records, store_and_read(records, redactor, Path(tmp)), strict=True
            ):
                measure(rec, stored, tallies[name])
    return tallies


def secrets_rate(redactor: Redactor) -> list[str]:
    """The figures benchmarks/secrets_corpus.py prints, with this redactor."""
    from benchmarks.secrets_corpus import benign_lines, contexts, load

    items = load()
    found = {"sample": 0, "keyword": 0, "bare": 0}
    for item in items:
        for ctx, texts in contexts(item).items():
            found[ctx] += all(item["secret"] not in redactor.redact_text(t) for t in texts)
    n = len(items)
    lines = benign_lines()
    changed = sum(1 for _, ln in lines if redactor.redact_text(ln) != ln)
    return [
        *(f"[secrets {c}] found {v}/{n} formats ({100 * v / n:.1f}%)" for c, v in found.items()),
        f"[secrets benign] {len(lines)} lines of real skills' text files: changed {changed} "
        f"({100 * changed / max(1, len(lines)):.2f}%)",
    ]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--examples", type=int, default=3, help="examples listed per kind")
    args = ap.parse_args(argv)
    redactor = Redactor(env={})
    tallies = run(redactor)
    for name in sorted(tallies):
        t = tallies[name]
        kinds = " ".join(f"{k}={t.changed[k]}/{t.seen[k]}" for k in KINDS)
        print(
            f"[{name}] records={t.records} redacted/seen: {kinds}; tool calls id+pairing intact "
            f"{t.calls_intact}/{t.calls}"
        )
        for k in KINDS:
            for ex in t.examples[k][: args.examples]:
                print(f"  FP {k} {ex}")
    total = sum(t.total_changed for t in tallies.values())
    broken = sum(t.calls - t.calls_intact for t in tallies.values())
    print(
        f"structural values redacted (goal 0): {total}; tool calls unpaired by redaction: {broken}"
    )
    for line in secrets_rate(redactor):
        print(line)
    return 1 if total or broken else 0


if __name__ == "__main__":
    sys.exit(main())
