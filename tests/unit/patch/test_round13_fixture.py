"""The round-13 attack fixture keeps the rules SOURCES.yaml states.

The builder needs the publishers' three wheels; this checks what it wrote: every row sits in the
split the sha256 rule gives its id, every row comes from a kept file with the provenance, label
and class its source gives, agent-injection-bench rows are attack or control scenarios (never
the baseline), bastioncorpus rows come from the tool_output and memory channels only, raginject
rows come from the eight pattern files, no text occurs twice or repeats an earlier round's, each
row's language is the one the script rule gives, and the counts per class and split are the
ones the rules give.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.unit.patch.test_round4_fixture import _builder, checked_row, fixture_rows

#: classes and their counts (no sampling: every kept scenario, row and pattern)
CLASSES = {
    "aib-instruction_override": 3,
    "aib-context_termination": 2,
    "aib-authority_claim": 2,
    "aib-data_exfiltration": 3,
    "aib-tool_redirection": 3,
    "aib-encoding": 3,
    "aib-role_play": 2,
    "aib-conversation_hijack": 2,
    "aib-benign": 3,
    "bc-indirect_injection": 23,
    "bc-obfuscation": 14,
    "bc-instruction_override": 3,
    "bc-jailbreak_persona": 2,
    "bc-delimiter_injection": 1,
    "bc-benign": 15,
    "rgi-indirect_injection": 7,
    "rgi-data_exfiltration": 7,
    "rgi-format_smuggling": 7,
    "rgi-authority_spoofing": 6,
    "rgi-payload_delivery": 6,
    "rgi-obfuscation": 6,
    "rgi-multilingual": 7,
    "rgi-conditional_delayed": 6,
}
#: agent-injection-bench's control scenarios: its only legitimate rows
AIB_CONTROLS = {"cn-001", "cn-002", "cn-003"}
#: row id prefix -> source
PREFIXES = {
    "aib": "sentinelden/agent-injection-bench",
    "bc": "Rinkia/bastioncorpus",
    "rgi": "jnagasawa/RAGinject",
}


def _rows() -> list[dict[str, Any]]:
    return fixture_rows("payloads_round13.jsonl")


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round13")
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    texts: set[str] = set()
    for r in rows:
        prefix, item = checked_row(b, r, PREFIXES, texts)
        assert r["split"] == b.split_of(r["id"]), r["id"]
        if prefix == "aib":
            assert r["path"] == b.AIB_PATH
            assert (item in AIB_CONTROLS) is (not r["attack"]), r["id"]
            assert not item.startswith("bl-"), r["id"]
        elif prefix == "bc":
            assert r["path"] == b.BASTION_PATH
            # the kept benign rows (the others are user_input): bn-enc-* and benign_*
            if not r["attack"]:
                assert item.startswith(("bn-enc-", "benign_")), r["id"]
        else:
            assert r["attack"], r["id"]
            assert r["path"].startswith(b.RAGINJECT_DIR) and r["path"].endswith(".yaml")
            assert "retriever" not in r["path"], r["id"]
    assert Counter(r["policy_class"] for r in rows) == CLASSES
    assert Counter((r["split"], r["attack"]) for r in rows) == {
        ("dev", True): 60,
        ("test", True): 55,
        ("dev", False): 10,
        ("test", False): 8,
    }
    assert Counter(r["language"] for r in rows) == {
        "English": 127,
        "Japanese": 2,
        "Chinese": 1,
        "Korean": 1,
        "Russian": 1,
        "Arabic": 1,
    }
    assert Counter(r["source"] for r in rows) == {
        "sentinelden/agent-injection-bench": 23,
        "Rinkia/bastioncorpus": 58,
        "jnagasawa/RAGinject": 52,
    }
    # the one exact duplicate, dropped by the rule: ob-enc-002 repeats ob-enc-001's text
    ids = {r["id"] for r in rows}
    assert "bc:ob-enc-001" in ids and "bc:ob-enc-002" not in ids


def test_no_text_of_an_earlier_round() -> None:
    b = _builder("build_round13")
    earlier = b.earlier_texts()
    assert earlier
    assert not [r["id"] for r in _rows() if r["text"].strip() in earlier]


def test_the_filter_rules() -> None:
    b = _builder("build_round13")
    assert b.aib_row({"family": "tool_redirection"}) == ("aib-tool_redirection", True)
    assert b.aib_row({"family": "control"}) == ("aib-benign", False)
    assert b.aib_row({"family": "baseline"}) is None

    def row(label: str, category: str, channel: str) -> dict[str, object]:
        return {"id": "x", "label": label, "category": category, "channel": channel}

    assert b.bastion_row(row("malicious", "indirect_injection", "tool_output")) == (
        "bc-indirect_injection",
        True,
    )
    assert b.bastion_row(row("malicious", "instruction_override", "memory")) == (
        "bc-instruction_override",
        True,
    )
    assert b.bastion_row(row("benign", "benign_memory", "tool_output")) == ("bc-benign", False)
    assert b.bastion_row(row("malicious", "direct_injection", "user_input")) is None
    assert b.bastion_row(row("benign", "benign_support", "user_input")) is None

    names = [
        "raginject/attacks/patterns/02_data_exfiltration.yaml",
        "raginject/attacks/patterns/01_instruction_override.yaml",
        "raginject/attacks/pattern_sets/retriever/01_retriever_poisoning.yaml",
        "raginject/attacks/patterns/__init__.py",
    ]
    assert b.raginject_paths(names) == [
        "raginject/attacks/patterns/01_instruction_override.yaml",
        "raginject/attacks/patterns/02_data_exfiltration.yaml",
    ]
