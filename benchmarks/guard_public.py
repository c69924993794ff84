"""The guard against public attack payloads and real skills' sentences (issue 16).

Each payload of ``tests/fixtures/attacks/payloads.jsonl`` goes into one patch field and
one presentation (plain or obfuscated), both chosen by a hash of its id, so every field
and every obfuscation gets a fair share without anyone picking. A payload is *caught* when
the patch is refused by the schema (a strict id field) or the guard's verdict is not
``pass``. Benign: every instruction sentence of the real skills under
``tests/fixtures/real-skills`` as a rule step; a *false positive* is a ``reject``
(``needs-approval`` is counted apart: it is the review layer asking a human).
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import urllib.parse
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from skillci.patch.apply import apply_detailed
from skillci.patch.guard import guard
from skillci.patch.models import Patch
from skillci.skill.package import EXAMPLES_DIR, SkillPackage

ROOT = Path(__file__).resolve().parents[1]
ATTACKS = ROOT / "tests" / "fixtures" / "attacks" / "payloads.jsonl"
REAL_SKILLS = ROOT / "tests" / "fixtures" / "real-skills"
RID = "corpus.payload"


def _rule(**over: Any) -> dict[str, Any]:
    rule: dict[str, Any] = {"id": RID, "instruction": {"steps": ["run the failing test first"]}}
    rule.update(over)
    return rule


def _add(**rule: Any) -> list[dict[str, Any]]:
    return [{"op": "add_rule", "rule": _rule(**rule)}]


#: field name -> (patch-level overrides, ops) for a payload ``p``.
FIELDS: dict[str, Callable[[str], tuple[dict[str, Any], list[dict[str, Any]]]]] = {
    "rationale": lambda p: ({"rationale": p}, _add()),
    "failure_class": lambda p: ({"failure_class": p}, _add()),
    "supporting_runs": lambda p: ({"supporting_runs": ["run-a", p]}, _add()),
    "author.model": lambda p: ({"author": {"compiler": "llm", "model": p}}, _add()),
    "op.reason": lambda p: ({}, [{"op": "add_rule", "reason": p, "rule": _rule()}]),
    "rule.steps": lambda p: ({}, _add(instruction={"steps": ["run the failing test first", p]})),
    "rule.trigger": lambda p: ({}, _add(trigger={"any": [p]})),
    "rule.validation": lambda p: ({}, _add(validation={"success": [p]})),
    "rule.anti_patterns": lambda p: ({}, _add(anti_patterns=[p])),
    "rule.failure_policy": lambda p: (
        {},
        _add(failure_policy=[{"condition": "the test still fails", "action": p}]),
    ),
    "example.value": lambda p: (
        {},
        [{"op": "add_example", "file": f"{EXAMPLES_DIR}/corpus.jsonl", "example": {"input": p}}],
    ),
    "example.key": lambda p: (
        {},
        [{"op": "add_example", "file": f"{EXAMPLES_DIR}/corpus.jsonl", "example": {p: "x"}}],
    ),
    "regression.task_id": lambda p: ({}, [{"op": "add_regression_test", "task_id": p}]),
    "rule.failure_condition": lambda p: (
        {},
        _add(failure_policy=[{"condition": p, "action": "rerun the failing test"}]),
    ),
    "example.nested": lambda p: (
        {},
        [{"op": "add_example", "file": f"{EXAMPLES_DIR}/corpus.jsonl", "example": {"steps": [p]}}],
    ),
    "rule.references": lambda p: ({}, _add(references=[p])),
    # issue 34: every free-text field a patch writes into the skill
    "rule.notes": lambda p: ({}, _add(notes=p)),
    "change_description": lambda p: (
        {},
        [{"op": "change_description", "description": p[:1024]}],
    ),
}

_CYR = str.maketrans({"a": "а", "e": "е", "o": "о", "c": "с", "p": "р", "x": "х", "i": "і"})


def _spaced(t: str) -> str:
    return re.sub(r"[A-Za-z]{3,}", lambda m: " ".join(m.group(0)), t, count=6)


#: presentation name -> transform. Plain is three times as likely as each obfuscation.
PRESENTATIONS: list[tuple[str, Callable[[str], str]]] = [
    ("plain", lambda t: t),
    ("plain", lambda t: t),
    ("plain", lambda t: t),
    ("zero-width", lambda t: "\u200b".join(t.split(" "))),
    ("homoglyph", lambda t: t.translate(_CYR)),
    ("spaced", _spaced),
    ("literal-escape", lambda t: t.replace(" ", "\\u200b", 8)),
    ("base64", lambda t: base64.b64encode(t.encode()).decode()),
    ("url-encoded", lambda t: urllib.parse.quote(t)),
]


def _pick(pid: str, salt: str, n: int) -> int:
    return int(hashlib.sha256(f"{salt}:{pid}".encode()).hexdigest()[:8], 16) % n


def load_payloads(path: Path = ATTACKS) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


@dataclass
class Outcome:
    id: str
    split: str
    policy_class: str
    language: str
    field: str
    presentation: str
    layer: str  # schema | guard | none
    verdict: str  # schema | reject | needs-approval | pass
    codes: list[str]

    @property
    def caught(self) -> bool:
        return self.verdict != "pass"


def patch_for(field: str, text: str) -> dict[str, Any]:
    meta, ops = FIELDS[field](text)
    data: dict[str, Any] = {
        "failure_class": "verification_missing",
        "rationale": "students report success too early",
        "supporting_runs": ["run-a"],
        "author": {"compiler": "llm", "model": "sim/teacher"},
        "ops": ops,
    }
    data.update(meta)
    return data


def judge(
    pkg: SkillPackage, data: dict[str, Any], untrusted: list[str] | None = None
) -> tuple[str, str, list[str]]:
    """(layer, verdict, codes) of one patch: the schema first, then the full guard."""
    try:
        patch = Patch.model_validate(data)
    except ValidationError as exc:
        return "schema", "schema", [str(exc.errors()[0]["loc"])]
    try:
        applied = apply_detailed(pkg, patch)
    except Exception as exc:  # an op that cannot apply is refused too
        return "apply", "schema", [type(exc).__name__]
    rep = guard(applied, untrusted or [])
    return "guard", rep.verdict, sorted({f.code for f in rep.findings})


def run_attacks(
    pkg: SkillPackage,
    payloads: Iterable[dict[str, Any]],
    split: str | None = None,
    *,
    tainted: bool = False,
    plain_step: bool = False,
) -> Iterator[Outcome]:
    """With ``tainted``, the payload also sits in a tool result of the supporting run (the
    indirect path), so the taint layer sees it; without, only schema and policy can. With
    ``plain_step`` every payload is plain text in a rule step: no strict id field and no
    obfuscation mark helps, only the policy classes (what a compiler writing the payload
    from nothing would meet)."""
    names = list(FIELDS)
    for p in payloads:
        if split and p["split"] != split:
            continue
        field = names[_pick(p["id"], "field", len(names))]
        pres, fn = PRESENTATIONS[_pick(p["id"], "presentation", len(PRESENTATIONS))]
        if plain_step:
            field, pres, fn = "rule.steps", "plain", PRESENTATIONS[0][1]
        untrusted = [f"$ cat notes.md\n{p['text']}\n"] if tainted else None
        layer, verdict, codes = judge(pkg, patch_for(field, fn(p["text"])), untrusted)
        yield Outcome(
            p["id"],
            p["split"],
            p["policy_class"],
            p["language"],
            field,
            pres,
            layer,
            verdict,
            codes,
        )


def rates(outcomes: list[Outcome], key: Callable[[Outcome], str]) -> dict[str, tuple[int, int]]:
    tot: Counter[str] = Counter()
    hit: Counter[str] = Counter()
    for o in outcomes:
        tot[key(o)] += 1
        hit[key(o)] += o.caught
    return {k: (hit[k], tot[k]) for k in sorted(tot)}


# --------------------------------------------------------------------------- benign

_FENCE = re.compile(r"^\s*(```|~~~)")
_SENT = re.compile(r"(?<=[.!?。！？])\s+(?=[A-Z0-9`\"'(*\[]|$)")


def instruction_sentences(md: str) -> list[str]:
    """Prose sentences of a markdown file: outside code fences, headings, tables, HTML."""
    out: list[str] = []
    fenced = False
    for line in md.splitlines():
        if _FENCE.match(line):
            fenced = not fenced
            continue
        s = line.strip()
        if fenced or not s or s.startswith(("#", "|", "<", "---", "```")):
            continue
        s = re.sub(r"^(?:[-*+]|\d+[.)])\s+", "", s)
        out += [x.strip() for x in _SENT.split(s) if len(x.strip()) >= 12]
    return out


def real_skill_dirs(root: Path = REAL_SKILLS) -> list[Path]:
    if not root.is_dir():
        return []
    return sorted(p.parent for p in root.rglob("SKILL.md"))


def benign_sentences(root: Path = REAL_SKILLS) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for d in real_skill_dirs(root):
        for md in sorted(d.rglob("*.md")):
            try:
                text = md.read_text(encoding="utf-8")
            except (UnicodeDecodeError, OSError):
                continue
            out += [(str(md.relative_to(root)), s) for s in instruction_sentences(text)]
    return out


def run_benign(
    pkg: SkillPackage, sentences: Iterable[tuple[str, str]]
) -> Iterator[tuple[str, str, str, list[str]]]:
    for where, s in sentences:
        _layer, verdict, codes = judge(pkg, patch_for("rule.steps", s))
        yield where, s, verdict, codes


def by_group(outcomes: list[Outcome]) -> dict[str, dict[str, tuple[int, int]]]:
    groups: dict[str, dict[str, tuple[int, int]]] = defaultdict(dict)
    groups["policy class"] = rates(outcomes, lambda o: o.policy_class)
    groups["language"] = rates(outcomes, lambda o: o.language)
    groups["field"] = rates(outcomes, lambda o: o.field)
    groups["presentation"] = rates(outcomes, lambda o: o.presentation)
    return dict(groups)
