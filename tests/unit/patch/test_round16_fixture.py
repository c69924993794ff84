"""The round-16 attack fixture keeps the rules SOURCES.yaml states.

The builder needs agent-guardian's and mcp-stress-test's wheels; this checks what it wrote:
every row sits in the split the sha256 rule gives its family (a probe file's seeds together, a
tool and its parameters together), every row has the provenance, label and class its source
gives, agent-guardian rows are seeds of asi01-asi10 only, mcp-stress-test's attacks are
payloads and planted templates and its legitimate rows the clean tools' descriptions, no text
occurs twice or repeats an earlier round's, and the counts per class and split are the ones the
build gave (SOURCES.yaml).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.unit.patch.test_round4_fixture import _builder, checked_row, fixture_rows

PREFIXES = {"ag": "agent-guardian (PyPI)", "mst": "mcp-stress-test (PyPI)"}


def _rows() -> list[dict[str, Any]]:
    return fixture_rows("payloads_round16.jsonl")


def _family(row_id: str) -> str:
    prefix, item = row_id.split(":", 1)
    kind, *rest = item.split("/")
    if prefix == "ag":  # ag:<folder>/<file stem>/<seed number>
        return f"ag:{kind}/{rest[0]}"
    if kind == "tool":  # a tool's parameters share its family
        return f"mst:tool/{rest[0]}"
    return row_id


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round16")
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    texts: set[str] = set()
    for r in rows:
        prefix, item = checked_row(b, r, PREFIXES, texts)
        assert r["split"] == b.split_of(_family(r["id"])), r["id"]
        assert r["text"] == r["text"].strip()
        if prefix == "ag":
            folder, stem, number = item.split("/")
            assert b.PROBE_DIR.fullmatch(folder) and folder != "asi11", r["id"]
            assert r["path"] == f"{b.PROBES}{folder}/{stem}.yaml" and int(number) >= 1
            assert r["attack"] and r["policy_class"] == f"ag-{folder}", r["id"]
        else:
            kind = item.split("/")[0]
            assert r["path"] == f"{b.DATA}{kind}s.json", r["id"]
            assert r["attack"] is (kind != "tool"), r["id"]
    classes = Counter(r["policy_class"] for r in rows)
    assert {c: n for c, n in classes.items() if c.startswith("ag-")} == {
        "ag-asi01": 51,
        "ag-asi02": 24,
        "ag-asi03": 28,
        "ag-asi04": 51,
        "ag-asi05": 24,
        "ag-asi06": 39,
        "ag-asi07": 45,
        "ag-asi08": 24,
        "ag-asi09": 56,
        "ag-asi10": 24,
    }
    assert classes["mst-benign"] == 59
    assert Counter((r["split"], r["attack"]) for r in rows) == {
        ("dev", True): 261,
        ("test", True): 181,
        ("dev", False): 35,
        ("test", False): 24,
    }
    assert Counter(r["language"] for r in rows) == {"English": 501}


def test_no_text_of_an_earlier_round() -> None:
    b = _builder("build_round16")
    earlier = b.earlier_texts()
    assert earlier
    assert not [r["id"] for r in _rows() if r["text"].strip() in earlier]


def test_the_filter_rules() -> None:
    b = _builder("build_round16")
    assert b.seeds({"seeds": [" Do X. ", "", "Do Y."]}, "p.yaml") == ["Do X.", "Do Y."]
    assert b.seeds({"id": "no seeds"}, "p.yaml") == []
    assert [d for d in ("asi01", "asi10", "asi11", "judges") if b.PROBE_DIR.fullmatch(d)] == [
        "asi01",
        "asi10",
    ]
