"""The round-11 attack fixture keeps the rules SOURCES.yaml states.

The builder needs the upstream mirror; this checks what it wrote: every row sits in the split the
sha256 rule gives its id, every row comes from a kept file with the label its file name gives,
the denial-of-service cases and the benign cases without content are absent, no file gives more
than the sampling rule allows, no text occurs twice, each row's language is the one the script
rule gives, and the counts per class, file and split are the ones the rules give.
"""

from __future__ import annotations

import json
from collections import Counter

from tests.unit.patch.test_round4_fixture import ROUND3, _builder

#: classes and their counts (the first 20 kept cases of each file)
SANDBOX_CLASSES = {
    "sandbox-data_exfiltration": 118,
    "sandbox-goal_hijacking": 36,
    "sandbox-privilege_escalation": 36,
    "sandbox-multistep": 25,
    "sandbox-social_engineering": 20,
    "sandbox-benign": 55,
}
#: files under-full after the filter: every other kept file gives PER_FILE rows
SHORT_FILES = {"attack_evasion.jsonl": 15, "benign_edge_cases.jsonl": 15}
KEPT_BENIGN_FILES = {
    "benign_edge_cases.jsonl",
    "benign_multilingual.jsonl",
    "benign_with_content.jsonl",
}


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round11")
    rows = [json.loads(x) for x in (ROUND3 / "payloads_round11.jsonl").read_text().splitlines()]
    assert len({r["id"] for r in rows}) == len(rows)
    texts: set[str] = set()
    for r in rows:
        assert r["source"] == b.SANDBOX and r["licence"] == b.LICENCES[r["source"]]
        assert r["split"] == b.split_of(r["id"]), r["id"]
        assert r["language"] == b.language_of(r["text"]), r["id"]
        assert r["text"].strip() and r["text"].strip() not in texts, r["id"]
        texts.add(r["text"].strip())
        assert r["id"].startswith("sandbox:") and r["path"].startswith(f"{b.SANDBOX_ROOT}/")
        name = r["path"].rsplit("/", 1)[1]
        assert name.endswith(".jsonl") and name != "attack_dos.jsonl"
        assert name.startswith("attack_" if r["attack"] else "benign_"), r["id"]
        assert (r["policy_class"] == "sandbox-benign") is (not r["attack"])
        assert r["policy_class"] != "sandbox-denial_of_service"
        if not r["attack"]:
            assert name in KEPT_BENIGN_FILES, r["id"]
    per_file = Counter(r["path"].rsplit("/", 1)[1] for r in rows)
    assert len(per_file) == 15
    assert {f: n for f, n in per_file.items() if n != b.PER_FILE} == SHORT_FILES
    assert Counter(r["policy_class"] for r in rows) == SANDBOX_CLASSES
    assert Counter((r["split"], r["attack"]) for r in rows) == {
        ("dev", True): 114,
        ("test", True): 121,
        ("dev", False): 28,
        ("test", False): 27,
    }
    assert Counter(r["language"] for r in rows) == {
        "English": 262,
        "Chinese": 14,
        "Japanese": 10,
        "Korean": 4,
    }


def test_the_filter_rule() -> None:
    b = _builder("build_round11")

    def case(kind: str, attack_type: str | None, content: str | None) -> dict[str, object]:
        return {"id": "x", "type": kind, "attack_type": attack_type, "untrusted_content": content}

    assert b.sandbox_kept(case("attack", "data_exfiltration", "Send keys."), "attack") is True
    assert b.sandbox_kept(case("attack", "denial_of_service", "Loop."), "attack") is None
    assert b.sandbox_kept(case("benign", None, "Meeting notes."), "benign") is False
    assert b.sandbox_kept(case("benign", None, None), "benign") is None
