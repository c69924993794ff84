"""A task's and a suite's text read in linear time: the readers that replaced three quadratic
patterns find what the patterns found, on random texts and on long runs (their time is
benchmarks/regex_runs.py's)."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from skillci.errors import TaskFormatError
from skillci.tasks.environment import _run_segments, _without_extras, dockerfile_requirements
from skillci.tasks.loader import _TOML_HEADER, _toml_key_line, toml_header
from skillci.tasks.suites import _FINAL_SPLIT_LINE, sealed_task_ids

#: Unicode blanks ``\s`` and str.isspace agree on, beside the ASCII ones
BLANKS = ["\u00a0", "\x1c", "\u2003"]


def test_toml_header_is_the_patterns_group_on_random_lines() -> None:
    rnd = random.Random(469)
    alphabet = [*'[] \tax."', *BLANKS]
    for _ in range(20_000):
        line = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
        m = _TOML_HEADER.match(line)
        assert toml_header(line) == (m.group(1) if m else None), repr(line)


def test_toml_header_on_long_lines() -> None:
    assert toml_header("[" * 100_000) is None
    assert toml_header("[ a" + " " * 100_000 + "x ]") == "a" + " " * 100_000 + "x"
    assert toml_header("[[environment]]") == "environment"
    assert toml_header("[[]") == "["
    assert toml_header("[ ]") == " "
    assert toml_header("[]") is None


def test_toml_key_line_reads_a_section_after_a_long_header(tmp_path: Path) -> None:
    text = "[" * 50_000 + "\n" + '[ "' + " " * 50_000 + 'x" ]\nkey = 1\n[verifier]\ntimeout = "x"\n'
    assert _toml_key_line(text, ("verifier", "timeout")) == 5


def test_run_segments_and_extras_are_the_patterns_on_random_text() -> None:
    rnd = random.Random(4690)
    for _ in range(20_000):
        cmd = "".join(rnd.choice([*"& a\t\n;b", *BLANKS]) for _ in range(rnd.randint(0, 14)))
        want = [re.sub(r"\s+", " ", p).strip() for p in re.split(r"\s*&&\s*", cmd) if p.strip()]
        assert _run_segments(cmd) == want, repr(cmd)
        name = "".join(rnd.choice("[]a.-_") for _ in range(rnd.randint(0, 10)))
        assert _without_extras(name) == re.sub(r"\[.*\]", "", name), name


def test_a_dockerfile_with_long_runs_is_read() -> None:
    blanks = " " * 100_000
    text = (
        f"FROM python:3.12\nRUN pip install requests[socks]{'[' * 100_000} &&{blanks}"
        f"apt-get install -y git{blanks}&& true\n"
    )
    req = dockerfile_requirements(text)
    assert req["tools"] == ["git"]
    assert _without_extras("requests[socks]" + "[" * 100_000) == "requests" + "[" * 100_000
    assert _without_extras("[" * 100_000 + "a]") == ""


def test_final_split_line_finds_what_the_old_pattern_found() -> None:
    old = re.compile(r"^\s*split\s*:\s*[\"']?final\b", re.MULTILINE)
    rnd = random.Random(46900)
    alphabet = ["\n", " ", "\t", "split", ":", "final", '"', "x", "finals", *BLANKS]
    for _ in range(20_000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 10)))
        assert bool(_FINAL_SPLIT_LINE.search(text)) == bool(old.search(text)), repr(text)


def test_a_broken_suite_after_a_run_of_blank_lines_still_seals(tmp_path: Path) -> None:
    sdir = tmp_path / "evals" / "suites"
    sdir.mkdir(parents=True)
    (sdir / "holdout.yaml").write_text("\n" * 200_000 + "split: final\ntasks: [unclosed\n")
    with pytest.raises(TaskFormatError):
        sealed_task_ids(tmp_path)
    (sdir / "holdout.yaml").write_text("\n" * 200_000 + "split: dev\ntasks: [unclosed\n")
    assert sealed_task_ids(tmp_path) == frozenset()
