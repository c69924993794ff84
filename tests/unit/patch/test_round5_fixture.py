"""The round-5 attack fixture keeps the rules SOURCES.yaml states (design 443).

The builder needs five upstream mirrors; this checks what it wrote: every row sits in the
split the sha256 rule gives its id, the dropped skills are absent, no skill text names its
own class through the publisher's label line, and the label file is never part of a payload.
"""

from __future__ import annotations

import json
from collections import Counter

from tests.unit.patch.test_round4_fixture import ROUND3, _builder


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round5")
    rows = [json.loads(x) for x in (ROUND3 / "payloads_round5.jsonl").read_text().splitlines()]
    assert len({r["id"] for r in rows}) == len(rows)
    per_source: Counter[tuple[str, bool]] = Counter()
    for r in rows:
        assert r["split"] == b.split_of(r["id"]), r["id"]
        assert r["licence"] == b.LICENCES[r["source"]] and r["language"] == "English"
        per_source[r["source"], r["attack"]] += 1
        if r["id"].startswith("skills:"):
            folder = r["id"].split("/", 2)[2]
            assert folder not in b.DROPPED
            assert r["path"] == folder and r["text"].startswith(("---", "#"))
            assert "Fires: " not in r["text"] and "_expected.json" not in r["text"]
            assert (r["policy_class"] == "skill-benign") is (not r["attack"])
    assert per_source[b.AIG, True] == 120 and per_source[b.GARAK, True] == 20
    assert sum(n for (s, a), n in per_source.items() if a and s not in (b.AIG, b.GARAK)) == 18
    assert sum(n for (_s, a), n in per_source.items() if not a) == 7
