"""The round-8 attack fixture keeps the rules SOURCES.yaml states.

The builder needs the upstream mirror; this checks what it wrote: every row sits in the split the
sha256 rule gives its id, typosquatting and dependency confusion are absent, the publisher's
inert sentinel is gone from every text (and the MCP configs are still JSON), no text occurs
twice, each row's language is the one the script rule gives, and the counts per format, label
and attack type are the ones the rules give.
"""

from __future__ import annotations

import json
from collections import Counter

from tests.unit.patch.test_round4_fixture import ROUND3, _builder

#: attack types kept, and how many specimens each has over the three formats
KEPT_TYPES = {
    "A1": 30,
    "A2": 18,
    "A3": 30,
    "A4": 30,
    "A5": 18,
    "A6": 18,
    "A7": 24,
    "A8": 24,
    "A9": 24,
    "A10": 12,
    "A13": 26,
}
FORMATS = {"claude": ".claude/skills/", "openclaw": ".openclaw/skills/", "mcp": ".mcp.json"}


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder("build_round8")
    rows = [json.loads(x) for x in (ROUND3 / "payloads_round8.jsonl").read_text().splitlines()]
    assert len({r["id"] for r in rows}) == len(rows)
    assert len({r["text"].strip() for r in rows}) == len(rows)
    classes: Counter[str] = Counter()
    per_format: Counter[tuple[str, bool]] = Counter()
    for r in rows:
        assert r["split"] == b.split_of(r["id"]), r["id"]
        assert r["source"] == b.SKILLFORTIFY and r["licence"] == b.LICENCES[r["source"]]
        assert r["language"] == b.language_of(r["text"]), r["id"]
        assert r["text"].strip() and b.SF_SENTINEL.casefold() not in r["text"].casefold()
        sid = r["id"].removeprefix("skillfortify:")
        fmt, kind = sid.split("_")[:2]
        assert kind == ("mal" if r["attack"] else "ben"), r["id"]
        assert r["path"].startswith(f"{b.SF_ROOT}/skills/{fmt}/") and sid in r["path"]
        assert FORMATS[fmt] in r["path"]
        if fmt == "mcp":
            assert "mcpServers" in json.loads(r["text"])
        else:
            assert r["text"].startswith("---\n"), r["id"]
        assert (r["policy_class"] == "skillfortify-benign") is (not r["attack"])
        classes[r["policy_class"]] += 1
        per_format[fmt, r["attack"]] += 1
    assert classes == {
        "skillfortify-benign": 269,
        **{f"skillfortify-{t}": n for t, n in KEPT_TYPES.items()},
    }
    assert not {f"skillfortify-{t}" for t in b.SF_DROPPED_TYPES} & set(classes)
    assert per_format == {
        ("claude", True): 84,
        ("openclaw", True): 86,
        ("mcp", True): 84,
        ("claude", False): 90,
        ("openclaw", False): 90,
        ("mcp", False): 89,
    }
    splits = Counter((r["split"], r["attack"]) for r in rows)
    assert splits == {
        ("dev", True): 119,
        ("test", True): 135,
        ("dev", False): 130,
        ("test", False): 139,
    }
    assert Counter(r["language"] for r in rows) == {"English": 523}


def test_the_sentinel_is_stripped() -> None:
    b = _builder("build_round8")
    md = "---\nname: x\n---\n\n<!-- SKILLFORTIFYBENCH:INERT — do not execute. -->\n\n## Overview\n"
    assert b.strip_sentinel(md, "a/SKILL.md") == "---\nname: x\n---\n\n## Overview\n"
    js = '{\n  "_skillfortifybench_inert": "SKILLFORTIFYBENCH:INERT",\n  "mcpServers": {}\n}\n'
    assert b.strip_sentinel(js, "a/.mcp.json") == '{\n  "mcpServers": {}\n}\n'
