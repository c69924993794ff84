"""Every real skill of the corpus (both splits) imports, exports byte-exact, lints clean."""

from __future__ import annotations

import yaml

from benchmarks.real_skills import CORPUS, measure


def test_the_real_skills_corpus_round_trips_with_no_lint_errors_and_every_doc_indexed() -> None:
    entries = yaml.safe_load((CORPUS / "SOURCES.yaml").read_text(encoding="utf-8"))["skills"]
    results = [measure(e) for e in entries]
    assert len(results) >= 60
    assert [r.id for r in results if not r.lossless] == []
    assert [(r.id, r.error_codes) for r in results if r.lint_errors] == []
    assert [r.id for r in results if r.indexed != r.docs] == []
    assert sum(r.docs for r in results) > 300
