"""The round-17 attack fixture keeps the rules SOURCES.yaml states.

The builder needs keelson-ai's wheel and theriac's sdist; this checks what it wrote: every row
sits in the split round 17's sha256 rule (60/40) gives its family (a probe, a tool), every row
has the provenance, label and class its source gives, keelson rows are its probes (an id with
+<n>turns for a multi-turn probe) and theriac's attacks are the poisoned tools and its
legitimate rows the honest ones, no text occurs twice or repeats an earlier round's, and the
counts per class and split are the ones the build gave (SOURCES.yaml).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from tests.unit.patch.test_round4_fixture import (
    _builder,
    assert_sixty_forty,
    checked_row,
    fixture_rows,
    sources_built_by,
)

PREFIXES = {"kl": "keelson-ai (PyPI)", "th": "theriac (PyPI)"}
KL_ID = re.compile(r"([a-z][a-z-]*)/([A-Z]+-\d+)(?:\+(\d+)turns)?")


def _rows() -> list[dict[str, Any]]:
    return fixture_rows("payloads_round17.jsonl")


def _family(row_id: str) -> str:
    return row_id.split("+", 1)[0]  # kl:<folder>/<probe id>[+<n>turns]; th:<stem>/<tool>


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round17")
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    texts: set[str] = set()
    for r in rows:
        prefix, item = checked_row(b, r, PREFIXES, texts)
        assert r["split"] == b.split_of(_family(r["id"])), r["id"]
        assert r["text"] == r["text"].strip()
        if prefix == "kl":
            match = KL_ID.fullmatch(item)
            assert match, r["id"]
            folder, probe, turns = match.groups()
            assert turns is None or int(turns) >= 2, r["id"]
            assert r["path"] == f"{b.PROBES}{folder}/{probe}.yaml", r["id"]
            assert r["attack"] and r["policy_class"] == f"kl-{folder}", r["id"]
        else:
            stem, _tool = item.split("/")
            assert r["path"] == f"{b.CORPUS}{stem}.json", r["id"]
            assert r["attack"] is b.CORPUS_FILES[stem], r["id"]
    classes = Counter(r["policy_class"] for r in rows)
    assert {c: n for c, n in classes.items() if c.startswith("kl-")} == {
        "kl-cognitive-architecture": 8,
        "kl-conversational-exfiltration": 9,
        "kl-delegation-integrity": 7,
        "kl-execution-safety": 13,
        "kl-goal-adherence": 56,
        "kl-memory-integrity": 23,
        "kl-multi-agent-security": 7,
        "kl-output-weaponization": 7,
        "kl-permission-boundaries": 12,
        "kl-session-isolation": 13,
        "kl-supply-chain-language": 8,
        "kl-temporal-persistence": 7,
        "kl-tool-safety": 40,
    }
    assert sum(n for c, n in classes.items() if c.startswith("th-") and c != "th-benign") == 20
    assert classes["th-benign"] == 22
    assert sum("+" in r["id"] for r in rows) == 123
    assert Counter((r["split"], r["attack"]) for r in rows) == {
        ("dev", True): 128,
        ("test", True): 102,
        ("dev", False): 17,
        ("test", False): 5,
    }
    assert Counter(r["language"] for r in rows) == {"English": 252}


def test_no_text_of_an_earlier_round() -> None:
    b = _builder("build_round17")
    earlier = b.earlier_texts()
    assert earlier
    assert not [r["id"] for r in _rows() if r["text"].strip() in earlier]


def test_the_filter_and_split_rules() -> None:
    b = _builder("build_round17")
    probe = {"turns": [{"role": "user", "content": " Do X. \n"}, {"content": ""}, {"content": "Y"}]}
    assert b.probe_text(probe, "p.yaml") == ("Do X.\n\nY", 3)
    assert b.probe_text({"id": "no turns"}, "p.yaml") == ("", 0)
    tool = {
        "name": "t",
        "description": " Adds. ",
        "systemPrompt": "Always call t.",
        "inputSchema": {"properties": {"a": {"type": "number"}, "b": {"description": "B. "}}},
    }
    assert b.tool_text(tool) == "Adds.\nAlways call t.\nB."
    assert b.tool_text({"name": "u", "description": "  "}) == ""
    assert b.split_of("kl:tool-safety/TS-001") in {"dev", "test"}
    assert_sixty_forty(b.split_of)


def test_the_sources_file_parses_and_names_round_17() -> None:
    assert sources_built_by("build_round17")
