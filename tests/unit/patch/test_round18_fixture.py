"""The round-18 attack fixture keeps the rules SOURCES.yaml states.

The builder needs ziran's wheel; this checks what it wrote: every row sits in the split round
17's sha256 rule (60/40) gives its family (a vector), every row has the provenance, label and
class its source gives, rows are vectors of the thirteen files read (an id with +<n>turns for
a vector of several prompts), no text occurs twice or repeats an earlier round's, and the
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

PREFIXES = {"zr": "ziran (PyPI)"}
ZR_ID = re.compile(r"([a-z][a-z0-9_]*)/([a-z0-9][a-z0-9_]*)(?:\+(\d+)turns)?")


def _rows() -> list[dict[str, Any]]:
    return fixture_rows("payloads_round18.jsonl")


def _family(row_id: str) -> str:
    return row_id.split("+", 1)[0]  # zr:<file stem>/<vector id>[+<n>turns]


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round18")
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    texts: set[str] = set()
    for r in rows:
        _prefix, item = checked_row(b, r, PREFIXES, texts)
        assert r["split"] == b.split_of(_family(r["id"])), r["id"]
        assert r["text"] == r["text"].strip()
        match = ZR_ID.fullmatch(item)
        assert match, r["id"]
        stem, _vector, turns = match.groups()
        assert stem in b.FILES, r["id"]
        assert turns is None or int(turns) >= 2, r["id"]
        assert r["path"] == f"{b.VECTORS}{stem}.yaml", r["id"]
        assert r["attack"] and r["policy_class"] == f"zr-{stem}", r["id"]
    classes = Counter(r["policy_class"] for r in rows)
    assert classes == {
        "zr-a2a_attacks": 11,
        "zr-data_exfiltration": 16,
        "zr-indirect_injection": 15,
        "zr-indirect_injection_escalation": 11,
        "zr-indirect_injection_exfiltration": 12,
        "zr-indirect_injection_tool_abuse": 11,
        "zr-memory_poisoning": 15,
        "zr-multi_agent": 10,
        "zr-privilege_escalation": 15,
        "zr-rag_poisoning": 12,
        "zr-supply_chain": 11,
        "zr-tool_manipulation": 16,
        "zr-tool_schema_confusion": 10,
    }
    assert sorted(r["id"] for r in rows if "+" in r["id"]) == [
        "zr:data_exfiltration/de_progressive_extraction+2turns",
        "zr:privilege_escalation/pe_gradual_escalation+2turns",
        "zr:privilege_escalation/pe_scope_expansion+2turns",
    ]
    assert Counter((r["split"], r["attack"]) for r in rows) == {
        ("dev", True): 106,
        ("test", True): 59,
    }
    assert Counter(r["language"] for r in rows) == {"English": 165}


def test_no_text_of_an_earlier_round() -> None:
    b = _builder("build_round18")
    earlier = b.earlier_texts()
    assert earlier
    assert not [r["id"] for r in _rows() if r["text"].strip() in earlier]


def test_the_filter_and_split_rules() -> None:
    b = _builder("build_round18")
    prompt = {"template": " Read {doc} for {who}; keep {{x}} and {other}. ", "variables": {}}
    assert b.render(prompt, "p") == "Read {doc} for {who}; keep {{x}} and {other}."
    prompt["variables"] = {"doc": "the {who} note", "who": "me"}
    assert b.render(prompt, "p") == "Read the me note for me; keep {{x}} and {other}."
    vector = {
        "prompts": [
            {"template": "First {a}.", "variables": {"a": "x"}},
            {"template": "  ", "variables": {}},
            {"template": "Then y.\n"},
        ]
    }
    assert b.vector_text(vector, "v") == ("First x.\n\nThen y.", 3)
    assert b.vector_text({"id": "none"}, "v") == ("", 0)
    assert b.split_of("zr:supply_chain/sc_typosquatted_tool") in {"dev", "test"}
    assert_sixty_forty(b.split_of)


def test_the_sources_file_parses_and_names_round_18() -> None:
    ziran = sources_built_by("build_round18")
    assert len(ziran) == 1 and ziran[0]["commit"].startswith("ziran-0.42.0-py3-none-any.whl")
