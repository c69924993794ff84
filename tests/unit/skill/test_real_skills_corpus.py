"""The real-skills corpus is what SOURCES.yaml says it is: every skill present, split by hash."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path

import yaml

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "real-skills"


def _sources() -> list[dict[str, object]]:
    doc = yaml.safe_load((CORPUS / "SOURCES.yaml").read_text(encoding="utf-8"))
    return list(doc["skills"])


def test_every_listed_skill_is_present_with_provenance() -> None:
    entries = _sources()
    assert len(entries) >= 60
    for entry in entries:
        folder = CORPUS / str(entry["dir"])
        assert (folder / "SKILL.md").is_file(), entry["id"]
        assert len(str(entry["commit"])) == 40
        assert entry["licence"] in {"Apache-2.0", "MIT"}
    listed = {str(e["dir"]) for e in entries}
    on_disk = {str(p.parent.relative_to(CORPUS)) for p in CORPUS.glob("*/*/SKILL.md")}
    assert listed == on_disk


def test_corpus_spans_publishers_and_languages() -> None:
    entries = _sources()
    assert len({e["repo"] for e in entries}) >= 4
    assert Counter(e["language"] for e in entries)["zh"] >= 1


def test_split_is_the_hash_of_the_id() -> None:
    for entry in _sources():
        digest = int(hashlib.sha256(f"split:{entry['id']}".encode()).hexdigest(), 16)
        assert entry["split"] == ("test" if digest % 3 == 0 else "dev"), entry["id"]
