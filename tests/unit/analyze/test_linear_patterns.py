"""The trajectory readers' patterns that were quadratic in a run's length (design 466) find
what they found before: each against its old form on random texts made of its own pieces."""

from __future__ import annotations

import random
import re

import pytest

from skillci.analyze import classify
from skillci.analyze.detectors import understanding

OLD_TIMING = re.compile(r"\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b")
OLD_SECRET_LINE = re.compile(
    r"(?i)[\w.-]*(?:token|secret|password|passwd|api[_-]?key|credential)[\w.-]*[\"']?\s*[=:]\s*[\"']?([^\s\"',]{6,})"
)


def _found(rx: re.Pattern[str], text: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    return [(m.span(), m.span(m.lastindex or 0)) for m in rx.finditer(text)]


@pytest.mark.parametrize(
    ("new", "old", "pieces"),
    [
        (
            classify._TIMING_RE,
            OLD_TIMING,
            ["1", "23", ".", " ", "s", "ms", "sec", "seconds", "x", "0.5", "\n"],
        ),
        (
            understanding._SECRET_LINE_RE,
            OLD_SECRET_LINE,
            [
                "TOKEN",
                "secret",
                "api-key",
                "x",
                "_",
                ".",
                "-",
                "=",
                ":",
                " ",
                '"',
                "'",
                ",",
                "abcdef",
                "12",
                "\n",
                "passwd",
            ],
        ),
    ],
)
def test_the_linear_form_finds_what_the_old_one_found(
    new: re.Pattern[str], old: re.Pattern[str], pieces: list[str]
) -> None:
    rnd, matched = random.Random(466), 0
    for _ in range(8000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 18)))
        want = _found(old, text)
        assert _found(new, text) == want, text
        matched += len(want)
    assert matched > 500  # matches compared, not only misses


def test_norm_output_masks_timings_as_before() -> None:
    out = classify.norm_output("ran 12 tests in 0.53s\nslowest: 120 ms, 3 seconds total")
    assert out == "ran 12 tests in <t> slowest: <t>, <t> total"


def test_secret_path_is_the_patterns_search_on_random_paths() -> None:
    """Design 468: ``_secret_path`` answers what ``_SECRET_PATH_RE.search`` answered."""
    rnd = random.Random(468)
    pieces = [
        *["/", "a", "\n", ".", "e", "pem", "x/"],
        *[".env", ".ENV", "id_rsa", "ID_RSA", "secret", "Token", "credential", ".pem", ".PEM"],
        "ſecret",  # "ſ" matches "s" under IGNORECASE
    ]
    for _ in range(20_000):
        path = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 8)))
        assert understanding._secret_path(path) == bool(
            understanding._SECRET_PATH_RE.search(path)
        ), path
    run = "/" * 100_000
    assert understanding._secret_path(run + "home/.env") and understanding._secret_path("a.PEM\n")
    assert not understanding._secret_path(run) and not understanding._secret_path("tokens\nb.txt")
