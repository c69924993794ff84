"""The importers' path patterns read through linear equals (design 468): the same paths as
``re`` finds, on random texts and on long runs (their time is benchmarks/regex_runs.py's)."""

from __future__ import annotations

import random

from skillci.trace.importers.benchflow import _SKILL_MD, skill_md_paths
from skillci.trace.importers.common import _VERIFIER_PATH, verifier_paths


def test_verifier_paths_are_the_patterns_matches_on_random_texts() -> None:
    rnd = random.Random(468)
    alphabet = [
        *"/a '=(.-\nx",
        "verifier",
        "VERIFIER",
        "test",
        "tests/",
        "test.sh",
        "reward.txt",
        "score.json",
        "Score.JSON",
        "score",
        "ſ",  # matches "s" under IGNORECASE
        "é",
    ]
    for _ in range(8000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 14)))
        assert verifier_paths(text) == [m.group(1) for m in _VERIFIER_PATH.finditer(text)], text


def test_verifier_paths_after_a_long_run() -> None:
    run = "/" * 100_000
    text = f'{{"content": "{run}", "path": "/app/tests/test_x.py", "note": "a{run}verifier.log"}}'
    assert verifier_paths(text) == ["tests/test_x.py", "a" + run + "verifier.log"]
    assert verifier_paths(run + "score.json" + run) == [run + "score.json"]  # from "^"
    assert verifier_paths(run) == []


def test_skill_md_paths_are_findall_on_random_texts() -> None:
    rnd = random.Random(4680)
    alphabet = ["SKILL.md", "a", " ", "'", "`", "/", "SKILL", ".md", "\n", "x/SKILL.md", "skill.md"]
    for _ in range(8000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
        assert skill_md_paths(text) == _SKILL_MD.findall(text), text
    long = "Read file '/skills/a/SKILL.md" + "x" * 100_000 + "' then " + "/" * 100_000
    assert skill_md_paths(long) == ["/skills/a/SKILL.md"]
