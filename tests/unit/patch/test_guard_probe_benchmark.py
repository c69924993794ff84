"""benchmarks/guard_probe.py (design 455): a probe over an OpenAI-compatible server's vectors,
fitted on a sample of the dev rows, measured on the rounds kept untuned, against a loopback
server (the network boundary) that answers ``/embeddings``."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from benchmarks import guard_ngram as g
from benchmarks import guard_probe
from benchmarks.guard_round3 import UNTUNED
from skillci.patch.second_opinion import field_parts
from skillci.providers.local.probe import Probe, segments
from skillci.trace.redact import Redactor
from tests.fakes.openai_server import FakeOpenAI


def _sent(texts: list[str]) -> set[str]:
    """What the route reads of ``texts``: each redacted, a long one in its parts (design 462)."""
    red = Redactor()
    return {p for t in texts for p in field_parts(red.redact_text(t))}


def _embedded(texts: list[str]) -> set[str]:
    """What the benchmark embeds of training texts (a long one clipped, as before 462)."""
    red = Redactor()
    return {guard_probe.embedded_text(red, t) for t in texts}


def _attack_parts(held: list[g.Example]) -> set[str]:
    """What the route reads of the held-out attacks, but the parts (of a long row, design 462)
    that a legitimate row has too (ActBench's records share paragraphs)."""
    return _sent([e.text for e in held if e.label == 1]) - _sent(
        [e.text for e in held if e.label == 0]
    )


def _whole(text: str) -> str:
    """A text the route reads as one part, as it reads it."""
    (one,) = _sent([text])
    return one


def _segs(text: str) -> list[str]:
    """The segments of each part of ``text``, as the route scores them."""
    return [s for p in field_parts(Redactor().redact_text(text)) for s in segments(p)]


def _noise(text: str, i: int) -> float:
    return int(hashlib.sha256(f"{i}{text}".encode()).hexdigest()[:6], 16) / 0xFFFFFF - 0.5


def test_sample_keeps_every_threshold_sentence_and_caps_each_source() -> None:
    base = g.training_set()
    train = guard_probe.sample(base, 5)
    topic = [e for e in base if g._on_topic(e)]
    assert all(e in train for e in topic)
    per: dict[tuple[str, int], int] = {}
    for e in train:
        if e.source != g.BENIGN_SOURCE:
            per[(e.source, e.label)] = per.get((e.source, e.label), 0) + 1
    assert per and max(per.values()) == 5
    assert sum(e.source == g.BENIGN_SOURCE for e in train) == 2 * len(topic)
    assert guard_probe.sample(base, 5) == train  # a fixed sample
    fewer = guard_probe.sample(base, 5, n_other=10)
    assert sum(e.source == g.BENIGN_SOURCE for e in fewer) == len(topic) + 10
    assert all(e in fewer for e in topic)


def test_a_fold_is_scaled_as_the_whole_sample_is() -> None:
    """The scaling is fitted with each model, class-balanced: a fold that lacks a fifth of the
    benign rows scales a benign text as the final model does. An unweighted mean moves with
    the share of attacks, and times a large weight shifts every benign score of the fold, so
    the out-of-fold threshold would not carry over to the final model (design 456)."""
    pytest.importorskip("numpy")
    import numpy as np

    rows = [g.Example("atk", f"a{i}", f"attack {i}", 1) for i in range(30)]
    rows += [g.Example(g.BENIGN_SOURCE, f"b{i}", f"benign {i}", 0) for i in range(100)]
    vecs = {e.text: np.array([3.0 * e.label, i % 7], np.float16) for i, e in enumerate(rows)}
    fold = rows[:30] + [e for e in rows[30:] if int(e.group[1:]) % 5]
    full, part = (
        guard_probe.scaled(vecs.__getitem__, rows),
        guard_probe.scaled(vecs.__getitem__, fold),
    )
    for text in ("benign 0", "attack 0"):
        assert full(text)[0, 0] == pytest.approx(part(text)[0, 0], abs=1e-6)
    assert full("benign 0")[0, 0] == pytest.approx(-1.0) and full("attack 0")[
        0, 0
    ] == pytest.approx(1.0)
    # the unbalanced mean would differ: 30/130 of the rows are attacks, 30/110 in the fold
    assert np.mean([3.0 * e.label for e in rows]) != np.mean([3.0 * e.label for e in fold])


@pytest.mark.slow  # two evals, each fitting the probe and an n-gram model six times: ~3 min
# alone, over 5 with rounds 14-16 beside another worker (CI timed it out at 300 s)
@pytest.mark.timeout(900)
def test_eval_fits_on_dev_rows_scores_held_out_rows_and_caches(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A fake whose first dimension is "is an attack" (for dev and held-out rows alike): the
    probe must find it - every held-out attack flagged, AUC 1.0 - with no held-out text in its
    training sample."""
    dev_attacks = [e.text for e in g.training_set() if e.label == 1]
    held = [e for r in UNTUNED for sp in ("dev", "test") for e in g.fresh_rows(r, sp)]
    attacks = _embedded(dev_attacks) | _attack_parts(held)
    # design 461: one sentence of a legitimate record the guard passes reads as an attack
    # alone; the record as a whole does not
    carrier = next(
        e.text
        for e in held
        if e.label == 0
        and len(guard_probe.units(e.text)) == 1
        and len(segments(_whole(e.text))) >= 3
        and not guard_probe.caught(e.text)
    )
    planted = segments(_whole(carrier))[1]
    attacks.add(planted)
    seen: list[str] = []

    def embed_vec(text: str) -> list[float]:
        sent = _whole(text)
        return [3.0 if sent in attacks else 0.0] + [_noise(sent, i) for i in range(3)]

    def embed(text: str) -> list[float]:
        seen.append(text)
        return [3.0 if text in attacks else 0.0] + [_noise(text, i) for i in range(3)]

    cache = tmp_path / "vecs.jsonl"
    argv = ["eval", "--model", "m", "--per-source", "4", "--benign", "20", "--cache", str(cache)]
    with FakeOpenAI(["unused"], embeddings=embed) as server:
        assert guard_probe.main([*argv, "--api-base", server.base_url, "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert server.paths and all(p.endswith("/embeddings") for p in server.paths)
        # one text a request: llama-cpp-python's server mixes the texts of a batch
        assert all(body["model"] == "m" and len(body["input"]) == 1 for body in server.requests)
        asked = len(server.requests)
        embed = ["embed", *argv[1:], "--api-base", server.base_url, "--json"]
        # a second run embeds nothing: every vector comes from the cache
        assert guard_probe.main(embed) == 0
        assert json.loads(capsys.readouterr().out)["embedded"] == 0
        assert len(server.requests) == asked
        # a half-written last line (a run killed while writing it) is embedded again, alone
        lines = cache.read_text().splitlines()
        cache.write_text("\n".join([*lines[:-1], lines[-1][:20]]) + "\n")
        # (eval's last texts: segments, which only eval embeds)
        assert guard_probe.main([*argv, "--api-base", server.base_url, "--json"]) == 0
        capsys.readouterr()
        assert len(server.requests) == asked + 1 and len(server.requests[-1]["input"]) == 1
        assert guard_probe.main([*argv, "--api-base", server.base_url]) == 0
        assert len(server.requests) == asked + 1
        text = capsys.readouterr().out
        # export: the weights local/guard-probe reads, the scaling folded in
        weights = tmp_path / "probe.json.gz"
        export = ["export", *argv[1:5], "--cache", str(cache), "--out", str(weights)]
        assert guard_probe.main([*export, "--api-base", server.base_url, "--json"]) == 0
        assert json.loads(capsys.readouterr().out)["dimensions"] == 4
        assert [b["input"] for b in server.requests[asked + 1 :]] == [
            [t] for t in guard_probe.REFERENCE
        ]
    assert "m probe: AUC attacks vs legitimate 1.000" in text
    assert "n-gram model on the same sample" in text
    c = out["counts"]
    assert c["attacks"] == sum(e.label for e in held) and c["ci_test"] == 20
    assert out["training"]["dimensions"] == 4
    assert out["probe"]["auc_attacks_vs_legitimate"] == 1.0
    assert out["probe"]["auc_attacks_vs_ci_test"] == 1.0
    assert out["probe"]["at_99"]["attacks"] == c["attacks"]
    assert out["probe"]["at_99"]["legitimate"] <= 0.05 * c["legitimate"]
    # the guard alone, then with the probe as its second opinion: it only adds
    w = out["with_guard"]
    assert w["attacks"]["guard+probe"] == c["attacks"] >= w["attacks"]["guard"]
    assert w["ci_test"]["guard"] <= w["ci_test"]["guard+probe"] <= c["ci_test"]
    assert "guard+probe: attacks" in text
    # both routes: each flag counts, so never fewer than either alone (design 458)
    for group in ("attacks", "legitimate", "ci_test"):
        row = w[group]
        assert max(row["guard+probe"], row["guard+ngram"]) <= row["guard+probe+ngram"]
        assert row["guard+probe+ngram"] <= row["guard+probe"] + row["guard+ngram"]
    assert "guard+probe+ngram: attacks" in text
    # the probe at its 95% threshold flags at least what it flags at 99%
    for group in ("attacks", "legitimate", "ci_test"):
        assert w[group]["guard+probe"] <= w[group]["guard+probe@95"]
    assert "guard+probe@95: attacks" in text
    # the route's score: the whole text, or one of its segments when the whole passes
    # (ActBench's records share sentences: every record the guard passes that holds it)
    holding = [
        e.text
        for e in held
        if e.label == 0 and planted in _segs(e.text) and not guard_probe.caught(e.text)
    ]
    assert carrier in holding
    # at least those; the fake's noise dimensions put about 1% of other sentences over the
    # 99% threshold too, and a record has several
    added = w["legitimate"]["guard+probe"] - w["legitimate"]["guard+probe:whole"]
    assert len(holding) <= added <= len(holding) + 0.1 * c["legitimate"]
    assert planted in seen and carrier not in attacks
    assert out["segments"]["texts"] >= 1 and out["segments"]["embedded"] >= 3
    # real skills' CI paragraphs: none an attack, each segmented when its whole passes
    paras = guard_probe.ci_paragraphs(
        100, {e.text for e in guard_probe.sample(g.training_set(), 4)}
    )
    assert c["paragraphs"] == len(paras) == 100 and _sent(paras) <= set(seen)
    assert all(len(segments(t)) >= 2 for t in paras)
    assert w["paragraphs"]["guard"] <= w["paragraphs"]["guard+probe"]
    assert "CI paragraphs" in text
    folded = Probe.load(weights)
    assert folded.embedding_model == "m" and len(folded.reference) == 3
    thr = folded.at(None)
    one = [t.text for t in held if len(guard_probe.units(t.text)) == 1]
    atk = next(t.text for t in held if t.label == 1 and t.text in one)
    legit = next(t.text for t in held if t.label == 0 and t.text in one)
    for text_, flagged in ((atk, True), (legit, False)):
        assert (folded.score(embed_vec(text_)) >= thr) is flagged
    # the texts embedded for training are the sample's, and none of them is a held-out row
    train = [e.text for e in guard_probe.sample(g.training_set(), 4)]
    assert out["training"]["examples"] == len(train)
    first = seen[: len(dict.fromkeys(train))]
    assert set(first) == _embedded(train)
    assert not set(first) & _sent([e.text for e in held])
    # design 462: a held-out row longer than one part is embedded in its parts, each scored
    long = [e.text for e in held if len(guard_probe.units(e.text)) > 1]
    assert long and all(p in seen for t in long for p in guard_probe.units(t))
    assert not any(guard_probe.embedded_text(Redactor(), t) in seen for t in long)


def test_one_vector_per_token_is_averaged() -> None:
    assert guard_probe.pooled([[1.0, 2.0], [3.0, 6.0]]) == [2.0, 4.0]
    assert guard_probe.pooled([1, 2.5]) == [1.0, 2.5]
    assert guard_probe.pooled([[1.0], [2.0, 3.0]]) is None
    assert guard_probe.pooled(["a"]) is None and guard_probe.pooled([]) is None


def test_a_server_without_vectors_or_with_an_error_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["eval", "--cache", str(tmp_path / "v.jsonl"), "--per-source", "1"]
    with FakeOpenAI(["unused"], embeddings=lambda t: [[0.1, 0.2], [0.3]]) as server:
        assert guard_probe.main([*argv, "--api-base", server.base_url]) == 2
    assert "got another shape" in capsys.readouterr().err
    with FakeOpenAI(["unused"], embeddings=lambda t: [0.1], status=401) as server:
        assert guard_probe.main([*argv, "--api-base", server.base_url]) == 2
    assert "401" in capsys.readouterr().err
    with FakeOpenAI(["no embeddings served"]) as server:
        assert guard_probe.main([*argv, "--api-base", server.base_url]) == 2
    assert "404" in capsys.readouterr().err
    assert guard_probe.main([*argv, "--api-base", "file:///etc"]) == 2
    assert "http://" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "numpy", None)
    assert guard_probe.main([*argv, "--api-base", "http://127.0.0.1:9/v1"]) == 2
    assert "pip install numpy" in capsys.readouterr().err


def test_a_frame_needs_per_token_vectors_and_is_exported_on_its_mean(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["--cache", str(tmp_path / "v.jsonl"), "--per-source", "1"]
    assert (
        guard_probe.main(
            ["eval", *argv, "--api-base", "http://127.0.0.1:9/v1", "--pooling", "last"]
        )
        == 2
    )
    assert "--pooling last needs --frame" in capsys.readouterr().err
    framed = [*argv, "--frame", "question", "--api-base", "http://127.0.0.1:9/v1"]
    for pooling in ("last", "both"):
        assert guard_probe.main(["export", *framed, "--pooling", pooling]) == 2
        assert f"takes --pooling mean, not {pooling}" in capsys.readouterr().err
    with pytest.raises(ValueError, match="reads the mean of a framed cache"):
        guard_probe.export(
            lambda ts: [],
            object(),
            "m",
            1,
            None,
            tmp_path / "w.json.gz",
            "question",  # type: ignore[arg-type]
        )
    assert not (tmp_path / "w.json.gz").exists()
    with FakeOpenAI(["unused"], embeddings=lambda t: [0.1, 0.2]) as server:  # pooled: no last token
        assert (
            guard_probe.main(["embed", *argv, "--frame", "question", "--api-base", server.base_url])
            == 2
        )
        assert server.requests[0]["input"][0].startswith("Instruction proposed for an AI")
    assert "--frame needs one per token" in capsys.readouterr().err
    assert guard_probe.mean_and_last([[1.0, 2.0], [3.0, 6.0]]) == [2.0, 4.0, 3.0, 6.0]
    assert guard_probe.mean_and_last([1.0, 2.0]) is None


@pytest.mark.slow  # two evals (each fits the probe and an n-gram model six times): ~2 min
@pytest.mark.timeout(900)  # rounds 14-16: ~2-4 min, more beside another worker
def test_a_framed_text_is_read_at_its_last_token(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--frame``: every text goes inside the question; ``--pooling last`` reads the last
    token's vector, ``mean`` the mean. A fake whose "is an attack" signal is in the last token
    only (the first token cancels it in the mean): last finds it, mean does not (design 459)."""
    held = [e for r in UNTUNED for sp in ("dev", "test") for e in g.fresh_rows(r, sp)]
    dev_attacks = [e.text for e in g.training_set() if e.label == 1]
    attacks = _embedded(dev_attacks) | _attack_parts(held)
    head, tail = guard_probe.FRAMES["question"][1].split("{text}")
    inner: list[str] = []

    def embed(framed: str) -> list[list[float]]:
        assert framed.startswith(head) and framed.endswith(tail)
        text = framed[len(head) : len(framed) - len(tail)]
        inner.append(text)
        s = 3.0 if text in attacks else 0.0
        noise = [_noise(text, i) for i in range(3)]
        return [[-s, *noise], [0.0, *noise], [s, *noise]]

    cache = tmp_path / "framed.jsonl"
    argv = ["eval", "--model", "m", "--per-source", "4", "--benign", "20", "--cache", str(cache)]
    argv += ["--frame", "question", "--json"]
    out = {}
    with FakeOpenAI(["unused"], embeddings=embed) as server:
        for pooling in ("last", "mean"):
            assert (
                guard_probe.main([*argv, "--pooling", pooling, "--api-base", server.base_url]) == 0
            )
            out[pooling] = json.loads(capsys.readouterr().out)
        asked = len(server.requests)
    # the second eval read every vector from the cache; each text was sent once, framed
    assert asked == len(inner) == len(set(inner))
    assert out["last"]["training"]["dimensions"] == out["mean"]["training"]["dimensions"] == 4
    assert out["last"]["probe"]["auc_attacks_vs_legitimate"] == 1.0
    assert out["mean"]["probe"]["auc_attacks_vs_legitimate"] < 0.9


@pytest.mark.slow  # one export: the probe fitted six times for its thresholds, ~10 s
def test_a_framed_export_writes_its_frame_and_framed_reference_vectors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``export --frame question``: the weights read the mean over a framed text's tokens, the
    template is stored with them, and the reference vectors are the framed sentences' means -
    what ``local/guard-probe`` sends and checks (design 460)."""
    dev_attacks = [e.text for e in g.training_set() if e.label == 1]
    attacks = _embedded(dev_attacks)
    head, tail = guard_probe.FRAMES["question"][1].split("{text}")

    def rows(framed: str) -> list[list[float]]:
        assert framed.startswith(head) and framed.endswith(tail)
        text = framed[len(head) : len(framed) - len(tail)]
        s = 3.0 if text in attacks else 0.0
        noise = [_noise(text, i) for i in range(3)]
        # the mean holds the signal (s), the last token none
        return [[2 * s + 1.0, *noise], [-1.0, *noise]]

    def mean(framed: str) -> list[float]:
        r = rows(framed)
        return [sum(c) / len(r) for c in zip(*r, strict=True)]

    weights = tmp_path / "probe.json.gz"
    argv = ["export", "--model", "m", "--per-source", "4", "--frame", "question"]
    argv += ["--cache", str(tmp_path / "framed.jsonl"), "--out", str(weights), "--json"]
    with FakeOpenAI(["unused"], embeddings=rows) as server:
        assert guard_probe.main([*argv, "--api-base", server.base_url]) == 0
        sent = [b["input"][0] for b in server.requests]
    written = json.loads(capsys.readouterr().out)
    assert written["dimensions"] == 4 and written["frame"] == "frame-v1"
    folded = Probe.load(weights)
    assert folded.frame == guard_probe.FRAMES["question"][1]
    # the reference sentences were sent framed, last, and their means recorded
    assert sent[-3:] == [folded.framed(t) for t in guard_probe.REFERENCE]
    for text, vec in folded.reference:
        assert list(vec) == pytest.approx(mean(folded.framed(text)), abs=1e-5)
    # every training text was sent inside the frame; the probe reads the framed mean
    assert all(t.startswith(head) for t in sent)
    thr = folded.at(None)
    atk, benign = next(iter(attacks)), "Run the tests before you push."
    assert folded.score(mean(folded.framed(atk))) >= thr > folded.score(mean(folded.framed(benign)))


def test_only_held_out_rounds_are_scored(capsys: pytest.CaptureFixture[str]) -> None:
    """``--rounds`` picks among the untuned rounds; a round detectors were tuned on is refused
    (argparse: exit 2), and :func:`texts` refuses it too."""
    with pytest.raises(SystemExit) as exc:
        guard_probe.main(["eval", "--api-base", "http://127.0.0.1:9/v1", "--rounds", "6"])
    assert exc.value.code == 2 and "--rounds" in capsys.readouterr().err
    with pytest.raises(ValueError, match=r"rounds \[6\] are not held out"):
        guard_probe.texts(1, 1, 0, rounds=(6,))
    last = max(UNTUNED)
    _train, attacks, legit, _ci = guard_probe.texts(1, 1, 0, rounds=(last,))
    rows = g.fresh_rows(last, "dev") + g.fresh_rows(last, "test")
    assert len(attacks) == sum(e.label for e in rows) and len(attacks) + len(legit) == len(rows)
    # --split: one split's rows only
    _train, attacks, legit, _ci = guard_probe.texts(1, 1, 0, rounds=(last,), splits=("test",))
    test_rows = g.fresh_rows(last, "test")
    assert attacks == [e.text for e in test_rows if e.label == 1]
    assert legit == [e.text for e in test_rows if e.label == 0] and len(test_rows) < len(rows)


def test_fit_dev_adds_the_rounds_dev_rows_to_the_sample_and_scores_only_their_test_split(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Design 463: ``eval --fit-dev R`` fits the probe on held-out round R's dev rows too; a
    row it fitted on must never be scored, so a round both fitted and scored takes ``--split
    test`` only, and another round is scored whole."""
    dev = g.fresh_rows(15, "dev")
    train, attacks, legit, _ = guard_probe.texts(1000, 5, 0, (15,), ("test",), fit_dev=(15,))
    fitted = {e.text for e in train if e.source.startswith("round 15 dev: ")}
    assert fitted == {e.text for e in dev}
    assert not fitted & set(attacks + legit)
    assert len(attacks) + len(legit) == len(g.fresh_rows(15, "test"))
    plain, *_ = guard_probe.texts(1000, 5, 0, (15,), ("test",))
    assert not any(e.source.startswith("round ") for e in plain)
    # fitted on round 15's dev rows, scored on round 14 whole
    _, a14, l14, _ = guard_probe.texts(1000, 5, 0, (14,), ("dev", "test"), fit_dev=(15,))
    assert len(a14) + len(l14) == len(g.fresh_rows(14, "dev")) + len(g.fresh_rows(14, "test"))
    with pytest.raises(ValueError, match="--split test"):
        guard_probe.texts(1000, 5, 0, (15,), ("dev", "test"), fit_dev=(15,))
    api = ["--api-base", "http://127.0.0.1:9/v1"]
    for extra in ([], ["--split", "both"], ["--split", "dev"]):
        assert guard_probe.main(["eval", "--fit-dev", "15", "--rounds", "15", *api, *extra]) == 2
        assert "a round it scores: --split test" in capsys.readouterr().err
    # export fits on the same rows (the split check is eval's: export scores nothing)
    rows = guard_probe.training_rows((15,))
    assert len(rows) == len(g.training_set()) + len(dev)
    with pytest.raises(ValueError, match="already trained on"):
        guard_probe.training_rows((3,))
    # design 467: a round that is no longer held out (16) may be fitted on, never one already in
    # the n-gram model's training set
    r16 = guard_probe.training_rows((16,))
    assert len(r16) == len(g.training_set()) + len(g.fresh_rows(16, "dev"))
    assert 16 not in UNTUNED and 16 in guard_probe.FITTABLE and 6 not in guard_probe.FITTABLE


def test_embed_fills_the_sample_fit_dev_fits_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``embed --fit-dev R`` fills the vectors of the sample ``eval --fit-dev R`` fits on, the
    dev rows of R among them (it once filled the shipped sample only), and takes the same
    ``--split`` check."""
    seen: set[str] = set()

    def embed(text: str) -> list[float]:
        seen.add(text)
        return [float(len(text) % 7), 1.0, 0.5]

    argv = ["embed", "--model", "m", "--per-source", "4", "--benign", "5", "--other", "0"]
    argv += ["--cache", str(tmp_path / "vecs.jsonl"), "--rounds", "14", "--fit-dev", "15"]
    with FakeOpenAI(["unused"], embeddings=embed) as server:
        assert guard_probe.main([*argv, "--api-base", server.base_url, "--json"]) == 0
        cache = guard_probe.Cache(tmp_path / "vecs.jsonl", server.base_url, "m")
    train, *_ = guard_probe.texts(4, 5, 0, (14,), ("dev", "test"), fit_dev=(15,))
    dev15 = [e.text for e in train if e.source.startswith("round 15 dev: ")]
    assert dev15 and all(cache.key(e.text) in cache.vecs for e in train)
    assert set(dev15) & seen  # short rows are sent whole
    assert json.loads(capsys.readouterr().out)["training"] == len(train)
    api = ["--api-base", "http://127.0.0.1:9/v1"]
    assert guard_probe.main(["embed", "--fit-dev", "15", "--rounds", "15", *api]) == 2
    assert "a round it scores: --split test" in capsys.readouterr().err
