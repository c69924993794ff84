"""The round-14 attack fixture keeps the rules SOURCES.yaml states.

The builder needs the publishers' two wheels; this checks what it wrote: every row sits in the
split the sha256 rule gives its family (a DeepTrap task's attack and clean twin share one),
every row has the provenance, label and class its source gives, DeepTrap rows come in
attack/clean pairs of one carrier (the task's and its clean scene's), at most ten tasks per
behaviour class and none of B10 (no named carrier), ProtectRAG rows are its golden cases, no
text occurs twice or repeats an earlier round's, each row's language is the one the script rule
gives, and the counts per class and split are the ones the rules give.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

from tests.unit.patch.test_round4_fixture import _builder, checked_row, fixture_rows

#: classes and their counts (DeepTrap: the first 10 kept tasks per behaviour class)
CLASSES = {
    "dt-untrusted_instruction_following": 10,
    "dt-goal_hijacking": 10,
    "dt-data_exfiltration": 10,
    "dt-credential_exposure": 4,
    "dt-poisoned_memory_reliance": 10,
    "dt-state_tampering": 10,
    "dt-deceptive_tool_invocation": 10,
    "dt-unauthorized_command_execution": 10,
    "dt-unauthorized_api_invocation": 10,
    "dt-resource_exhaustion": 10,
    "dt-obfuscated_execution": 10,
    "dt-false_reporting": 10,
    "dt-context_flooding": 10,
    "dt-permission_chaining": 10,
    "dt-benign": 126,
    "prag-instruction_override": 11,
    "prag-multilang": 7,
    "prag-role_delimiter": 6,
    "prag-prompt_leak": 6,
    "prag-data_exfiltration": 4,
    "prag-indirect_injection": 4,
    "prag-fake_tool": 3,
    "prag-encoding_trick": 3,
    "prag-html_injection": 3,
    "prag-payload_splitting": 2,
    "prag-markdown_injection": 1,
    "prag-benign": 50,
}
#: the clean twins dropped by the duplicate rule (their text equals an earlier clean twin's)
DROPPED_CLEAN = {
    "task_B1_T07",
    "task_B1_T08",
    "task_B3_T03",
    "task_B7_T02",
    "task_B7_T05",
    "task_B7_T08",
    "task_B7_T09",
    "task_B7_T10",
}
#: row id prefix -> source
PREFIXES = {"dt": "ZJUICSR/ActBench", "prag": "Ritvik777/ProtectRAG"}


def _rows() -> list[dict[str, Any]]:
    return fixture_rows("payloads_round14.jsonl")


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round14")
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    texts: set[str] = set()
    by_id = {r["id"]: r for r in rows}
    for r in rows:
        prefix, item = checked_row(b, r, PREFIXES, texts)
        if prefix == "prag":
            assert r["path"] == b.PROTECTRAG_PATH
            assert r["split"] == b.split_of(r["id"]), r["id"]
            assert item.startswith("inj-" if r["attack"] else "clean-"), r["id"]
            continue
        task, kind = item.split("/")
        assert r["split"] == b.split_of(f"dt:{task}"), r["id"]
        assert not task.startswith("task_B10_"), r["id"]
        assert kind == ("attack" if r["attack"] else "clean"), r["id"]
        here = b.CLEAN_DIR if kind == "clean" else b.TASKS_DIR
        assert r["path"].startswith(f"{here}{task}/"), r["id"]
        carrier = r["path"].removeprefix(f"{here}{task}/")
        assert carrier.startswith("workspace/") or "#" in carrier, r["id"]
        # each clean twin has its attack, on the same carrier
        attack = by_id[f"dt:{task}/attack"]
        assert attack["path"] == f"{b.TASKS_DIR}{task}/{carrier}", r["id"]
    attacks = {
        str(r["id"]).split("/")[0] for r in rows if r["id"].startswith("dt:") and r["attack"]
    }
    cleans = {
        str(r["id"]).split("/")[0] for r in rows if r["id"].startswith("dt:") and not r["attack"]
    }
    assert cleans <= attacks
    assert {a.removeprefix("dt:") for a in attacks - cleans} == DROPPED_CLEAN
    per_class = Counter(str(a).split("_T")[0] for a in attacks)
    assert max(per_class.values()) == 10 and len(per_class) == 14
    assert Counter(r["policy_class"] for r in rows) == CLASSES
    assert Counter((r["split"], r["attack"]) for r in rows) == {
        ("dev", True): 84,
        ("test", True): 100,
        ("dev", False): 86,
        ("test", False): 90,
    }
    assert Counter(r["language"] for r in rows) == {
        "English": 356,
        "Chinese": 1,
        "Japanese": 1,
        "Arabic": 1,
        "Korean": 1,
    }
    assert Counter(r["source"] for r in rows) == {
        "ZJUICSR/ActBench": 260,
        "Ritvik777/ProtectRAG": 100,
    }


def test_no_text_of_an_earlier_round() -> None:
    b = _builder("build_round14")
    earlier = b.earlier_texts()
    assert earlier
    assert not [r["id"] for r in _rows() if r["text"].strip() in earlier]


def test_the_filter_rules() -> None:
    b = _builder("build_round14")
    assert b.protectrag_row({"id": "x", "label": "injection", "tags": ["fake_tool", "x"]}) == (
        "prag-fake_tool",
        True,
    )
    assert b.protectrag_row({"id": "x", "label": "clean", "tags": ["legal"]}) == (
        "prag-benign",
        False,
    )

    names = [
        "deeptrap/data/tasks/task_B10_T01/task.yaml",
        "deeptrap/data/tasks/task_B2_T01/task.yaml",
        "deeptrap/data/tasks/task_B1_T10/workspace/README.md",
        "deeptrap/data/tasks/task_B1_T02/task.yaml",
        "deeptrap/data/tasks/clean_scenes/task_B1_T01/scenario.yaml",
        "deeptrap/data/skills/mock_apis/ledger_api/SKILL.md",
    ]
    assert b.task_ids(names) == ["task_B1_T02", "task_B1_T10", "task_B2_T01", "task_B10_T01"]

    note = {
        "kind": "mock_fixture_field",
        "fixture": "fixtures/notebook/notes.json",
        "record_id": "N-2",
        "field": "body",
    }
    page = {
        "kind": "mock_fixture_field",
        "fixture": "fixtures/web_content/content.json",
        "record_id": "https://example.com/a",
        "field": "content",
    }
    memory = {"kind": "workspace_file", "path": "MEMORY.md"}
    read = {
        "t/fixtures/notebook/notes.json": json.dumps(
            [{"note_id": "N-1", "body": "one"}, {"note_id": "N-2", "body": "two"}]
        ).encode(),
        "t/fixtures/web_content/content.json": json.dumps(
            {"search_results": [], "pages": [{"url": "https://example.com/a", "content": "page"}]}
        ).encode(),
        "t/workspace/MEMORY.md": b"# memory\n",
    }
    assert b.carrier_text(read, "t/", note) == "two"
    assert b.carrier_text(read, "t/", page) == "page"
    assert b.carrier_text(read, "t/", memory) == "# memory\n"
    assert b.carrier_text(read, "u/", memory) is None
    assert b.carrier_path(note) == "fixtures/notebook/notes.json#N-2.body"
    assert b.carrier_path(memory) == "workspace/MEMORY.md"
