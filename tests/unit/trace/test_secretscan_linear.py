"""Two of detect-secrets' patterns are read through linear equals (a trial's output is the
attacker's: a run of ``eyJ`` or ``sk-`` made the plugins' own patterns quadratic). The equals
find exactly what the plugins' patterns find; their time is benchmarks/untrusted_worst_case.py's."""

from __future__ import annotations

import random
import re

import pytest

from skillci.trace import secretscan as S
from skillci.trace.redact import Redactor


def _plugin(name: str) -> re.Pattern[str]:
    """The plugin's pattern as detect-secrets ships it (not a copy)."""
    from detect_secrets.plugins.jwt import JwtTokenDetector
    from detect_secrets.plugins.openai import OpenAIDetector

    cls = {"jwt": JwtTokenDetector, "openai": OpenAIDetector}[name]
    (rx,) = cls().denylist
    return rx


def _by_the_plugin(rx: re.Pattern[str], text: str) -> list[tuple[int, int]]:
    return [S._trim(text, *m.span()) for m in rx.finditer(text)]


def test_the_installed_plugins_patterns_are_the_ones_read_linearly() -> None:
    # another detect-secrets version's pattern would be used as it is: this says when
    assert _plugin("jwt").pattern == S._JWT_PATTERN
    assert _plugin("openai").pattern == S._OPENAI_PATTERN


@pytest.mark.parametrize(
    ("name", "pieces"),
    [
        ("jwt", ["eyJ", "a", "B", "9", "-", "_", "=", ".", " ", "/", "+", "x"]),
        (
            "openai",
            # the core of a key (20, the marker, 20) whole and cut, so that runs both hold
            # keys and come close
            [
                "sk-",
                "sk-",
                "a1b2c3d4e5QRSTUVWXYZT3BlbkFJa1b2c3d4e5QRSTUVWXYZ",
                "T3BlbkFJ",
                "a1b2c3d4e5",
                "QRSTUVWXYZ",
                "-",
                "_",
                " ",
                "s",
                ".",
            ],
        ),
    ],
)
def test_the_linear_reading_finds_what_the_plugin_finds(name: str, pieces: list[str]) -> None:
    rx, rnd, found = _plugin(name), random.Random(465), 0
    for _ in range(6000):
        text = "".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 16)))
        want = _by_the_plugin(rx, text)
        assert list(S._plugin_spans(rx, text)) == want, text
        found += len(want)
    assert found > 150  # the comparison saw many matches, not only misses


def test_real_shapes_are_still_redacted() -> None:
    jwt = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
    key = "sk-proj-" + "A1b2C3d4E5f6G7h8I9j0" + "T3BlbkFJ" + "K1l2M3n4O5p6Q7r8S9t0"
    out = Redactor().redact_text(f"token={jwt}\nOPENAI={key} done")
    assert jwt not in out and key not in out and out.endswith(" done")


def test_a_run_that_never_completes_is_not_a_secret() -> None:
    text = "sk-" * 5000 + "T3BlbkFJ" + " eyJ" + "eyJ" * 5000 + ". x"
    assert list(S._plugin_spans(_plugin("openai"), text)) == []
    assert list(S._plugin_spans(_plugin("jwt"), text)) == []
