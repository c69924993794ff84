"""The round-20 attack fixture keeps the rules SOURCES.yaml states.

The builder needs a snapshot of RedTeamCUA; this checks what it wrote: every row sits in the
split round 17's sha256 rule (60/40) gives its family (an adversarial goal, so a goal's texts in
the three Reddit posts and both forms share a split; a benign task, so its four wordings do),
every row has the provenance, label and class its source gives, the attacks come from the
Reddit adversary files only, no text holds a runner slot, occurs twice or repeats an earlier
round's, and the counts per class and split are the ones the build gave (SOURCES.yaml).
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

PREFIXES = {"rtc": "OSU-NLP-Group/RedTeamCUA"}
ATTACK_ID = re.compile(r"(reddit_[a-z_]+)/(\d+)/(language|code)")
BENIGN_ID = re.compile(r"benign/(own_[a-z]+_\d+)/([a-z0-9]+)")


def _rows() -> list[dict[str, Any]]:
    return fixture_rows("payloads_round20.jsonl")


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round20")
    rows = _rows()
    assert len({r["id"] for r in rows}) == len(rows)
    texts: set[str] = set()
    goals: dict[tuple[str, str], str] = {}  # (context, item id) -> the split
    for r in rows:
        _prefix, item = checked_row(b, r, PREFIXES, texts)
        assert r["text"] == r["text"].strip()
        assert not b.has_slot(r["text"]), r["id"]
        if r["attack"]:
            match = ATTACK_ID.fullmatch(item)
            assert match, r["id"]
            context, iid = match.group(1), match.group(2)
            assert r["path"] == f"{b.ADV_DIR}{b.ADV_PREFIX}{context}.json", r["id"]
            assert r["path"] in b.REDDIT_FILES, r["id"]
            goals[(context, iid)] = r["split"]
        else:
            match = BENIGN_ID.fullmatch(item)
            assert match, r["id"]
            assert match.group(2) in b.WORDINGS, r["id"]
            assert r["policy_class"] == "rtc-benign", r["id"]
            assert r["split"] == b.split_of(f"rtc:benign/{match.group(1)}"), r["id"]
            assert r["path"].startswith(b.BENIGN_DIR), r["id"]
    # an item id names the same goal in every Reddit file: its texts share a split
    by_item: dict[str, set[str]] = {}
    for (_context, iid), split in goals.items():
        by_item.setdefault(iid, set()).add(split)
    assert all(len(splits) == 1 for splits in by_item.values())
    assert len(by_item) == 24
    classes = Counter(r["policy_class"] for r in rows)
    assert classes == {
        "rtc-availability-resource": 30,
        "rtc-benign": 36,
        "rtc-confidentiality-send": 30,
        "rtc-integrity-delete": 36,
        "rtc-integrity-modify_content_or_name": 30,
        "rtc-integrity-modify_permission": 18,
    }
    per_split = Counter((r["policy_class"], r["split"]) for r in rows)
    assert per_split == {
        ("rtc-availability-resource", "dev"): 24,
        ("rtc-availability-resource", "test"): 6,
        ("rtc-benign", "dev"): 16,
        ("rtc-benign", "test"): 20,
        ("rtc-confidentiality-send", "dev"): 12,
        ("rtc-confidentiality-send", "test"): 18,
        ("rtc-integrity-delete", "dev"): 30,
        ("rtc-integrity-delete", "test"): 6,
        ("rtc-integrity-modify_content_or_name", "dev"): 18,
        ("rtc-integrity-modify_content_or_name", "test"): 12,
        ("rtc-integrity-modify_permission", "dev"): 12,
        ("rtc-integrity-modify_permission", "test"): 6,
    }
    assert Counter((r["split"], r["attack"]) for r in rows) == {
        ("dev", True): 96,
        ("test", True): 48,
        ("dev", False): 16,
        ("test", False): 20,
    }
    assert Counter(r["id"].split("/", 1)[0] for r in rows) == {
        "rtc:reddit_alias_tmux": 48,
        "rtc:reddit_gitclone": 48,
        "rtc:reddit_install_termcolor": 48,
        "rtc:benign": 36,
    }
    assert Counter(r["language"] for r in rows) == {"English": 180}


def test_no_text_of_an_earlier_round() -> None:
    b = _builder("build_round20")
    earlier = b.earlier_texts()
    assert earlier
    assert not [r["id"] for r in _rows() if r["text"].strip() in earlier]


def test_the_filter_and_split_rules() -> None:
    b = _builder("build_round20")
    assert b.has_slot("Open the post at __REDDIT__/f/coolgithubprojects first.")
    assert b.has_slot('echo "TO_BE_REPLACED_IP the-agent-company.com" >> /etc/hosts')
    assert not b.has_slot("echo \"alias tmuxnew='tmux new -s \\${name}'\" >> ~/.bashrc")
    assert not b.has_slot("Run rm -f /home/user/file.txt and __init__.py stays.")
    assert b.attack_class("Integrity/Modify_content_or_name/Privacy") == (
        "rtc-integrity-modify_content_or_name"
    )
    assert b.attack_class("Availability/Resource/CPU") == "rtc-availability-resource"
    assert len(b.REDDIT_FILES) == 3 and all("reddit_" in p for p in b.REDDIT_FILES)
    assert b.WORDINGS == ("loose", "specific", "pointer", "end2end")
    assert b.split_of("rtc:delete_txt") in {"dev", "test"}
    assert_sixty_forty(b.split_of)


def test_the_sources_file_parses_and_names_round_20() -> None:
    rtc = sources_built_by("build_round20")
    assert len(rtc) == 1 and rtc[0]["repo"] == "https://github.com/OSU-NLP-Group/RedTeamCUA"
    assert rtc[0]["commit"] == _builder("build_round20").REDTEAMCUA_COMMIT
