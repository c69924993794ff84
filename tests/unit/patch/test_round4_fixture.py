"""The round-4 attack fixture keeps the rules SOURCES.yaml states (design 438).

The builder needs the two upstream mirrors; this checks what it wrote: every row sits in
the split the sha256 rule gives its *instruction* (so an instance's framings share a split),
only the kept scenarios and categories are there, and every RedCode instance has its four
framings.
"""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROUND3 = Path(__file__).resolve().parents[2] / "fixtures" / "attacks" / "round3"


def fixture_rows(name: str) -> list[dict[str, Any]]:
    """The rows of ``round3/<name>`` (one JSON object a line)."""
    text = (ROUND3 / name).read_text(encoding="utf-8")
    return [json.loads(x) for x in text.splitlines()]


def checked_row(
    b: Any, r: dict[str, Any], prefixes: dict[str, str], texts: set[str]
) -> tuple[str, str]:
    """The checks every row of a round built by :func:`build_round7.rows_of` passes: its
    source, licence and commit are its id prefix's, its language is the script rule's, its
    text is new (added to ``texts``), its class carries the prefix and ends in -benign exactly
    when it is not an attack. Returns (prefix, the rest of the id)."""
    prefix, item = str(r["id"]).split(":", 1)
    source = prefixes[prefix]
    assert r["source"] == source and r["licence"] == b.LICENCES[source], r["id"]
    assert r["commit"] == b.COMMITS[source], r["id"]
    assert r["language"] == b.language_of(r["text"]), r["id"]
    assert r["text"].strip() and r["text"].strip() not in texts, r["id"]
    texts.add(r["text"].strip())
    cls = r["policy_class"]
    assert cls.startswith(f"{prefix}-"), r["id"]
    assert cls.endswith("-benign") is (not r["attack"]), r["id"]
    return prefix, item


def sources_built_by(builder: str) -> list[dict[str, Any]]:
    """The entries of round3/SOURCES.yaml (parsed whole) that ``builder`` (e.g.
    ``"build_round21"``) builds."""
    import yaml

    doc = yaml.safe_load((ROUND3 / "SOURCES.yaml").read_text(encoding="utf-8"))
    return [s for s in doc["sources"] if s.get("built_by", "").endswith(f"/{builder}.py")]


def assert_sixty_forty(split_of: Any) -> None:
    """Round 17's split rule sends about 60% of families to dev (2,000 made-up keys)."""
    shares = Counter(split_of(f"family-{i}") for i in range(2000))
    assert 0.55 < shares["dev"] / 2000 < 0.65


def _builder(name: str = "build_round4"):  # type: ignore[no-untyped-def]
    """The builder module ``name`` of the round-3 fixture dir (it imports build_round3)."""
    sys.path.insert(0, str(ROUND3))
    try:
        spec = importlib.util.spec_from_file_location(name, ROUND3 / f"{name}.py")
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        return mod
    finally:
        sys.path.remove(str(ROUND3))


def test_rows_follow_the_filter_and_split_rules() -> None:
    b = _builder()
    rows = [json.loads(x) for x in (ROUND3 / "payloads_round4.jsonl").read_text().splitlines()]
    assert len({r["id"] for r in rows}) == len(rows)
    framings: Counter[str] = Counter()
    for r in rows:
        key = r["id"].split("+", 1)[0]
        assert r["split"] == b.split_of(key), r["id"]
        assert r["attack"] is True and r["language"] == "English"
        if r["source"] == b.REDCODE:
            scenario = int(re.search(r"/(\d+)_", key).group(1))  # type: ignore[union-attr]
            assert r["policy_class"] == f"redcode-{b.REDCODE_KEPT[scenario]}"
            framings[key] += 1
        else:
            assert r["source"] == b.BIPIA
            assert r["policy_class"] in {f"bipia-{b._slug(c)}" for c in b.BIPIA_KEPT}
    assert set(framings.values()) == {4}
    assert len(framings) == 510 and sum(r["source"] == b.BIPIA for r in rows) == 20
