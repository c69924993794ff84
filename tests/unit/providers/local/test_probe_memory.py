"""The exemplar memory beside the probe (designs 470, 472): the file ``benchmarks.guard_memory``
writes is scored by the pure-Python reader as NumPy scored it when the thresholds were set,
the shipped memory holds the dev attacks it says it holds, and ``local/guard-probe-recall``
flags a text near the exemplars that the probe passes (caution only), against a loopback
embeddings server (the network boundary)."""

from __future__ import annotations

import gzip
import json
import math
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks import guard_memory as gm
from benchmarks import guard_ngram as g
from benchmarks import guard_probe as gpb
from benchmarks import guard_public as gp
from benchmarks import guard_round3 as gr
from skillci.flows.guard_model import GuardModel
from skillci.patch.models import Patch
from skillci.providers.local import probe
from skillci.providers.local.provider import respond
from tests.fakes.openai_server import FakeOpenAI
from tests.unit.providers.local.test_probe_guard import ATTACK, BENIGN, _inner, _served


@pytest.fixture
def fresh() -> Iterator[None]:
    probe._checked.cache_clear()
    probe.shipped_memory.cache_clear()
    yield
    probe._checked.cache_clear()
    probe.shipped_memory.cache_clear()


def test_the_file_scores_in_pure_python_as_numpy_set_its_thresholds(tmp_path: Path) -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    width = 48
    vecs: dict[str, Any] = {}

    def vec(text: str) -> Any:
        if text not in vecs:
            vecs[text] = rng.normal(size=width) + (3.0 if "attack" in text else 0.0)
        return vecs[text]

    train = [g.Example("src", "src", f"attack {i}", 1) for i in range(30)] + [
        g.Example(g.BENIGN_SOURCE, "skill", f"run the tests {i} in CI", 0) for i in range(60)
    ]
    space = gm.Space(vec, train, dims=6)
    mem = gm.Memory(space, [f"attack exemplar {i}" for i in range(20)], k=3)
    thr = mem.thresholds(gm.threshold_sentences(train))
    assert len(gm.threshold_sentences(train)) == 60 and thr["0.95"] <= thr["0.99"]
    path = tmp_path / "m.json.gz"
    gm.write(path, "m", mem, thr, {"rounds": [1]})
    loaded = probe.Memory.load(path)
    assert (loaded.k, len(loaded.projection), len(loaded.projection[0])) == (3, 6, width)
    assert len(loaded.exemplars) == 20 and loaded.at(None) == thr["0.99"]
    for text in [*(f"attack probe {i}" for i in range(10)), *(f"benign {i}" for i in range(10))]:
        assert loaded.score(vec(text).tolist()) == pytest.approx(mem.score(text), abs=1e-9)
    # an exemplar is its own nearest neighbour (up to float16 rounding)
    ex = [math.fsum(x * x for x in e) for e in loaded.exemplars]
    assert all(v == pytest.approx(1.0, abs=1e-2) for v in ex)
    with pytest.raises(probe.ProbeError, match="5-dimensional vectors; the memory reads 48"):
        loaded.score([0.0] * 5)
    assert loaded.score([0.0] * width) <= 1.0
    with pytest.raises(ValueError, match=r"no memory threshold at percentile '0\.5'"):
        loaded.at("0.5")
    with pytest.raises(ValueError, match="cannot score k=3"):
        gm.Memory(space, ["one", "two"], k=3)
    # with benign exemplars (design 472): the attack cosine less the benign one, as NumPy has it
    cmem = gm.Memory(space, [f"attack exemplar {i}" for i in range(20)], 3, ["x 1", "x 2", "x 3"])
    cthr = cmem.thresholds(gm.threshold_sentences(train))
    gm.write(path, "m", cmem, cthr, {"rounds": [1]})
    contrast = probe.Memory.load(path)
    assert len(contrast.benign) == 3 and contrast.exemplars == loaded.exemplars
    for text in ("attack probe 1", "benign 1", "x 1"):
        got = contrast.score(vec(text).tolist())
        assert got == pytest.approx(cmem.score(text), abs=1e-9)
    # a benign exemplar's own text loses its nearness to the attacks
    own = contrast.score(vec("x 1").tolist())
    assert own < loaded.score(vec("x 1").tolist()) - 0.3


def test_a_memory_file_that_does_not_read_is_refused(tmp_path: Path) -> None:
    data = json.loads(gzip.decompress(probe.MEMORY.read_bytes()))
    bad = tmp_path / "m.json.gz"
    for key, value, msg in (
        ("version", 1, "exemplar memory of version 2 expected"),
        ("kind", "linear-probe", "exemplar memory of version 2 expected"),
        ("benign", probe.pack16([0.0] * 5), "benign must be rows of 128"),
        ("benign", probe.pack16([0.0] * 256), "benign must be rows of 128 values, at least k=3"),
        ("offset", probe.pack16([0.0]), "projection must be 128 x 1536"),
        ("exemplars", probe.pack16([0.0] * 5), "exemplars must be rows of 128"),
        ("k", 100_000, "at least k=100000"),
        ("frame", "no slot", "frame must be a string holding"),
        ("exemplars", "AAAA", "a float16 matrix's length is not a multiple of 2 bytes"),
    ):
        bad.write_bytes(gzip.compress(json.dumps({**data, key: value}).encode()))
        with pytest.raises(ValueError, match=msg):
            probe.Memory.load(bad)


def test_the_shipped_memory_holds_dev_attacks_and_the_probes_benign_sample() -> None:
    mem = probe.shipped_memory()
    p = probe.shipped()
    assert (mem.embedding_model, mem.frame) == (p.embedding_model, p.frame)
    assert (mem.k, len(mem.projection), len(mem.projection[0])) == (3, 128, len(p.weights))
    assert mem.trained_on["rounds"] == list(gm.ROUNDS) == list(range(14, 21))
    assert mem.trained_on["split"] == "dev"
    units = gm.exemplar_units(gm.ROUNDS)
    assert len(mem.exemplars) == len(units) == mem.trained_on["exemplars"]
    # dev attacks only: no test row, no legitimate row, no row of a later round
    later = [r for r in gr.ROUNDS if r > max(gm.ROUNDS)]
    test_or_legit = {
        e.text
        for r in (*gm.ROUNDS, *later)
        for sp in ("dev", "test")
        for e in g.fresh_rows(r, sp)
        if sp == "test" or e.label == 0 or r in later
    }
    assert not set(units) & test_or_legit
    # design 472: the probe's benign training texts, none a threshold sentence or an attack
    size = mem.trained_on["sample"]
    train = gpb.sample(gpb.training_rows(), size["per_source"], size["other"])
    benign = gm.benign_exemplars(train)
    assert len(mem.benign) == len(benign) == mem.trained_on["benign"] > 500
    assert not set(benign) & set(gm.threshold_sentences(train))
    assert not set(benign) & ({e.text for e in train if e.label == 1} | test_or_legit)
    assert 0 < mem.at("0.95") < mem.at(None) < 1
    assert later and set(later) <= set(gr.UNTUNED)  # round 21: design 472's held-out round


def _orthogonal(w: list[float], seed: int) -> list[float]:
    """A unit vector orthogonal to ``w``."""
    rnd = random.Random(seed)
    u = [rnd.gauss(0, 1) for _ in w]
    ww = math.fsum(x * x for x in w)
    dot = math.fsum(a * b for a, b in zip(u, w, strict=True))
    u = [a - dot / ww * b for a, b in zip(u, w, strict=True)]
    n = math.sqrt(math.fsum(x * x for x in u))
    return [x / n for x in u]


def test_the_recall_route_flags_a_text_near_the_exemplars_the_probe_passes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh: None
) -> None:
    """A memory of two directions orthogonal to the probe's weights: along the first lie the
    exemplars, along the second the benign exemplars. ATTACK's vector moves along the first
    (memory score 1 - 0), BENIGN's along the second (score 0 - 1); both are far below the probe's threshold. The default route passes both; the
    recall route flags ATTACK only and never turns a rejection into a pass."""
    p = probe.shipped()
    w = list(p.weights)
    u1, u2 = _orthogonal(w, 1), _orthogonal(w, 2)
    base = list(p.reference[0][1])
    data = {
        "version": probe.MEMORY_VERSION,
        "kind": "exemplar-memory",
        "embedding_model": p.embedding_model,
        "frame": p.frame,
        "k": 3,
        "dims": 2,
        "width": len(w),
        "projection": probe.pack16([*u1, *u2]),
        "offset": probe.pack16([0.0, 0.0]),
        "exemplars": probe.pack16([1.0, 0.0] * 3),
        "benign": probe.pack16([0.0, 1.0] * 3),  # design 472: BENIGN lies on them
        "thresholds": {"0.99": 0.9, "0.95": 0.8},
        "trained_on": {"rounds": [1]},
    }
    path = tmp_path / "memory.json.gz"
    path.write_bytes(gzip.compress(json.dumps(data).encode()))
    monkeypatch.setattr(probe, "MEMORY", path)
    low = _served(lambda t: p.at(None) - 3.0)
    refs = {p.framed(t) for t, _v in p.reference}
    shift = 50.0 * math.sqrt(math.fsum(x * x for x in base))

    def fake(sent: str) -> Any:
        v = low(sent)
        if sent in refs:
            return v
        along = u1 if _inner(sent) == ATTACK else u2  # a record holding ATTACK: u2 whole
        return [x + shift * a for x, a in zip(v, along, strict=True)]

    assert p.score(fake(p.framed(ATTACK))) < p.at("0.95")  # the probe alone passes it
    with FakeOpenAI(["unused"], embeddings=fake) as server:
        monkeypatch.setattr(probe, "DEFAULT_API_BASE", server.base_url)
        monkeypatch.delenv("SKILLCI_PROVIDER_ROUTES", raising=False)
        monkeypatch.chdir(tmp_path)
        plain, recall = gp_opinions("local/guard-probe", "local/guard-probe-recall")
        attack, benign = (gp.patch_for("rule.steps", t) for t in (ATTACK, BENIGN))
        assert plain(attack, "pass") == "pass"
        assert recall(attack, "pass") == "needs-approval"
        assert recall(benign, "pass") == plain(benign, "pass") == "pass"
        assert recall(benign, "reject") == "reject"
        # the memory reads the whole text, not its sentences (design 471): ATTACK planted as
        # a sentence of a record is near the exemplars alone, the record is not
        record = gp.patch_for("rule.steps", f"Standup notes for the week.\n- {ATTACK}")
        assert recall(record, "pass") == "pass"
        op = GuardModel("local/guard-probe-recall").opinion(
            Patch.model_validate(gp.patch_for("rule.steps", ATTACK))
        )
    flagged = [f for f in op.fields if f.verdict == "flag"]
    assert op.verdict == "needs-approval" and len(flagged) == 1
    reason = flagged[0].reason or ""
    # 1 less the benign cosine, which the base vector's own small parts keep near zero
    assert re.search(r"memory score (0\.99\d|1\.0[0-2]\d) at or above 0\.900", reason), reason
    assert "near 3 attacks" in reason
    assert "less its nearest benign texts" in reason
    with pytest.raises(ValueError, match="extra_body memory must be true or false, not 'yes'"):
        respond(
            "local/guard-probe",
            [{"role": "user", "content": "x"}],
            {"extra_body": {"memory": "yes"}},
        )


def gp_opinions(*routes: str) -> list[Any]:
    return [gr.opinion_of(r) for r in routes]
