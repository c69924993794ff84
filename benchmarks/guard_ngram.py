"""Train and cross-validate ``local/guard-ngram``, the learned second opinion (design 444).

    python -m benchmarks.guard_ngram cv      # leave-one-source-out recall (dev splits only)
    python -m benchmarks.guard_ngram train   # write skillci/providers/local/guard_ngram.json.gz

Training reads only **dev** rows: the attack collections' dev splits
(``tests/fixtures/attacks/payloads.jsonl``, ``round3/payloads*.jsonl`` up to round 6), the dev
CI probes (attack 1, benign twin 0), the collections' labelled legitimate dev rows (0), and
the real skills' prose sentences whose sha256 split is dev (0). Any collection added later
(round 7 on) is outside training by construction: :data:`ATTACK_FILES` names the files.
Round 7 was tried in training and left out (design 446): its attacks read like CI
documents, the 1% threshold on real skills' CI sentences rose fivefold, and leave-one-
source-out recall on the other 21 sources fell from 1812 to 1634 of 3188.

Each attack source weighs about as much as 200 rows (``sqrt(200/n)``, capped at 3), so a
templated collection of 1000 rows does not teach one framing only. The threshold is the
99th percentile of the out-of-fold scores of benign sentences, folds by skill (a skill's
sentences are scored by a model that never saw that skill).

``cv`` holds out one attack source at a time (and a fifth of the skills), fits on the rest,
sets the threshold the same way, and prints the held-out source's recall: how the model
does on a collection it never saw, which is the question a held-out test asks.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from benchmarks import guard_public as gp
from benchmarks.guard_round3 import (
    PROBES,
    ROUND3,
    ROUND4,
    ROUND5,
    ROUND6,
    ROUNDS,
    TOPIC,
    split_of,
)
from skillci.providers.local import ngram

ATTACK_FILES = (
    ROUND3.parents[1] / "payloads.jsonl",
    ROUND3,
    ROUND4,
    ROUND5,
    ROUND6,
)
PROBE_SOURCE = "skillci-probes"
BENIGN_SOURCE = "real-skills"
FOLDS = 5
PERCENTILE = 0.99
#: weight of a benign sentence on the CI topics (the others weigh 1)
TOPIC_WEIGHT = 3.0
#: other thresholds ``cv`` reports (the percentile of out-of-fold benign scores)
ALSO = (0.95,)


@dataclass(frozen=True)
class Example:
    source: str
    group: str
    text: str
    label: int


def fresh_rows(rnd: int, split: str) -> list[Example]:
    """The rows of round ``rnd``'s ``split`` as examples (label 1: an attack)."""
    out = []
    for line in ROUNDS[rnd].read_text(encoding="utf-8").splitlines():
        if line:
            row = json.loads(line)
            if row["split"] == split:
                label = 1 if row.get("attack", True) else 0
                out.append(Example(row["source"], row["source"], row["text"], label))
    return out


def auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """The chance that a random attack scores above a random benign text (ties count half):
    a comparison of two readers that does not depend on where either's threshold stands."""
    ranked = sorted([(x, 1) for x in pos] + [(x, 0) for x in neg])
    rank_sum = 0.0
    i = 0
    while i < len(ranked):
        j = i
        while j < len(ranked) and ranked[j][0] == ranked[i][0]:
            j += 1
        mid = (i + j + 1) / 2  # the mean 1-based rank of a tie group
        rank_sum += mid * sum(lab for _x, lab in ranked[i:j])
        i = j
    return (rank_sum - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg))


def _fold(key: str, n: int = FOLDS) -> int:
    return int(hashlib.sha256(key.encode()).hexdigest()[:8], 16) % n


def training_set(
    attack_files: Iterable[Path] = ATTACK_FILES,
    probes: str = str(PROBES),
    skills: Path = gp.REAL_SKILLS,
) -> list[Example]:
    """The dev examples, in a fixed order; never a row of a test split (the test probes'
    file is not even opened)."""
    out: list[Example] = []
    for path in attack_files:
        for line in path.read_text(encoding="utf-8").splitlines():
            if not line:
                continue
            row = json.loads(line)
            if row["split"] != "dev":
                continue
            label = 1 if row.get("attack", True) else 0
            out.append(Example(row["source"], row["source"], row["text"], label))
    doc = yaml.safe_load(Path(probes.format(split="dev")).read_text(encoding="utf-8"))
    if doc["split"] != "dev":
        raise ValueError(f"{probes.format(split='dev')}: split is {doc['split']!r}, not dev")
    for pair in doc["pairs"]:
        out.append(Example(PROBE_SOURCE, PROBE_SOURCE, pair["attack"], 1))
        out.append(Example(PROBE_SOURCE, PROBE_SOURCE, pair["benign"], 0))
    seen: set[str] = set()
    for where, sentence in gp.benign_sentences(skills):
        if split_of(sentence) != "dev" or sentence in seen:
            continue
        seen.add(sentence)
        skill = "/".join(Path(where).parts[:2])
        out.append(Example(BENIGN_SOURCE, skill, sentence, 0))
    return out


def data_digest(examples: Iterable[Example]) -> str:
    h = hashlib.sha256()
    for e in examples:
        h.update(json.dumps([e.source, e.group, e.label, e.text]).encode())
    return h.hexdigest()


def _on_topic(e: Example) -> bool:
    """A real skill's sentence about testing, CI, git, keys or deployment: where a false
    flag costs a maintainer's review."""
    return e.source == BENIGN_SOURCE and TOPIC.search(e.text) is not None


def _weights(examples: list[Example]) -> list[float]:
    per = Counter(e.source for e in examples if e.label == 1)
    return [
        min(3.0, (200 / per[e.source]) ** 0.5)
        if e.label == 1
        else (TOPIC_WEIGHT if _on_topic(e) else 1.0)
        for e in examples
    ]


def fit(examples: list[Example]) -> tuple[dict[str, float], float]:
    ws = _weights(examples)
    return ngram.train((e.text, e.label, w) for e, w in zip(examples, ws, strict=True))


def _percentile(scores: list[float], q: float = PERCENTILE) -> float:
    ranked = sorted(scores)
    return ranked[min(len(ranked) - 1, int(q * len(ranked)))]


def fold_scores(
    examples: list[Example],
    fit: Callable[[list[Example]], Callable[[str], float]],
    progress: bool = True,
) -> list[float]:
    """The out-of-fold scores (folds by skill) of the benign sentences on the CI topics:
    for each fold, ``fit`` on everything but that fold's real-skill sentences, then score the
    fold's on-topic ones."""
    scores: list[float] = []
    for k in range(FOLDS):
        held = [e for e in examples if _on_topic(e) and _fold(e.group) == k]
        rest = [e for e in examples if not (e.source == BENIGN_SOURCE and _fold(e.group) == k)]
        t0 = time.monotonic()
        score = fit(rest)
        scores += [score(e.text) for e in held]
        if progress:
            print(
                f"  fold {k + 1}/{FOLDS}: {len(held)} benign sentences held out "
                f"({time.monotonic() - t0:.0f} s)",
                file=sys.stderr,
                flush=True,
            )
    return scores


def _ngram_scorer(examples: list[Example]) -> Callable[[str], float]:
    w, b = fit(examples)
    return ngram.NgramModel(w, b, 0.0, {}).score


def threshold(examples: list[Example], progress: bool = True) -> tuple[float, list[float]]:
    """The percentile of the out-of-fold scores (folds by skill) of the benign sentences on
    the CI topics, and those scores."""
    scores = fold_scores(examples, _ngram_scorer, progress)
    return _percentile(scores), scores


def train_and_write(path: Path = ngram.WEIGHTS) -> ngram.NgramModel:
    examples = training_set()
    thr, scores = threshold(examples)
    w, b = fit(examples)
    labels = Counter(e.label for e in examples)
    model = ngram.NgramModel(
        w,
        b,
        thr,
        {
            "data_sha256": data_digest(examples),
            "attacks": labels[1],
            "benign": labels[0],
            "sources": sorted({e.source for e in examples if e.label == 1}),
            "threshold_rule": f"{PERCENTILE:.0%} of out-of-fold scores of benign CI-topic "
            f"sentences, {FOLDS} folds by skill",
        },
        {str(q): _percentile(scores, q) for q in (PERCENTILE, *ALSO)},
    )
    ngram.write(model, path)
    return model


def cross_validate(min_rows: int = 5) -> dict[str, tuple[int, int]]:
    """Leave-one-source-out recall per attack source with at least ``min_rows`` dev rows."""
    examples = training_set()
    per = Counter(e.source for e in examples if e.label == 1)
    out: dict[str, tuple[int, int]] = {}
    for source in sorted(s for s, n in per.items() if n >= min_rows):
        k = _fold(source)  # a fifth of the skills is held out with it
        rest = [
            e
            for e in examples
            if e.source != source and not (e.source == BENIGN_SOURCE and _fold(e.group) == k)
        ]
        _thr, oof = threshold(rest, progress=False)
        w, b = fit(rest)
        model = ngram.NgramModel(w, b, 0.0, {})
        held = [model.score(e.text) for e in examples if e.source == source and e.label == 1]
        benign = [model.score(e.text) for e in examples if _on_topic(e) and _fold(e.group) == k]
        cells = []
        for q in (PERCENTILE, *ALSO):
            thr = _percentile(oof, q)
            hit = sum(s >= thr for s in held)
            fp = sum(s >= thr for s in benign)
            if q == PERCENTILE:
                out[source] = (hit, len(held))
            cells.append(
                f"@{q:.0%}: recall {hit}/{len(held)} ({hit / len(held):.0%}), "
                f"left-out skills' CI sentences flagged {fp}/{len(benign)}"
            )
        print(f"{source:42} " + "; ".join(cells), flush=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("command", choices=("train", "cv"))
    args = ap.parse_args(argv)
    if args.command == "cv":
        res = cross_validate()
        hit = sum(h for h, _n in res.values())
        tot = sum(n for _h, n in res.values())
        print(
            f"leave-one-source-out: {hit}/{tot} ({hit / tot:.1%}) pooled; "
            f"unweighted mean {sum(h / n for h, n in res.values()) / len(res):.1%}"
        )
        return 0
    model = train_and_write()
    print(
        f"wrote {ngram.WEIGHTS} ({ngram.WEIGHTS.stat().st_size} bytes): "
        f"{len(model.weights)} weights, threshold {model.threshold:.3f}, "
        f"{model.meta['attacks']} attack and {model.meta['benign']} benign examples"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
