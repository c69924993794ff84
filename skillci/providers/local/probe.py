"""``local/guard-probe``: a linear probe on a served model's vectors as the guard's second
opinion (design 457).

The weights (:data:`WEIGHTS`) were fitted by ``python -m benchmarks.guard_probe export --frame
question`` on Qwen2.5-Coder-1.5B-Instruct's last hidden state, averaged over the tokens of the
text *set inside the question stored with the weights* (:attr:`Probe.frame`: what would obeying
this instruction do? design 460; the GGUF ``benchmarks/qwen_coder_gguf.sh`` fetches, served by
llama-cpp-python with ``--embedding true``), over a fixed sample of the dev rows
``local/guard-ngram`` trains on. The threshold is the 99th (95th) percentile of out-of-fold
scores of real skills' CI sentences, as for the n-gram model. skillci does not run the model:
the route names an OpenAI-compatible ``/embeddings`` endpoint (a loopback server; no key is
sent), and every text is asked on its own (llama-cpp-python's server mixes the texts of one
request, design 455). A field whose whole text scores below the threshold is scored again
sentence by sentence (:func:`segments`, at most :data:`MAX_SEGMENTS`); one sentence at or
above it flags the field (design 461).

**The served model must be the one the probe was fitted on.** Before its first verdict, the
probe embeds the reference sentences stored with the weights (framed as every text is) and
compares them with the vectors recorded at export: a cosine below :data:`MIN_COSINE` (another
model, another quantization, a server that pools or frames differently) raises
:class:`ProbeError`, as does a server
that cannot be reached or answers another shape. The guard records a failed call as a
cautious opinion (needs-approval), never as a pass.

It is a model, not a rule: its flags are caution, its passes prove nothing. Pure Python (no
numpy): the scaling is folded into the weights.
"""

from __future__ import annotations

import base64
import functools
import gzip
import json
import math
import operator
import re
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

WEIGHTS = Path(__file__).with_name("guard_probe.json.gz")
#: the exemplar memory ``local/guard-probe-recall`` reads beside the probe (design 470)
MEMORY = Path(__file__).with_name("guard_probe_memory.json.gz")
#: 2: benign exemplars beside the attacks, a text scored on the difference (design 472)
MEMORY_VERSION = 2
#: 2: the weights carry the frame each text is sent in (design 460); 1 read bare texts
WEIGHTS_VERSION = 2
#: where the text goes in a frame
SLOT = "{text}"
#: the default endpoint: a llama-cpp-python server on this machine (docs/models.md)
DEFAULT_API_BASE = "http://127.0.0.1:8766/v1"
#: a served model whose reference vectors are less alike than this is not the fitted one
MIN_COSINE = 0.99
TIMEOUT = 120.0
#: segments of one field scored on their own after the whole (design 461); the rest are not
MAX_SEGMENTS = 40
#: a segment shorter than this many words is not scored (a heading, a list number, a date)
MIN_SEGMENT_WORDS = 3
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
#: list markers, heading marks and quote marks stripped from a line's ends
_LINE_MARKS = " -*#>\t"

Embed = Callable[[str], list[float]]


class ProbeError(RuntimeError):
    """The probe cannot give a verdict: the server, its answer or its model is not the one
    the weights need. A measurement that failed, never a pass."""


#: struct codes of the packed vectors: float32 (the weights), float16 (the memory's matrices)
_WIDTH = {"f": 4, "e": 2}


def _pack(values: Sequence[float], code: str) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}{code}", *values)).decode()


def _unpack(data: str, code: str, what: str) -> list[float]:
    raw, width = base64.b64decode(data, validate=True), _WIDTH[code]
    if len(raw) % width:
        raise ValueError(f"{what}'s length is not a multiple of {width} bytes")
    return list(struct.unpack(f"<{len(raw) // width}{code}", raw))


def pack(values: Sequence[float]) -> str:
    """float32 little-endian, base64 (the weights file's vectors)."""
    return _pack(values, "f")


def unpack(data: str) -> list[float]:
    return _unpack(data, "f", "a vector")


def pack16(values: Sequence[float]) -> str:
    """float16 little-endian, base64 (the memory's matrices: half the size, and the memory
    is scored, and its thresholds set, on the rounded values)."""
    return _pack(values, "e")


def unpack16(data: str) -> list[float]:
    return _unpack(data, "e", "a float16 matrix")


def _threshold(thresholds: dict[str, float], percentile: str | None, what: str) -> float:
    key = percentile or "0.99"
    if key not in thresholds:
        known = ", ".join(sorted(thresholds))
        raise ValueError(f"no {what} at percentile {key!r}; known: {known}")
    return thresholds[key]


def _flat(v: Any) -> bool:
    return (
        isinstance(v, list)
        and bool(v)
        and all(isinstance(x, int | float) and not isinstance(x, bool) for x in v)
    )


def pooled(v: Any) -> list[float] | None:
    """``v`` as one vector: itself when flat; the mean of its rows when it is one vector per
    token (llama-cpp-python's server answers so for a model without a pooling type); else
    None."""
    if _flat(v):
        return [float(x) for x in v]
    if isinstance(v, list) and v and all(_flat(r) and len(r) == len(v[0]) for r in v):
        return [sum(col) / len(v) for col in zip(*v, strict=True)]
    return None


def segments(text: str) -> list[str]:
    """``text``'s lines, each split at sentence ends, with list, heading and quote marks
    stripped; pieces of at least :data:`MIN_SEGMENT_WORDS` words, each once, in order, at most
    :data:`MAX_SEGMENTS`. An order planted in an ordinary record (meeting minutes, a memory
    file, a config) weighs little in the mean over the whole text's tokens; alone it is
    scored as the short sentences the threshold was set on are (design 461)."""
    out: dict[str, None] = {}
    for line in text.splitlines():
        for piece in _SENTENCE_END.split(line.strip(_LINE_MARKS)):
            if len(piece.split()) >= MIN_SEGMENT_WORDS:
                out.setdefault(piece, None)
    return list(out)[:MAX_SEGMENTS]


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(x * x for x in b))
    return sum(x * y for x, y in zip(a, b, strict=True)) / (na * nb) if na and nb else 0.0


def embedder(api_base: str, model: str, timeout: float = TIMEOUT) -> Embed:
    """One text's vector from the ``/embeddings`` endpoint at ``api_base`` (one request a
    text; the mean over tokens when the server answers one vector per token)."""
    import httpx

    if not api_base.startswith(("http://", "https://")):
        raise ProbeError(f"embeddings endpoint {api_base!r}: give an http:// or https:// URL")
    url = api_base.rstrip("/") + "/embeddings"

    def embed(text: str) -> list[float]:
        try:
            resp = httpx.post(url, json={"model": model, "input": [text]}, timeout=timeout)
            resp.raise_for_status()
            data = resp.json()["data"]
            vec = pooled(data[0]["embedding"]) if len(data) == 1 else None
        except httpx.HTTPError as exc:
            raise ProbeError(f"{url}: {exc}") from None
        except (ValueError, KeyError, TypeError, IndexError):
            raise ProbeError(f"{url}: the answer has no data[0].embedding") from None
        if vec is None:
            raise ProbeError(f"{url}: expected one vector (or one per token), got another shape")
        return vec

    return embed


@dataclass(frozen=True)
class Probe:
    """A linear score over a served model's pooled vector, with its thresholds and the
    reference vectors that identify the model it was fitted on."""

    embedding_model: str
    weights: tuple[float, ...]
    bias: float
    thresholds: dict[str, float]
    #: (text, its vector when the probe was exported)
    reference: tuple[tuple[str, tuple[float, ...]], ...]
    trained_on: dict[str, Any]
    #: the template each text is sent in (one :data:`SLOT`), or None: the bare text
    frame: str | None = None

    def framed(self, text: str) -> str:
        """``text`` as the served model reads it: inside :attr:`frame` when there is one."""
        if self.frame is None:
            return text
        before, after = self.frame.split(SLOT)
        return before + text + after

    @classmethod
    def load(cls, path: Path) -> Probe:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        if data.get("version") != WEIGHTS_VERSION:
            raise ValueError(
                f"{path}: weights version {data.get('version')!r}, expected {WEIGHTS_VERSION}"
            )
        weights = tuple(unpack(data["weights"]))
        reference = tuple((str(r["text"]), tuple(unpack(r["vector"]))) for r in data["reference"])
        if not reference or any(len(v) != len(weights) for _t, v in reference):
            raise ValueError(f"{path}: reference vectors must match the weights' dimension")
        frame = data.get("frame")
        if frame is not None and (not isinstance(frame, str) or frame.count(SLOT) != 1):
            raise ValueError(f"{path}: frame must be a string holding {SLOT} once, or null")
        return cls(
            embedding_model=str(data["embedding_model"]),
            weights=weights,
            bias=float(data["bias"]),
            thresholds={str(k): float(v) for k, v in data["thresholds"].items()},
            reference=reference,
            trained_on=dict(data.get("trained_on") or {}),
            frame=frame,
        )

    def at(self, percentile: str | None) -> float:
        return _threshold(self.thresholds, percentile, "threshold")

    def score(self, vector: Sequence[float]) -> float:
        if len(vector) != len(self.weights):
            raise ProbeError(
                f"the server answers {len(vector)}-dimensional vectors; the probe reads "
                f"{len(self.weights)} ({self.embedding_model})"
            )
        return self.bias + sum(w * x for w, x in zip(self.weights, vector, strict=True))

    def check(self, embed: Embed) -> float:
        """The lowest cosine between the served model's vectors of the reference sentences
        and the recorded ones (each framed as any text is); :class:`ProbeError` below
        :data:`MIN_COSINE`."""
        worst = 1.0
        for text, want in self.reference:
            got = embed(self.framed(text))
            if len(got) != len(want):
                raise ProbeError(
                    f"the served model answers {len(got)}-dimensional vectors; the probe was "
                    f"fitted on {self.embedding_model}'s {len(want)}"
                )
            worst = min(worst, cosine(got, want))
        if worst < MIN_COSINE:
            raise ProbeError(
                f"the served model is not the one the probe was fitted on "
                f"({self.embedding_model}): a reference sentence's vector has cosine "
                f"{worst:.3f} with the recorded one (at least {MIN_COSINE} needed)"
            )
        return worst


@dataclass(frozen=True)
class Memory:
    """Attacks the probe was not fitted on, kept as exemplars (design 470): a text's score is
    the mean cosine of its :attr:`k` nearest exemplars, in a few directions of the probe's
    scaled vector space (:attr:`projection`, the scaling folded in, minus :attr:`offset`),
    less the mean cosine of its :attr:`k` nearest :attr:`benign` exemplars when there are
    some (design 472: a patch's own rationale about reporting success lies near attacks that
    order it, and nearer still to benign text). Its thresholds are percentiles of that score
    over real skills' CI sentences, as the probe's are."""

    embedding_model: str
    frame: str | None
    k: int
    #: one row a direction, each as long as the served model's vectors
    projection: tuple[tuple[float, ...], ...]
    offset: tuple[float, ...]
    #: unit vectors in the projected space
    exemplars: tuple[tuple[float, ...], ...]
    thresholds: dict[str, float]
    trained_on: dict[str, Any]
    #: unit vectors of benign texts in the same space (design 472); none: the plain memory
    benign: tuple[tuple[float, ...], ...] = ()

    @classmethod
    def load(cls, path: Path) -> Memory:
        with gzip.open(path, "rt", encoding="utf-8") as f:
            data = json.load(f)
        if data.get("version") != MEMORY_VERSION or data.get("kind") != "exemplar-memory":
            raise ValueError(
                f"{path}: an exemplar memory of version {MEMORY_VERSION} expected, got "
                f"{data.get('kind')!r} version {data.get('version')!r}"
            )
        dims, width, k = int(data["dims"]), int(data["width"]), int(data["k"])
        flat, ex = unpack16(data["projection"]), unpack16(data["exemplars"])
        offset = tuple(unpack16(data["offset"]))
        if dims < 1 or width < 1 or len(flat) != dims * width or len(offset) != dims:
            raise ValueError(f"{path}: projection must be {dims} x {width} with {dims} offsets")
        if not ex or len(ex) % dims or not 1 <= k <= len(ex) // dims:
            raise ValueError(f"{path}: exemplars must be rows of {dims} values, at least k={k}")
        bn = unpack16(data["benign"]) if data.get("benign") else []
        if len(bn) % dims or (bn and not k <= len(bn) // dims):
            raise ValueError(f"{path}: benign must be rows of {dims} values, at least k={k}")
        frame = data.get("frame")
        if frame is not None and (not isinstance(frame, str) or frame.count(SLOT) != 1):
            raise ValueError(f"{path}: frame must be a string holding {SLOT} once, or null")
        return cls(
            embedding_model=str(data["embedding_model"]),
            frame=frame,
            k=k,
            projection=tuple(tuple(flat[i : i + width]) for i in range(0, len(flat), width)),
            offset=offset,
            exemplars=tuple(tuple(ex[i : i + dims]) for i in range(0, len(ex), dims)),
            benign=tuple(tuple(bn[i : i + dims]) for i in range(0, len(bn), dims)),
            thresholds={str(key): float(v) for key, v in data["thresholds"].items()},
            trained_on=dict(data.get("trained_on") or {}),
        )

    def at(self, percentile: str | None) -> float:
        return _threshold(self.thresholds, percentile, "memory threshold")

    def score(self, vector: Sequence[float]) -> float:
        """The mean cosine of ``vector``'s :attr:`k` nearest exemplars, less that of its
        :attr:`k` nearest benign ones if the memory has some (-1.0, or -2.0 with benign
        exemplars, for a vector the projection maps to zero)."""
        width = len(self.projection[0])
        if len(vector) != width:
            raise ProbeError(
                f"the server answers {len(vector)}-dimensional vectors; the memory reads "
                f"{width} ({self.embedding_model})"
            )
        z = [
            float(sum(map(operator.mul, row, vector))) - c
            for row, c in zip(self.projection, self.offset, strict=True)
        ]
        norm = math.sqrt(sum(x * x for x in z))
        if not norm:
            return -2.0 if self.benign else -1.0
        return self._top(self.exemplars, z, norm) - (
            self._top(self.benign, z, norm) if self.benign else 0.0
        )

    def _top(self, rows: tuple[tuple[float, ...], ...], z: list[float], norm: float) -> float:
        sims = sorted(float(sum(map(operator.mul, e, z))) / norm for e in rows)
        return sum(sims[-self.k :]) / self.k


@functools.cache
def shipped() -> Probe:
    return Probe.load(WEIGHTS)


@functools.cache
def shipped_memory() -> Memory:
    """The shipped memory, checked to be of the shipped probe's model and frame."""
    mem, p = Memory.load(MEMORY), shipped()
    if (mem.embedding_model, mem.frame) != (p.embedding_model, p.frame):
        raise ValueError(f"{MEMORY}: not built on the shipped probe's model and frame")
    if len(mem.projection[0]) != len(p.weights):
        raise ValueError(f"{MEMORY}: its vectors are not as long as the probe's weights")
    return mem


@functools.cache
def _checked(api_base: str, model: str) -> bool:
    """The served model checked once a process for each endpoint (a failed check is not
    cached: it raises)."""
    shipped().check(embedder(api_base, model))
    return True


def classifier(
    api_base: str | None, model: str | None, percentile: str | None, memory: bool = False
) -> Callable[[str], tuple[str, str]]:
    """One field's text -> (category, reason), as :func:`.ngram.classify`: ``other`` when the
    probe's score of the whole text, or of one of its :func:`segments` (scored only when the
    whole is below the threshold and there are two or more), reaches the threshold, else
    ``none``. With ``memory`` (designs 470-472), a text whose :class:`Memory` score reaches
    the memory's threshold at the same percentile is flagged too: the whole text only, never
    a segment (each sentence is one more chance to land near an attack). The served model is
    checked first; each text is sent inside the probe's frame."""
    probe = shipped()
    thr = probe.at(percentile)  # an unknown percentile: ValueError before any request
    mem = shipped_memory() if memory else None
    mthr = mem.at(percentile) if mem is not None else math.inf
    base, name = api_base or DEFAULT_API_BASE, model or probe.embedding_model
    embed = embedder(base, name)
    _checked(base, name)

    def classify(text: str) -> tuple[str, str]:
        vec = embed(probe.framed(text))
        s = probe.score(vec)
        if s >= thr:
            return "other", f"probe score {s:.2f} at or above {thr:.2f} ({probe.embedding_model})"
        if mem is not None and (m := mem.score(vec)) >= mthr:
            return "other", (
                f"memory score {m:.3f} at or above {mthr:.3f}: near {mem.k} attacks of earlier "
                f"sources{' (less its nearest benign texts)' if mem.benign else ''} "
                f"(probe score {s:.2f}; {probe.embedding_model})"
            )
        parts = segments(text)
        if len(parts) < 2:  # one sentence: the whole text was it
            return "none", f"probe score {s:.2f} below {thr:.2f}"
        best, at = s, 0
        for n, part in enumerate(parts, 1):
            sp = probe.score(embed(probe.framed(part)))
            if sp >= thr:
                return "other", (
                    f"probe score {sp:.2f} at or above {thr:.2f} on segment {n} of "
                    f"{len(parts)} (the whole text: {s:.2f}; {probe.embedding_model})"
                )
            if sp > best:
                best, at = sp, n
        where = f"segment {at} of {len(parts)}" if at else "the whole text"
        return "none", f"probe score {best:.2f} below {thr:.2f} (highest: {where})"

    return classify


__all__ = [
    "DEFAULT_API_BASE",
    "MEMORY",
    "MIN_COSINE",
    "SLOT",
    "Memory",
    "Probe",
    "ProbeError",
    "classifier",
    "embedder",
    "pack16",
    "pooled",
    "segments",
    "shipped",
    "shipped_memory",
    "unpack16",
]
