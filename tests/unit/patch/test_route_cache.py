"""benchmarks/route_cache.py: the probe route's vectors kept between benchmark runs, against a
loopback server (the network boundary) that answers ``/embeddings``."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from benchmarks import route_cache
from skillci.providers.local import probe
from tests.fakes.openai_server import FakeOpenAI


def _vec(text: str, salt: str = "") -> list[float]:
    h = hashlib.sha256((salt + text).encode()).digest()
    return [b / 255 - 0.5 for b in h[:8]]


def test_a_second_process_reads_the_vectors_and_sends_only_the_check(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "vecs.jsonl"
    with FakeOpenAI(["unused"], embeddings=_vec) as server:
        monkeypatch.setattr(probe, "embedder", probe.embedder)  # restored after the test
        live = probe.embedder
        stores = route_cache.install(cache)
        embed = probe.embedder(server.base_url, "m")
        first = [embed(t) for t in ("run the tests", "push to main", "run the tests")]
        assert first[0] == first[2] == pytest.approx(_vec("run the tests"), abs=1e-6)
        ((_, store),) = stores.items()
        assert (store.hits, store.misses) == (1, 2)
        sent = len(server.requests)
        assert sent == 3  # the reference sentence, then the two texts

        # a new process: the same texts come from the file; only the live check is sent
        monkeypatch.setattr(probe, "embedder", live)
        route_cache.install(cache)
        again = probe.embedder(server.base_url, "m")
        assert again("push to main") == first[1]
        assert len(server.requests) == sent + 1
        # exact: the answer's float64, not a rounded copy
        assert again("run the tests") == first[0]


def test_a_cache_made_by_another_model_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "vecs.jsonl"
    with FakeOpenAI(["unused"], embeddings=_vec) as server:
        monkeypatch.setattr(probe, "embedder", probe.embedder)
        live = probe.embedder
        route_cache.install(cache)
        probe.embedder(server.base_url, "m")("run the tests")
        base = server.base_url
    with FakeOpenAI(["unused"], embeddings=lambda t: _vec(t, "other")) as other:
        # the same name at another endpoint is another cache key: nothing to compare
        monkeypatch.setattr(probe, "embedder", live)
        route_cache.install(cache)
        probe.embedder(other.base_url, "m")
    # another model behind the first endpoint's address and name: refused before any read
    monkeypatch.setattr(probe, "embedder", live)
    route_cache.install(cache)
    store = route_cache.Store(cache, base, "m")
    with pytest.raises(route_cache.StaleCache, match="another model"):
        store.verify(
            lambda t: _vec(t, "other"), probe.shipped().framed(probe.shipped().reference[0][0])
        )
    # a half-written last line is left out, so its text is embedded again
    lines = cache.read_text().splitlines()
    cache.write_text("\n".join([*lines[:-1], lines[-1][:20]]) + "\n")
    assert len(route_cache.Store(cache, base, "m").vecs) == len(lines) - 1


def test_a_vector_of_another_length_is_a_stale_cache(tmp_path: Path) -> None:
    cache = tmp_path / "vecs.jsonl"
    store = route_cache.Store(cache, "http://127.0.0.1:1/v1", "m")
    store.put("ref", [0.5] * 4)
    with pytest.raises(route_cache.StaleCache, match="4 dimensions cached, 8 served"):
        route_cache.Store(cache, "http://127.0.0.1:1/v1", "m").verify(lambda t: [0.5] * 8, "ref")


def test_lines_of_another_layout_are_never_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache = tmp_path / "vecs.jsonl"
    route_cache.Store(cache, "http://127.0.0.1:1/v1", "m").put("text", [0.25, 0.5])
    monkeypatch.setattr(route_cache, "FORMAT", "float32-le-v0")
    assert route_cache.Store(cache, "http://127.0.0.1:1/v1", "m").get("text") is None
