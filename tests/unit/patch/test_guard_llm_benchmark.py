"""benchmarks/guard_llm.py (design 454): an OpenAI-compatible model's P(yes) as a guard score,
against a loopback server (the network boundary) that answers with first-token logprobs."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from benchmarks import guard_llm
from benchmarks.guard_ngram import fresh_rows
from benchmarks.guard_round3 import UNTUNED
from skillci.patch.second_opinion import MAX_FIELD_CHARS, field_parts
from skillci.trace.redact import Redactor
from tests.fakes.openai_server import FakeOpenAI

_QUOTED = re.compile(r"<<<\n(.*)\n>>>", re.DOTALL)


def test_p_yes_reads_the_first_token_alternatives() -> None:
    top = [
        {"token": " Yes", "logprob": math.log(0.6)},
        {"token": "yes", "logprob": math.log(0.1)},  # the larger of a word's forms counts
        {"token": "No", "logprob": math.log(0.2)},
        {"token": "Maybe", "logprob": math.log(0.1)},
    ]
    assert guard_llm.p_yes(top) == pytest.approx(0.75)
    assert guard_llm.p_yes([{"token": "Sure", "logprob": -0.1}]) == 0.5


def _attack_texts() -> set[str]:
    """The parts the route reads of the held-out attacks (a long row is asked part by part,
    design 462), but those a legitimate row has too (ActBench's records share paragraphs)."""
    red = Redactor()
    rows = [e for r in UNTUNED for sp in ("dev", "test") for e in fresh_rows(r, sp)]
    parts = [(e.label, p) for e in rows for p in field_parts(red.redact_text(e.text))]
    return {p for label, p in parts if label == 1} - {p for label, p in parts if label == 0}


def test_eval_scores_held_out_rows_sets_the_threshold_on_dev_sentences_and_caches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    attacks = _attack_texts()

    def logprobs(body: dict[str, Any]) -> list[tuple[str, float]]:
        m = _QUOTED.search(body["messages"][-1]["content"])
        assert m is not None and body["max_tokens"] == 1 and body["logprobs"] is True
        p = 0.9 if m.group(1) in attacks else 0.2
        return [("yes", math.log(p)), ("no", math.log(1 - p))]

    cache = tmp_path / "scores.jsonl"
    argv = ["eval", "--model", "m", "--benign", "6", "--cache", str(cache), "--json"]
    with FakeOpenAI(["yes"], logprobs=logprobs) as server:
        assert guard_llm.main([*argv, "--api-base", server.base_url]) == 0
        out = json.loads(capsys.readouterr().out)
        asked = len(server.requests)
        # one score a text; a text longer than one part is asked part by part (design 462)
        n_texts = len(cache.read_text().splitlines())
        assert n_texts < asked
        quoted = [_QUOTED.search(b["messages"][-1]["content"]) for b in server.requests]
        assert max(len(m.group(1)) for m in quoted if m) <= MAX_FIELD_CHARS
        # a second run asks nothing: every score comes from the cache
        assert guard_llm.main([*argv, "--api-base", server.base_url]) == 0
        assert len(server.requests) == asked
        assert json.loads(capsys.readouterr().out) == out
        # a run killed mid-write leaves half a line: that text is asked again, no other
        lines = cache.read_text().splitlines()
        cache.write_text("\n".join([*lines[:-1], lines[-1][:20]]) + "\n")
        assert guard_llm.main([*argv, "--api-base", server.base_url]) == 0
        again = len(server.requests) - asked  # that text's parts
        assert 1 <= again <= 64 and len(cache.read_text().splitlines()) == n_texts + 1
        assert json.loads(capsys.readouterr().out) == out
        # another model on the server shares no score with this one
        assert guard_llm.main([*argv[:-1], "--model", "other", "--api-base", server.base_url]) == 0
        assert len(server.requests) == 2 * asked + again
        capsys.readouterr()
    counts = out["counts"]
    assert counts["attacks"] > 100 and counts["legitimate"] > 100 and counts["ci_test"] == 6
    assert out["threshold_from"] == 6
    model = out["model"]
    assert model["auc_attacks_vs_legitimate"] == 1.0
    assert model["auc_attacks_vs_ci_test"] == 1.0
    # every benign text ties at 0.2, the threshold: strictly above it flags none of them
    assert model["at_99"] == {
        "threshold": 0.2,
        "attacks": counts["attacks"],
        "legitimate": 0,
        "ci_test": 0,
    }
    assert 0.5 < out["ngram"]["auc_attacks_vs_legitimate"] < 1.0


def test_a_server_without_logprobs_or_out_of_reach_is_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["eval", "--benign", "2", "--cache", str(tmp_path / "c.jsonl")]
    with FakeOpenAI(["yes"]) as server:
        assert guard_llm.main([*argv, "--api-base", server.base_url]) == 2
        assert len(server.requests) == 1
    assert "top_logprobs" in capsys.readouterr().err
    with FakeOpenAI(["yes"], status=401) as server:
        url = server.base_url
        assert guard_llm.main([*argv, "--api-base", url]) == 2
    assert "401" in capsys.readouterr().err
    assert guard_llm.main([*argv, "--api-base", "file:///etc/passwd"]) == 2
    assert "http://" in capsys.readouterr().err
    monkeypatch.delenv("GUARD_LLM_TEST_KEY", raising=False)
    assert guard_llm.main([*argv, "--api-base", url, "--key-env", "GUARD_LLM_TEST_KEY"]) == 2
    assert "$GUARD_LLM_TEST_KEY is not set" in capsys.readouterr().err
