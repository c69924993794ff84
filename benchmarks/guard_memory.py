"""An exemplar memory beside the probe: attacks of sources the probe never saw (design 470)

    python -m benchmarks.guard_memory --api-base http://127.0.0.1:8766/v1 --model NAME
        [--rounds 14 15 16 17 18 19 20] [--dims 128] [--k 3] [--plain] [--loro] [--cost]
        [--rationales] [--benign 200] [--paragraphs 100] [--out PATH] [--cache PATH] [--json]

``local/guard-probe`` reads a text through one linear boundary fitted on the sources of its
training sample; an attack of a new source that lies close to an earlier source's attacks, but
on the benign side of that boundary, stays missed however the boundary is refitted (design 467).
The memory keeps the **dev** attacks of the held-out rounds (``--rounds``) as exemplars: each
one sent as a single part (:func:`exemplar_units`), framed as the probe's texts are, its mean
vector scaled as the probe's training sample is, projected on that sample's ``--dims`` principal
directions and normalised. A text's score is the mean cosine of its ``--k`` nearest exemplars
less the mean cosine of its ``--k`` nearest benign exemplars, the training sample's benign texts
other than its threshold sentences (design 472: :func:`benign_exemplars`; ``--plain``: no benign
exemplars, design 470's memory); the thresholds are the 99th and 95th percentiles of that score
over the training sample's real-skill CI sentences (the probe's threshold sentences; none is an
exemplar, so no fold is needed). The matrices are rounded to float16 first, and the thresholds
set on the rounded values, so the shipped file scores as measured here.

``--loro``: leave one round out, on dev rows only: for each round R, a memory of the other
rounds' dev attacks, R's dev attacks scored as a plain rule step by the guard, the shipped probe
(whole units) and the memory. ``--cost``: what the full memory adds to the route on real skills'
held-out text: ``--benign`` test CI sentences and ``--paragraphs`` test CI paragraphs, as the
route scores them (the whole text, and each segment when there are two or more), by the guard
alone, with the shipped probe, and with the probe and the memory, at the 99th and the 95th.
``--rationales``: a patch's own rationales (:func:`own_rationales`, the placement harness's)
flagged by the probe and by the memory (design 472's first bar). ``--out`` writes the memory ``local/guard-probe-recall`` reads
(:data:`skillci.providers.local.probe.MEMORY`). Vectors come from the framed cache of
``benchmarks.guard_probe`` (:data:`~benchmarks.guard_probe.FRAMED_CACHE`); what is missing is
embedded through the server. Needs numpy; exit 2 when the server cannot be reached.
"""

from __future__ import annotations

import argparse
import gzip
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from benchmarks import guard_ngram as g
from benchmarks import guard_probe as gpb
from benchmarks.guard_llm import ServerError
from benchmarks.guard_round3 import ci_sentences
from skillci.providers.local import probe

#: the rounds whose dev attacks the shipped memory holds (design 470; 20 added by design 472)
ROUNDS: tuple[int, ...] = (14, 15, 16, 17, 18, 19, 20)
DIMS = 128
K = 3
PERCENTILES = ("0.99", "0.95")


def exemplar_units(rounds: Sequence[int]) -> list[str]:
    """The dev attacks of ``rounds`` sent as one part, each once, in the rounds' order. A long
    attack is sent in parts (design 462) and only one of them may hold its order: the others
    (a report's first 2,000 characters, say) are not known to be attacks, and one of round 14
    is the first part of a legitimate row too."""
    out: dict[str, None] = {}
    for r in rounds:
        for e in g.fresh_rows(r, "dev"):
            if e.label == 1 and len(gpb.units(e.text)) == 1:
                out.setdefault(e.text, None)
    return list(out)


def benign_exemplars(train: Sequence[g.Example]) -> list[str]:
    """Design 472's contrastive candidate: the training sample's benign texts other than the
    threshold sentences (a threshold sentence's own vector would pull its score down)."""
    thr = set(threshold_sentences(train))
    return list(dict.fromkeys(e.text for e in train if e.label == 0 and e.text not in thr))


#: an f-string rationale whose fixed text has fewer words is mostly its placeholder: left out
MIN_WORDS = 5
#: the fixed rationale of ``benchmarks.guard_public``'s placement patch
HARNESS_RATIONALE = "students report success too early"


def own_rationales() -> list[str]:
    """The rationales skillci's own detectors write into a diagnosis (string literals passed
    as ``rationale=`` in ``skillci/analyze/detectors/``, each placeholder filled with 2, those mostly placeholder left out): the
    text every compiled patch's reason is drawn from, benign by construction."""
    import ast

    root = Path(probe.__file__).resolve().parents[2] / "analyze" / "detectors"
    out: dict[str, None] = {}
    for path in sorted(root.glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.keyword) or node.arg != "rationale":
                continue
            v = node.value
            if isinstance(v, ast.Constant) and isinstance(v.value, str):
                out.setdefault(v.value, None)
            elif isinstance(v, ast.JoinedStr):
                fixed = [p.value for p in v.values if isinstance(p, ast.Constant)]
                if len(" ".join(map(str, fixed)).split()) >= MIN_WORDS:  # not "made {why}."
                    text = "".join(
                        p.value if isinstance(p, ast.Constant) else "2" for p in v.values
                    )
                    out.setdefault(text, None)
    return list(out)


def threshold_sentences(train: Sequence[g.Example]) -> list[str]:
    """The training sample's real-skill sentences on the CI topics (the probe's thresholds
    are set on their out-of-fold scores)."""
    return [e.text for e in train if g._on_topic(e)]


class Space:
    """The probe's scaled vector space cut to its training sample's first ``dims`` principal
    directions, the scaling folded into the projection and both rounded to float16 (what the
    shipped file holds): ``z(v) = P v - c``."""

    def __init__(self, vec: Callable[[str], Any], train: Sequence[g.Example], dims: int) -> None:
        import numpy as np

        mu, sd = gpb.scaling(vec, train)
        x = np.vstack([(vec(e.text).astype(np.float64) - mu) / sd for e in train])
        _u, _s, vt = np.linalg.svd(x - x.mean(0), full_matrices=False)
        proj = vt[:dims].T  # width x dims
        self.p = (proj / sd[:, None]).T.astype(np.float16).astype(np.float64)
        self.c = ((mu / sd) @ proj).astype(np.float16).astype(np.float64)
        self.vec = vec

    def unit(self, text: str) -> Any:
        import numpy as np

        z = self.p @ self.vec(text).astype(np.float64) - self.c
        n = float(np.linalg.norm(z))
        return z / n if n else z


class Memory:
    """Exemplars (float16-rounded unit vectors of :class:`Space`) and the top-``k`` mean
    cosine of a text to them; with ``benign`` exemplars too (design 472's contrastive
    candidate), that mean minus the top-``k`` mean cosine to the benign ones."""

    def __init__(
        self, space: Space, texts: Sequence[str], k: int, benign: Sequence[str] = ()
    ) -> None:
        import numpy as np

        if len(texts) < k or (benign and len(benign) < k):
            raise ValueError(f"a memory of {len(texts)} exemplars cannot score k={k} neighbours")
        self.space, self.k = space, k
        rows = np.vstack([space.unit(t) for t in texts])
        self.e = rows.astype(np.float16).astype(np.float64)
        self.b = (
            np.vstack([space.unit(t) for t in benign]).astype(np.float16).astype(np.float64)
            if benign
            else None
        )
        self.size = len(texts)

    def score(self, text: str) -> float:
        """The highest over the text's units of the mean cosine of the ``k`` nearest (less
        the benign exemplars' when there are some)."""
        import numpy as np

        best = -2.0 if self.b is not None else -1.0
        for u in gpb.units(text):
            z = self.space.unit(u)
            if not z.any():
                continue
            s = float(np.sort(self.e @ z)[-self.k :].mean())
            if self.b is not None:
                s -= float(np.sort(self.b @ z)[-self.k :].mean())
            best = max(best, s)
        return best

    def thresholds(self, sentences: Sequence[str]) -> dict[str, float]:
        scores = [self.score(t) for t in sentences]
        return {q: g._percentile(scores, float(q)) for q in PERCENTILES}


def loro(
    vec: Callable[[str], Any],
    fill: Callable[[Sequence[str], str], None],
    space: Space,
    train: Sequence[g.Example],
    rounds: Sequence[int],
    k: int,
    benign: Sequence[str] = (),
) -> dict[str, Any]:
    """Leave one round out on dev rows (module doc)."""
    shipped = probe.shipped()
    sentences = threshold_sentences(train)
    dev = {r: [e.text for e in g.fresh_rows(r, "dev") if e.label == 1] for r in rounds}
    fill([u for texts in dev.values() for t in texts for u in gpb.units(t)], "scored rows")

    def pscore(text: str) -> float:
        return max(shipped.score(vec(u).astype(float).tolist()) for u in gpb.units(text))

    per_round: dict[str, dict[str, int]] = {}
    for r in rounds:
        mem = Memory(space, exemplar_units([q for q in rounds if q != r]), k, benign)
        thr = mem.thresholds(sentences)
        row = {"attacks": 0}
        for text in dev[r]:
            guard, p, m = gpb.caught(text), pscore(text), mem.score(text)
            row["attacks"] += 1
            for q in PERCENTILES:
                by_probe = guard or p >= shipped.at(q)
                row[f"guard+probe@{q}"] = row.get(f"guard+probe@{q}", 0) + by_probe
                row[f"guard+probe+memory@{q}"] = row.get(f"guard+probe+memory@{q}", 0) + (
                    by_probe or m >= thr[q]
                )
        per_round[str(r)] = row
    total: dict[str, int] = {}
    for row in per_round.values():
        for key, n in row.items():
            total[key] = total.get(key, 0) + n
    return {"rounds": per_round, "total": total}


def cost(
    vec: Callable[[str], Any],
    fill: Callable[[Sequence[str], str], None],
    mem: Memory,
    thr: dict[str, float],
    groups: dict[str, list[str]],
) -> dict[str, dict[str, int]]:
    """Texts of each group sent to a person by the guard alone, with the route's probe, and
    with the probe and the memory, as the route scores a text (the whole, and each of its
    segments when there are two or more)."""
    shipped = probe.shipped()
    pieces: dict[str, list[str]] = {}
    for texts in groups.values():
        for t in texts:
            for u in gpb.units(t):
                parts = probe.segments(gpb.sent_parts(gpb._REDACTOR, u)[0])
                pieces[u] = [u, *(parts if len(parts) >= 2 else ())]
    fill([p for ps in pieces.values() for p in ps], "segments")
    out: dict[str, dict[str, int]] = {}
    for name, texts in groups.items():
        row = {"texts": len(texts)}
        for t in texts:
            guard = gpb.caught(t)
            ps = [p for u in gpb.units(t) for p in pieces[u]]
            pss = [shipped.score(vec(p).astype(float).tolist()) for p in ps]
            ms = [mem.score(p) for p in ps]
            whole = [mem.score(u) for u in gpb.units(t)]
            row["guard"] = row.get("guard", 0) + guard
            for q in PERCENTILES:
                by_probe = guard or max(pss) >= shipped.at(q)
                both = by_probe or max(ms) >= thr[q]
                row[f"guard+probe@{q}"] = row.get(f"guard+probe@{q}", 0) + by_probe
                row[f"guard+probe+memory@{q}"] = row.get(f"guard+probe+memory@{q}", 0) + both
                key = f"guard+probe+memory:whole@{q}"  # the memory on the whole text only
                row[key] = row.get(key, 0) + (by_probe or max(whole) >= thr[q])
        out[name] = row
    return out


def rationales(
    vec: Callable[[str], Any],
    fill: Callable[[Sequence[str], str], None],
    mem: Memory,
    thr: dict[str, float],
) -> dict[str, Any]:
    """Design 472's first bar: a patch's own rationales (the placement harness's and
    skillci's detectors', :func:`own_rationales`) flagged by the shipped probe and by the
    memory, each text whole and in its segments as the route reads it."""
    shipped = probe.shipped()
    texts = [HARNESS_RATIONALE, *own_rationales()]
    pieces = {t: [t, *(s for s in probe.segments(t) if s != t)] for t in texts}
    fill([p for ps in pieces.values() for p in ps], "rationales")
    out: dict[str, Any] = {"texts": len(texts)}
    for q in PERCENTILES:
        by_probe = [
            t
            for t in texts
            if max(shipped.score(vec(p).astype(float).tolist()) for p in pieces[t]) >= shipped.at(q)
        ]
        by_memory = [t for t in texts if mem.score(t) >= thr[q]]
        out[f"probe@{q}"] = len(by_probe)
        out[f"memory@{q}"] = len(by_memory)
        out[f"memory_only@{q}"] = sorted(set(by_memory) - set(by_probe))
    out["harness"] = round(mem.score(HARNESS_RATIONALE), 4)
    return out


def write(path: Path, model: str, mem: Memory, thr: dict[str, float], info: dict[str, Any]) -> None:
    """The memory file :class:`skillci.providers.local.probe.Memory` reads."""
    dims, width = mem.space.p.shape
    data = {
        "version": probe.MEMORY_VERSION,
        "kind": "exemplar-memory",
        "embedding_model": model,
        "frame": probe.shipped().frame,
        "k": mem.k,
        "dims": int(dims),
        "width": int(width),
        "projection": probe.pack16(mem.space.p.ravel().tolist()),
        "offset": probe.pack16(mem.space.c.tolist()),
        "exemplars": probe.pack16(mem.e.ravel().tolist()),
        "benign": probe.pack16(mem.b.ravel().tolist()) if mem.b is not None else "",
        "thresholds": thr,
        "trained_on": info,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = json.dumps(data, sort_keys=True).encode()
    path.write_bytes(gzip.compress(raw, compresslevel=9, mtime=0))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--api-base", required=True, help="an OpenAI-compatible base URL (…/v1)")
    ap.add_argument("--model", default="local", help="the model name the server expects")
    ap.add_argument(
        "--rounds",
        type=int,
        nargs="+",
        choices=gpb.FITTABLE,
        default=list(ROUNDS),
        help="the rounds whose dev attacks are the exemplars (default: design 470's)",
    )
    ap.add_argument("--dims", type=int, default=DIMS, help="principal directions kept")
    ap.add_argument("--k", type=int, default=K, help="nearest exemplars averaged")
    ap.add_argument("--per-source", type=int, default=80, help="the probe's sample (export's)")
    ap.add_argument("--other", type=int, default=600, help="the probe's sample (export's)")
    ap.add_argument(
        "--plain",
        action="store_true",
        help="design 470's memory: attacks only, no benign exemplars (design 472's candidate A)",
    )
    ap.add_argument(
        "--rationales",
        action="store_true",
        help="a patch's own rationales flagged (the harness's and skillci's detectors')",
    )
    ap.add_argument("--loro", action="store_true", help="leave one round out on dev rows")
    ap.add_argument(
        "--cost", action="store_true", help="real skills' test CI text sent to a person"
    )
    ap.add_argument("--benign", type=int, default=200, help="--cost: test CI sentences")
    ap.add_argument("--paragraphs", type=int, default=100, help="--cost: test CI paragraphs")
    ap.add_argument(
        "--cost-split",
        choices=("dev", "test"),
        default="test",
        help="--cost: the split of real skills' paragraphs (dev: to choose; test: to report)",
    )
    ap.add_argument("--out", type=Path, help="write the memory local/guard-probe-recall reads")
    ap.add_argument("--cache", type=Path, help=f"default {gpb.FRAMED_CACHE}")
    ap.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = ap.parse_args(argv)
    if not 1 <= args.dims <= 1536 or args.k < 1:
        print("guard_memory: --dims takes 1-1536 and --k at least 1", file=sys.stderr)
        return 2
    try:
        import numpy  # noqa: F401
    except ModuleNotFoundError:
        print("guard_memory: needs numpy: pip install numpy", file=sys.stderr)
        return 2
    frame = "question"  # the shipped probe's (design 460)
    embed = gpb.embedder(args.api_base, args.model, None, frame=frame)
    framed = gpb.Cache(
        args.cache or gpb.FRAMED_CACHE, args.api_base, f"{args.model}\0{gpb.FRAMES[frame][0]}"
    )
    view = gpb.View(framed, "mean")

    def fill(texts: Sequence[str], label: str) -> None:
        view.fill(texts, embed, label)

    out: dict[str, Any] = {
        "rounds": list(args.rounds),
        "dims": args.dims,
        "k": args.k,
        "contrast": not args.plain,
    }
    try:
        train = gpb.sample(gpb.training_rows(), args.per_source, args.other)
        fill([e.text for e in train], "training sample")
        units = exemplar_units(args.rounds)
        fill(units, "exemplars")
        space = Space(view, train, args.dims)
        benign = [] if args.plain else benign_exemplars(train)
        mem = Memory(space, units, args.k, benign)
        thr = mem.thresholds(threshold_sentences(train))
        out.update(exemplars=len(units), thresholds=thr)
        if args.loro:
            out["loro"] = loro(view, fill, space, train, args.rounds, args.k, benign)
        if args.rationales:
            out["rationales"] = rationales(view, fill, mem, thr)
        if args.cost:
            exclude = {e.text for e in train}
            groups = {"paragraphs": gpb.ci_paragraphs(args.paragraphs, exclude, args.cost_split)}
            if args.cost_split == "test":  # the dev CI sentences set the thresholds
                groups["ci_test"] = ci_sentences()["test"][: args.benign]
            out["cost"] = cost(view, fill, mem, thr, groups)
    except ServerError as exc:
        print(f"guard_memory: {exc}", file=sys.stderr)
        return 2
    if args.out:
        info = {
            "rounds": list(args.rounds),
            "split": "dev",
            "exemplars": len(units),
            "benign": len(benign),
            "threshold_sentences": len(threshold_sentences(train)),
            "sample": {"per_source": args.per_source, "other": args.other},
        }
        write(args.out, args.model, mem, thr, info)
        out["written"] = str(args.out)
    if args.json:
        print(json.dumps(out, indent=1))
        return 0
    print(
        f"memory: {len(units)} dev attack units of rounds {args.rounds}, {args.dims} directions, "
        f"top-{args.k} mean cosine; thresholds "
        + ", ".join(f"{q}: {v:.3f}" for q, v in thr.items())
    )
    if "loro" in out:
        print("leave one round out, dev attacks as plain rule steps (whole units):")
        for r, row in [*out["loro"]["rounds"].items(), ("total", out["loro"]["total"])]:
            print(f"  {r}: " + ", ".join(f"{k_} {v}" for k_, v in row.items()))
    if "rationales" in out:
        print("a patch's own rationales sent to a person:")
        for key, v in out["rationales"].items():
            print(f"  {key}: {v}")
    if "cost" in out:
        print("real skills' held-out text sent to a person (the route's whole and segments):")
        for name, row in out["cost"].items():
            print(f"  {name}: " + ", ".join(f"{k_} {v}" for k_, v in row.items()))
    if args.out:
        print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
