"""``render.strip_markup`` is ``_MARKUP.sub("", line)`` in linear time: the same text on random
lines and on long runs of blanks (their time is benchmarks/regex_runs.py's)."""

from __future__ import annotations

import random

from skillci.skill.render import _MARKUP, linking_sentence, strip_markup


def test_strip_markup_is_the_patterns_substitution_on_random_lines() -> None:
    rnd = random.Random(469)
    alphabet = [*"|-*+#>1.) a\t\n", "\u00a0", "\x1c", "12."]
    for _ in range(20_000):
        line = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 12)))
        assert strip_markup(line) == _MARKUP.sub("", line), repr(line)


def test_strip_markup_on_long_runs() -> None:
    blanks = " " * 200_000
    assert strip_markup(blanks) == blanks  # no marker, no closing pipe
    assert strip_markup(f"| a |{blanks}") == "a"
    assert strip_markup(f"- read{blanks}x") == f"read{blanks}x"
    assert strip_markup(f"|{blanks}|{blanks}") == ""


def test_a_link_on_a_line_with_a_long_run_of_blanks() -> None:
    line = "- For forms, read [the guide](forms.md)." + " " * 200_000 + "|"
    assert (
        linking_sentence([("SKILL.md", line)], "forms.md")
        == "For forms, read the guide (forms.md)."
    )
