"""The round-9 attack fixture keeps the rules SOURCES.yaml states.

The builder needs two upstream mirrors; this checks what it wrote: every row sits in the split
the sha256 rule gives its id, the dropped PIB categories, the role-manipulation jailbreaks and the
dropped code-safety cases are absent, both e-mail classes carry the same framing, no text occurs
twice within a source, each row's language is the one the script rule gives, and the counts per
source, label and class are the ones the rules give.
"""

from __future__ import annotations

import json
from collections import Counter

from tests.unit.patch.test_round4_fixture import ROUND3, _builder

#: kept PIB attack classes and their counts (prompt-injection less role-manipulation,
#: memory-poisoning, exfiltration, six code-safety cases)
PIB_CLASSES = {
    "pib-prompt-injection-encoding-evasion": 8,
    "pib-prompt-injection-instruction-override": 7,
    "pib-prompt-injection-delimiter-injection": 6,
    "pib-prompt-injection-language-switching": 6,
    "pib-prompt-injection-few-shot-poisoning": 4,
    "pib-prompt-injection-multi-turn-escalation": 4,
    "pib-prompt-injection-context-window-stuffing": 2,
    "pib-memory-poisoning-authority-injection": 5,
    "pib-memory-poisoning-rag-poisoning": 4,
    "pib-memory-poisoning-sleeper-payload": 4,
    "pib-memory-poisoning-gradual-drift": 4,
    "pib-memory-poisoning-cross-session-contamination": 3,
    "pib-exfiltration-chunked": 4,
    "pib-exfiltration-redirect-based": 4,
    "pib-exfiltration-webhook-based": 4,
    "pib-exfiltration-steganographic": 4,
    "pib-exfiltration-dns-exfil": 4,
    "pib-exfiltration-email-based": 3,
    "pib-code-safety-command-injection": 5,
    "pib-code-safety-path-traversal": 1,
}
EMAIL_CLASSES = {
    "emailagent-override": 10,
    "emailagent-hidden_injection": 10,
    "emailagent-exfiltration": 10,
}


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round9")
    rows = [json.loads(x) for x in (ROUND3 / "payloads_round9.jsonl").read_text().splitlines()]
    assert len({r["id"] for r in rows}) == len(rows)
    per_source: Counter[tuple[str, bool]] = Counter()
    classes: Counter[str] = Counter()
    texts: dict[str, set[str]] = {b.PIB: set(), b.EMAILAGENT: set()}
    for r in rows:
        assert r["split"] == b.split_of(r["id"]), r["id"]
        assert r["licence"] == b.LICENCES[r["source"]] and r["text"].strip()
        assert r["language"] == b.language_of(r["text"]), r["id"]
        assert r["text"].strip() not in texts[r["source"]], r["id"]
        texts[r["source"]].add(r["text"].strip())
        per_source[r["source"], r["attack"]] += 1
        classes[r["policy_class"]] += 1
        if r["source"] == b.PIB:
            category = r["path"].split("/")[2]
            assert r["path"].startswith(f"{b.PIB_ROOT}/") and category in b.PIB_CATEGORIES
            assert (r["policy_class"] == "pib-benign") is (not r["attack"])
            if r["attack"]:
                assert r["policy_class"].startswith(f"pib-{category}-"), r["id"]
                assert "role-manipulation" not in r["policy_class"]
            if category == "code-safety" and r["attack"]:
                assert r["id"].removeprefix("pib:") in b.PIB_CODE_SAFETY_KEPT
        else:
            assert r["source"] == b.EMAILAGENT
            assert r["path"] == (b.EA_SEEDS if r["attack"] else b.EA_INBOX)
            assert r["id"].startswith("emailagent:inbox/") is (not r["attack"])
            assert r["text"].startswith("From: ") and "\nSubject: " in r["text"]
            assert (r["policy_class"] == "emailagent-inbox") is (not r["attack"])
    assert classes == {**PIB_CLASSES, "pib-benign": 35, **EMAIL_CLASSES, "emailagent-inbox": 25}
    assert per_source == {
        (b.PIB, True): 86,
        (b.PIB, False): 35,
        (b.EMAILAGENT, True): 30,
        (b.EMAILAGENT, False): 25,
    }
    splits = Counter((r["split"], r["attack"]) for r in rows)
    assert splits == {
        ("dev", True): 51,
        ("test", True): 65,
        ("dev", False): 30,
        ("test", False): 30,
    }
    assert Counter(r["language"] for r in rows) == {"English": 174, "Russian": 1, "Arabic": 1}


def test_the_pib_filter_and_the_email_framing() -> None:
    b = _builder("build_round9")

    def case(cid: str, category: str, sub: str, attack: bool = True) -> dict[str, object]:
        return {"id": cid, "category": category, "subcategory": sub, "expected_detection": attack}

    assert b.pib_kept(case("pi-001", "prompt-injection", "instruction-override")) is True
    assert b.pib_kept(case("pi-008", "prompt-injection", "role-manipulation")) is None
    assert b.pib_kept(case("cs-001", "code-safety", "command-injection")) is True
    assert b.pib_kept(case("cs-002", "code-safety", "command-injection")) is None
    assert b.pib_kept(case("benign-cs-001", "code-safety", "benign", attack=False)) is False
    mail = {"from": "a@b.com", "subject": "Hi", "body": "Body\ntext"}
    assert b.email_text(mail) == "From: a@b.com\nSubject: Hi\n\nBody\ntext"
