"""The round-6 attack fixture keeps the rules SOURCES.yaml states.

The builder needs three upstream mirrors; this checks what it wrote: every row sits in the
split the sha256 rule gives its family (an injection's two rows share one), the dropped
injections and categories are absent, the licensed third-party skills are left out, and the
counts per source and label are the ones the rules give.
"""

from __future__ import annotations

import json
from collections import Counter

from tests.unit.patch.test_round4_fixture import ROUND3, _builder


def _family(key: str) -> str:
    """The split key: an injection's ``/line`` and ``/description`` rows share theirs."""
    if key.startswith("skillinject:") and not key.startswith("skillinject:skill/"):
        return key.rsplit("/", 1)[0]
    return key


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round6")
    rows = [json.loads(x) for x in (ROUND3 / "payloads_round6.jsonl").read_text().splitlines()]
    assert len({r["id"] for r in rows}) == len(rows)
    per_source: Counter[tuple[str, bool]] = Counter()
    variants: Counter[str] = Counter()
    dropped = {f"skillinject:{k}[{i}]" for k, ids in b.DROPPED.items() for i in ids}
    for r in rows:
        assert r["split"] == b.split_of(_family(r["id"])), r["id"]
        assert r["licence"] == b.LICENCES[r["source"]] and r["text"].strip()
        assert r["language"] == ("Chinese" if r["source"] == b.ASBZH else "English")
        per_source[r["source"], r["attack"]] += 1
        if r["source"] == b.SKILLINJECT:
            assert (r["policy_class"] == "skill-benign") is (not r["attack"])
            if r["attack"]:
                family, variant = r["id"].rsplit("/", 1)
                assert family not in dropped and r["path"] in b.SI_FILES.values()
                variants[variant] += 1
                if variant == "description":
                    assert len(r["text"]) >= b.MIN_DESCRIPTION
            else:
                assert r["path"].endswith("/SKILL.md") and r["text"].startswith("---")
                for licensed in ("document-skills/", "internal-comms", "mcp/", "slack-gif"):
                    assert licensed not in r["path"]
        elif r["source"] == b.ASBZH:
            category = r["policy_class"].removeprefix("asbzh-")
            assert b.ASBZH_KEPT[category] is r["attack"]
            assert not r["id"].startswith(("asbzh:des-", "asbzh:hdes-"))
        else:
            assert r["source"] == b.RNE and r["policy_class"].startswith("rne-")
            benign = r["id"] in (
                "rne:baseline/baseline_safe_content",
                "rne:baseline/baseline_safe_email",
            )
            assert benign is (not r["attack"])
    assert variants == {"line": 69, "description": 54}
    assert per_source == {
        (b.SKILLINJECT, True): 123,
        (b.SKILLINJECT, False): 41,
        (b.ASBZH, True): 153,
        (b.ASBZH, False): 205,
        (b.RNE, True): 79,
        (b.RNE, False): 2,
    }
