"""The sim's readers of a task's instruction and a skill's text stay linear on long runs: a
log path is what ``_LOG_PATH`` found, and a long action phrase names no path (their time is
benchmarks/regex_runs.py's)."""

from __future__ import annotations

import random

from skillci.providers.sim.evidence import _LOG_PATH, log_path
from skillci.providers.sim.skilltext import _PATH_RE, MAX_PATH_PHRASE, named_paths


def test_log_path_is_the_patterns_first_match_on_random_texts() -> None:
    rnd = random.Random(469)
    alphabet = [*"a_./-` \n", ".log", "log", "é", "l"]
    for _ in range(20_000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
        m = _LOG_PATH.search(text)
        assert log_path(text) == (m.group(1) if m else None), repr(text)


def test_log_path_after_long_runs() -> None:
    run = "_" * 200_000
    assert log_path(run) is None
    assert log_path(f"{run} then see `logs/run.log` and x.log") == "logs/run.log"
    assert log_path("a/" * 100_000 + "b.log.log") == "a/" * 100_000 + "b.log.log"


def test_named_paths_are_the_patterns_paths_below_the_cap() -> None:
    text = "edit_only_src/app/main.py then run_the_tests_in_tests/test_a.py"
    assert named_paths(text) == ["src/app/main.py", "tests/test_a.py"]
    assert _PATH_RE.findall("edit_only_src/app/main.py") == ["only_src/app/main.py"]
    long = "edit_only_" + "a/" * MAX_PATH_PHRASE + "main.py"
    assert named_paths(long) == []  # past the cap: no path, in linear time
    assert named_paths("edit_the_" + "_" * 200_000) == []
