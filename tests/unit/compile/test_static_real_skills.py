"""Property over the real-skills corpus (tests/fixtures/real-skills, every split): static
compile's text rewrite gives back, for every markdown file of every skill, the same set of
inline spans and links, the same code blocks and the same frontmatter, byte for byte.

The full compile (moves on demand, rules) over the corpus is benchmarks/static_compile_corpus.py;
its slow test here asserts the benchmark's figures are N/N.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from skillci.compile.mdtext import markup, split_doc
from skillci.compile.static_rewrite import rewrite_markdown
from skillci.skill.package import SKILL_MD

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "real-skills"
ENTRIES = yaml.safe_load((CORPUS / "SOURCES.yaml").read_text(encoding="utf-8"))["skills"]


def _markdown_files(folder: Path) -> list[tuple[str, str]]:
    out = []
    for p in sorted(folder.rglob("*.md")):
        try:
            out.append((p.relative_to(folder).as_posix(), p.read_text(encoding="utf-8")))
        except UnicodeDecodeError:
            continue
    return out


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["id"] for e in ENTRIES])
def test_rewrite_keeps_inline_spans_links_code_and_frontmatter(entry: dict[str, str]) -> None:
    files = _markdown_files(CORPUS / entry["dir"])
    assert files
    for rel, text in files:
        fm = rel == SKILL_MD
        out, _ = rewrite_markdown(text, rel, None, has_frontmatter=fm)
        if fm:
            assert split_doc(out)[0] == split_doc(text)[0], rel
        before, after = markup(text, has_frontmatter=fm), markup(out, has_frontmatter=fm)
        code = lambda xs: Counter(v for k, v in xs if k == "code_block")  # noqa: E731
        assert code(after) == code(before), rel
        spans_before = {x for x in before if x[0] != "code_block"}
        spans_after = {x for x in after if x[0] != "code_block"}
        assert spans_after == spans_before, (rel, spans_before ^ spans_after)


@pytest.mark.slow
@pytest.mark.timeout(1800)  # the full compile of a split takes minutes on a shared runner
@pytest.mark.parametrize("split", ["dev", "test"])
def test_full_compile_on_the_corpus_keeps_frontmatter_code_and_spans(split: str) -> None:
    from benchmarks.static_compile_corpus import measure, sources, summary

    f = summary([measure(e) for e in sources(split)])
    n = f["imported"]
    assert n > 0
    kept = (f["frontmatter_exact"], f["code_blocks_exact"], f["inline_spans_links_kept"])
    assert kept == (n, n, n), f
