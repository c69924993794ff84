"""The round-15 attack fixture keeps the rules SOURCES.yaml states.

The builder needs Progent's repository and agentic-redteam's wheel; this checks what it wrote:
every row sits in the split the sha256 rule gives its family, every row has the provenance,
label and class its source gives, Progent rows are its skill files (ten a class) with the
dataset's header comment removed, agentic-redteam rows are the nine attack suites' and the
clean suite's cases, no text occurs twice or repeats an earlier round's, each row's language is
the one the script rule gives, and the counts per class and split are the ones the rules give.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from tests.unit.patch.test_round4_fixture import _builder, checked_row, fixture_rows

#: agentic-redteam's suites and their case counts (every case kept)
SUITES = {
    "ar-prompt_injection": 25,
    "ar-jailbreak": 20,
    "ar-code_safety": 15,
    "ar-pii_leakage": 15,
    "ar-action_level": 10,
    "ar-indirect_injection": 8,
    "ar-asi04_sandbox_escape": 5,
    "ar-asi10_rogue_persistence": 5,
    "ar-mcp_security": 4,
    "ar-benign": 10,
}
PG_CLASSES = (
    "silent_data_exfiltration",
    "command_injection_code_blocks",
    "obfuscated_payloads",
    "bundled_artifact_trojan_horse",
    "memory_persistence_poisoning",
    "supply_chain_dependency_poisoning",
    "permission_escalation_approval_carryover",
    "cross_origin_context_poisoning",
    "security_control_disablement",
    "credential_harvesting",
)
PREFIXES = {"pg": "Agentic-AI-Risk-Mitigation/progent", "ar": "agentic-redteam (PyPI)"}


def _rows() -> list[dict[str, Any]]:
    return fixture_rows("payloads_round15.jsonl")


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round15")
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    texts: set[str] = set()
    for r in rows:
        prefix, item = checked_row(b, r, PREFIXES, texts)
        cls = r["policy_class"]
        assert r["split"] == b.split_of(r["id"]), r["id"]
        if prefix == "pg":
            folder, name = item.split("/")
            assert r["attack"] and cls == b.progent_class(folder), r["id"]
            assert r["path"] == f"{b.SKILL_FILES}{folder}/{name}" and name.endswith(".md")
            # the header naming the dataset and the class is gone; the skill remains
            assert "DATASET" not in r["text"] and "attack_class" not in r["text"], r["id"]
            assert not r["text"].startswith("<!--") and r["text"] == r["text"].strip()
        else:
            stem, number = item.split("/")
            assert r["path"] == f"{b.PAYLOADS}{stem}.yaml" and int(number) >= 1, r["id"]
            assert r["attack"] is (stem in b.ATTACK_SUITES), r["id"]
    assert Counter(r["policy_class"] for r in rows) == {
        **SUITES,
        **{f"pg-{c}": 10 for c in PG_CLASSES},
    }
    assert Counter((r["split"], r["attack"]) for r in rows) == {
        ("dev", True): 101,
        ("test", True): 106,
        ("dev", False): 7,
        ("test", False): 3,
    }
    assert Counter(r["language"] for r in rows) == {"English": 217}


def test_no_text_of_an_earlier_round() -> None:
    b = _builder("build_round15")
    earlier = b.earlier_texts()
    assert earlier
    assert not [r["id"] for r in _rows() if r["text"].strip() in earlier]


def test_the_filter_rules() -> None:
    b = _builder("build_round15")
    header = "<!-- DATASET: X v1.0\nattack_class: 01_a\npurpose: specimen -->\n\n# Skill\n\nBody.\n"
    assert b.skill_text(header) == "# Skill\n\nBody."
    # only a leading comment is the header; one further down is the skill's own text
    assert b.skill_text("# Skill\n<!-- note -->\n") == "# Skill\n<!-- note -->"
    assert b.skill_text("<!-- only a header -->\n") == ""
    assert b.progent_class("09_security_control_disablement") == "pg-security_control_disablement"
    cases = [{"description": "A", "vars": {"query": "q1"}}, {"vars": {"query": "q2"}}]
    assert b.suite_cases(cases, "x.yaml") == ["q1", "q2"]
    assert set(b.ATTACK_SUITES).isdisjoint({b.CLEAN_SUITE, "schema_compliance", "multi_turn"})
