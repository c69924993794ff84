"""benchmarks/guard_memory.py (design 470): the exemplar memory is built from the dev attacks of
the rounds it names, scored leave one round out, and written as the file the route reads,
against a loopback embeddings server (the network boundary)."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

from benchmarks import guard_memory as gm
from benchmarks import guard_ngram as g
from benchmarks import guard_probe as gpb
from skillci.providers.local import probe
from tests.fakes.openai_server import FakeOpenAI

WIDTH = len(probe.shipped().weights)


def _vec(text: str) -> list[list[float]]:
    """Two tokens' vectors of a framed text (the benchmark reads their mean): noise from the
    text's hash, so equal texts get equal vectors."""
    seed = hashlib.sha256(text.encode()).digest()
    row = [((seed[i % 32] * (i + 1)) % 97) / 97 - 0.5 for i in range(WIDTH)]
    return [[x - 0.1 for x in row], [x + 0.1 for x in row]]


def test_exemplars_are_dev_attacks_sent_as_one_part() -> None:
    units = gm.exemplar_units((14, 15))
    dev = [e for r in (14, 15) for e in g.fresh_rows(r, "dev")]
    attacks = {e.text for e in dev if e.label == 1}
    assert set(units) <= attacks and len(units) == len(set(units))
    long_ = [e.text for e in dev if e.label == 1 and len(gpb.units(e.text)) > 1]
    assert long_ and not set(long_) & set(units)  # round 14 has long attacks: left out
    assert len(units) == len({t for t in attacks if len(gpb.units(t)) == 1})
    test = {e.text for r in (14, 15) for e in g.fresh_rows(r, "test")}
    assert not set(units) & test


@pytest.mark.slow  # ~1,100 texts of 1,536 dimensions through the loopback server
@pytest.mark.timeout(900)
def test_the_memory_is_built_scored_leave_one_round_out_and_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "memory.json.gz"
    argv = ["--model", "m", "--rounds", "15", "19", "--dims", "8", "--k", "3"]
    argv += ["--per-source", "2", "--other", "0", "--cache", str(tmp_path / "v.jsonl")]
    argv += ["--loro", "--rationales", "--out", str(out), "--json"]
    with FakeOpenAI(["unused"], embeddings=_vec) as server:
        assert gm.main([*argv, "--api-base", server.base_url]) == 0
        asked = [b["input"][0] for b in server.requests]
    got = json.loads(capsys.readouterr().out)
    units = gm.exemplar_units((15, 19))
    assert got["exemplars"] == len(units)
    # every text framed as the probe's are
    head = probe.shipped().framed("")[:40]
    assert asked and all(a.startswith(head) for a in asked)
    for r in ("15", "19"):
        row = got["loro"]["rounds"][r]
        assert row["attacks"] == sum(e.label for e in g.fresh_rows(int(r), "dev"))
        for q in gm.PERCENTILES:  # the memory only adds
            assert row[f"guard+probe@{q}"] <= row[f"guard+probe+memory@{q}"] <= row["attacks"]
    mem = probe.Memory.load(out)
    assert len(mem.exemplars) == len(units) and (len(mem.projection), mem.k) == (8, 3)
    assert mem.thresholds == got["thresholds"] and mem.trained_on["rounds"] == [15, 19]
    # design 472: the probe's benign sample beside the attacks, and a patch's own rationales
    assert got["contrast"] and len(mem.benign) == mem.trained_on["benign"] > 0
    assert got["rationales"]["texts"] == 1 + len(gm.own_rationales())
    # an exemplar's own vector is among its nearest: its score is at least 1/k of a self-match;
    # the memory's score is that less the same mean over the benign exemplars
    cache = gpb.Cache(tmp_path / "v.jsonl", server.base_url, "m\0frame-v1")
    v = gpb.pick(cache(units[0]), "mean").astype(float).tolist()
    plain = dataclasses.replace(mem, benign=())
    benign_only = dataclasses.replace(mem, exemplars=mem.benign, benign=())
    assert plain.score(v) > 0.3
    assert mem.score(v) == pytest.approx(plain.score(v) - benign_only.score(v), abs=1e-9)
    assert gm.main(["--api-base", server.base_url, "--dims", "0"]) == 2
