"""benchmarks/regex_runs.py finds the package's patterns where they are written and times each
the way it is read (its times are the benchmark's; here, what it finds)."""

from __future__ import annotations

import functools
import re
from pathlib import Path

from benchmarks import regex_runs
from skillci.compile import mdtext
from skillci.mdscan import bracket_matches
from skillci.skill import references


def test_it_finds_compiled_patterns_literals_inside_functions_and_bracket_readers() -> None:
    found = {(f.pattern, f.flags): f for f in regex_runs.patterns()}
    assert len(found) > 500
    inline = found[(references._INLINE.pattern, 0)]
    assert isinstance(inline.reader, functools.partial) and "bracket_matches" in inline.uses
    assert inline.reader.func is bracket_matches and inline.reader.keywords == {"escapes": True}
    ref_link = found[(mdtext._REF_LINK.pattern, 0)].reader
    assert isinstance(ref_link, functools.partial) and ref_link.keywords == {"escapes": True}
    # a literal given to re.match inside a function of compile/deep.py
    numbered = [f for f in found.values() if f.pattern == r"^\s*(\d{1,9})[.)]\s"]
    assert numbered and any(w.startswith("skillci/compile/deep.py:") for w in numbered[0].where)
    # the importers' path patterns are timed through their linear equals
    from skillci.trace.importers import common

    assert found[(common._VERIFIER_PATH.pattern, int(re.I))].reader is common.verifier_paths
    # the old code-span pattern is gone from the package (design 468)
    assert not [f for f in found.values() if f.pattern.startswith(r"(`+)(?:(?!\1)")]


def test_literal_patterns_read_flags_and_skip_what_is_not_a_literal(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text(
        "import re\n"
        "def f(x, p):\n"
        "    re.search(r'a+b', x, re.I | re.M)\n"
        "    re.sub('c', 'd', x, flags=re.S)\n"
        "    re.compile(p)\n"  # not a literal: not read
        "    re.match('e', x, some_flags)\n",  # flags not known: not read
        encoding="utf-8",
    )
    rows = regex_runs.literal_patterns(src, "m.py")
    assert rows == [
        ("a+b", int(re.I | re.M), "m.py:3", "search"),
        ("c", int(re.S), "m.py:4", "sub"),
    ]
