"""Code spans found in one pass are the spans the old pattern found (design 468)."""

from __future__ import annotations

import random
import re

import pytest

from skillci.compile import literals, mdtext
from skillci.mdscan import CodeSpan, bracket_matches, bracket_sub, code_spans, sub_code_spans
from skillci.skill import references
from skillci.skill.render import when_to_load

#: the pattern skillci read code spans with before design 468 (cubic on a run of backticks)
OLD = r"(`+)(?:(?!\1).)+?\1"


def _old(text: str, dotall: bool) -> list[CodeSpan]:
    rx = re.compile(OLD, re.DOTALL if dotall else 0)
    return [CodeSpan(m.start(), m.end(), len(m.group(1))) for m in rx.finditer(text)]


@pytest.mark.parametrize("dotall", [True, False])
def test_the_spans_of_random_texts_are_the_old_patterns(dotall: bool) -> None:
    rnd = random.Random(468)
    for _ in range(6000):
        if rnd.random() < 0.5:
            alphabet = rnd.choice(["`a", "`a\n", "`` a\n", "```a"])
            text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 30)))
        else:
            text = "".join(
                "`" * rnd.randint(1, 9) + rnd.choice(["", "a", " ", "\n", "ab\nc", "x y"])
                for _ in range(rnd.randint(0, 10))
            )
        assert code_spans(text, dotall=dotall) == _old(text, dotall), repr(text)


def test_spans_of_ordinary_markdown() -> None:
    text = "Run `pytest -q`, then ``a ` b`` and ```x``; not `this\nline` unless dotall."
    spans = code_spans(text, dotall=False)
    assert [text[s.start : s.end] for s in spans] == ["`pytest -q`", "``a ` b``", "```x``"]
    assert [s.ticks for s in spans] == [1, 2, 2]
    assert code_spans(text, dotall=False) == _old(text, False)
    assert code_spans(text) == _old(text, True)
    assert code_spans("``") == [] and code_spans("") == [] and code_spans("a`b") == []


def test_sub_replaces_each_span_and_keeps_the_rest() -> None:
    text = "a `b` c ``d`e`` f"
    out = sub_code_spans(text, lambda span, s: f"<{s.ticks}:{span}>")
    assert out == "a <1:`b`> c <2:``d`e``> f"
    assert sub_code_spans("no spans", lambda span, s: "!") == "no spans"


def test_the_readers_of_skill_text_use_it() -> None:
    """The three readers that held the old pattern read the same as before on long runs."""
    run = "`" * 20_000
    assert mdtext.code_span_ranges(run) == []
    assert mdtext.mask_code_spans("x `abc` y ``a`b``") == "x `xxx` y ``xxx``"
    assert literals.literals("use `a b` and ``c`d``") == {"`a b`": 1, "``c`d``": 1}
    # the run's last backtick opens a span the next one closes, as re found on a run of 200
    assert _old("`" * 200 + " `x`", True) == [CodeSpan(199, 202, 1)]
    assert literals.literals(run + " `x`") == {"` `": 1}
    # a link inside a code span is not a link; one after a long run of backticks still is
    line = "see `[a](b.md)` and [c](" + "`" * 5_000 + "d.md)"
    assert [link.target for link in references.links("SKILL.md", line)] == ["`" * 5_000 + "d.md"]


def test_load_when_reads_blank_lines_and_quotes_as_before() -> None:
    old = re.compile(r"^\s*>?\s*(?:\*\*)?load when(?:\*\*)?\s*:\s*(.+)$", re.I | re.M)
    for text in (
        "# T\n\n> **Load when**: the task names a CSV\n",
        "\n\n   \n  load when:  x  \n",
        "  >\n  load when: after a quote line\n",
        "\n" * 20_000 + "load when: far down\n",
        ">" + " " * 10_000 + "load when: wide\n",
    ):
        m = old.search(text)
        assert m is not None
        assert when_to_load(text, "r.md") == m.group(1).strip()
    assert when_to_load("\n" * 20_000 + "# Title\n", "r.md") == "Title"


#: the link patterns read through bracket_matches, as they are written in skillci
LINKS = (
    (r"!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]*)>?(?:\s+[\"'(][^)]*)?\)", True),  # references
    (r"\[(?:[^\]\\]|\\.)*\]\([^)\s]*(?:\s+\"[^\"]*\")?\)", True),  # mdtext links
    (r"!\[(?:[^\]\\]|\\.)*\]\([^)\s]*(?:\s+\"[^\"]*\")?\)", True),  # mdtext images
    (r"\[(?:[^\]\\]|\\.)+\]\[[^\]]*\]", True),  # mdtext reference links
    (r"\[([^\]]*)\]\([^)]*\)", False),  # render
    (r"!?\[([^\]]*)\]\([^)]*\)", False),  # references' heading slugs
)


@pytest.mark.parametrize(("pattern", "escapes"), LINKS)
def test_bracket_matches_are_finditers_on_random_texts(pattern: str, escapes: bool) -> None:
    rx = re.compile(pattern)
    rnd = random.Random(pattern)
    alphabet = [*"[]()!\\ a\n\"<>'", "](", "![", "]["]
    for _ in range(4000):
        text = "".join(rnd.choice(alphabet) for _ in range(rnd.randint(0, 24)))
        got = [(m.span(), m.groups()) for m in bracket_matches(rx, text, escapes=escapes)]
        assert got == [(m.span(), m.groups()) for m in rx.finditer(text)], repr(text)
        if rx.groups:
            assert bracket_sub(rx, r"<\1>", text, escapes=escapes) == rx.sub(r"<\1>", text)


def test_links_after_runs_of_brackets() -> None:
    rx = re.compile(LINKS[0][0])
    text = "[" * 20_000 + "](a.md) ![x](b.png) [y\\](z](c.md)"
    assert [m.group(1) for m in bracket_matches(rx, text, escapes=True)] == [
        "a.md",
        "b.png",
        "c.md",
    ]
    assert bracket_matches(rx, "[" * 20_000 + "]x", escapes=True) == []
    assert [link.target for link in references.links("SKILL.md", "![" * 10_000 + "d.md")] == []
    # a heading's link keeps its text (the brackets before it are punctuation, dropped)
    assert references.slug("[" * 10_000 + "Set up](x) now") == "set-up-now"
    assert references.slug("A [b](c.md) d") == "a-b-d"
