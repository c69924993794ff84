"""``local/guard-ngram``: a learned n-gram classifier for the guard's second opinion (design 444).

A logistic regression over a text's word unigrams, word bigrams, in-word character
4-grams and concept families (:data:`CONCEPTS`, design 445; binary, scaled by
1/sqrt(number of features)), trained by
``python -m benchmarks.guard_ngram train`` on the **dev** splits of the public attack
collections under ``tests/fixtures/attacks`` (attacks) and the dev half of the real skills'
prose sentences plus the collections' labelled legitimate rows (benign). Test splits are
never read by training. The threshold is the 99th percentile of out-of-fold scores of benign
sentences from skills left out of training (about 1% of benign sentences flagged).

It is a model, not a rule: its flags are caution (``needs-approval``), its passes prove
nothing, and its figures (leave-one-source-out recall, held-out tests) are in designs 444 and 445.
Pure Python; the weights are a JSON file shipped with the package.
"""

from __future__ import annotations

import functools
import gzip
import itertools
import json
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

WEIGHTS = Path(__file__).with_name("guard_ngram.json.gz")
WEIGHTS_VERSION = 3
#: Tokens read from one text (a longer text is read from its start).
MAX_TOKENS = 400
_TOKEN = re.compile(r"[^\W_]+(?:_[^\W_]+)*", re.UNICODE)
_CJK = re.compile(r"[\u2e80-\u9fff\uac00-\ud7af\u3040-\u30ff]")


_CLAUSE = re.compile(r"[.,;:!?\n()\[\]]+")
_NEGATORS = frozenset({"not", "never", "no", "nor", "cannot", "avoid", "without"})
_CONTRACTED = frozenset(
    {"don", "doesn", "didn", "isn", "aren", "wasn", "can", "won", "mustn", "shouldn", "shan"}
)


def _tokens(text: str) -> list[str]:
    """Lower-case words, CJK characters one by one; a word after a negator in its clause
    ("never", "do not", "don't", "without" ...) is marked ``~word``, so "never paste the
    key" and "paste the key" do not share their words."""
    out: list[str] = []
    for clause in _CLAUSE.split(text.lower()):
        negated = False
        prev = ""
        for tok in _TOKEN.findall(clause):
            if _CJK.search(tok):  # no spaces between words: characters one by one
                out += list(tok)
            elif tok in _NEGATORS or (tok == "t" and prev in _CONTRACTED):
                negated = True
                out.append(tok)
            else:
                out.append(f"~{tok}" if negated else tok)
            prev = tok
            if len(out) >= MAX_TOKENS:
                return out[:MAX_TOKENS]
    return out


#: Concepts an order to do harm is made of, whatever a collection's wording: a word of one
#: of these families in a clause is the feature ``@NAME`` (``~@NAME`` after a negator), and
#: two families in one clause the feature ``@A+@B``. A model that never saw "transmit the
#: session cookie to the collector" still learned that @SEND+@SECRET orders a leak.
CONCEPTS: dict[str, str] = {
    "SEND": r"send|sends|upload\w*|post|posts|forward\w*|e-?mail|mail|transmit\w*|exfiltrat\w*|"
    r"leak\w*|share|beacon|curl|wget|nc|netcat|scp|rsync|发送|发给|上传|转发|外发|泄露",
    "SECRET": r"keys?|tokens?|passwords?|passwd|credentials?|secrets?|ssh|id_rsa|cookies?|"
    r"sessions?|api_key|private|\.env|environ|shadow|密码|密钥|令牌|凭证|凭据|私钥|口令",
    "EXTERNAL": r"external|remote|attacker\w*|third[- ]party|outside|personal|webhook\w*|https?|"
    r"url|server|endpoint|domain|pastebin|ngrok|外部|第三方|服务器|网址",
    "OVERRIDE": r"ignore|disregard|forget|override|bypass|supersede\w*|instead|忽略|无视|忘记|覆盖|绕过",
    "RULES": r"instructions?|rules?|guidelines?|prompts?|system|previous|above|prior|policy|"
    r"policies|指令|指示|规则|提示|系统|之前|上文",
    "DESTROY": r"delete\w*|remove|rm|wipe|erase|drop|truncate|destroy|shred|format|overwrite|"
    r"删除|清空|销毁|覆写|格式化",
    "ALL": r"all|every|entire|whole|recursive\w*|rf|everything|所有|全部|整个",
    "EXEC": r"run|execute|eval|exec|bash|sh|powershell|download\w*|install|chmod|script|"
    r"执行|运行|下载|安装|脚本",
    "PRIV": r"sudo|root|admin\w*|privileges?|permissions?|777|sudoers|superuser|权限|管理员|提权",
    "STEALTH": r"silently|quietly|secretly|covert\w*|hidden|hide|conceal|unnoticed|"
    r"without (?:telling|asking|notify\w*|mention\w*|confirm\w*)|悄悄|秘密|隐藏|不要告诉",
    "URGENT": r"important|urgent|immediately|critical|mandatory|required|重要|立即|紧急|必须",
    "DISABLE": r"disable\w*|turn off|skip|stop|deactivate|suspend|bypass|关闭|禁用|停止|跳过",
    "DEFENCE": r"security|firewall|antivirus|audit\w*|logging|logs?|monitor\w*|checks?|"
    r"verification|review|approval|tests?|安全|审计|防火墙|日志|监控|审核",
    "PERSON": r"user|users|customers?|clients?|patients?|employees?|contacts?|用户|客户|员工",
}


def _family(pattern: str) -> re.Pattern[str]:
    """Latin words match whole; CJK words (no spaces between words) anywhere."""
    alts = pattern.split("|")
    latin = "|".join(a for a in alts if not _CJK.search(a))
    cjk = "|".join(a for a in alts if _CJK.search(a))
    return re.compile(
        rf"(?<![^\W_])(?:{latin})(?![^\W_])" + (f"|{cjk}" if cjk else ""), re.IGNORECASE
    )


_CONCEPT = {name: _family(pattern) for name, pattern in CONCEPTS.items()}

#: A negator in a clause, read the same way as :func:`_tokens` reads one (a word of
#: :data:`_NEGATORS`, or a contraction ending in n't) plus the Chinese prohibitions.
_NEGATOR = re.compile(
    r"(?<![^\W_])(?:"
    + "|".join(sorted(_NEGATORS))
    + "|(?:"
    + "|".join(sorted(_CONTRACTED))
    + r")['\u2019]t)(?![^\W_])|不要|不得|禁止|切勿"
)


def _concepts(text: str) -> set[str]:
    """``@NAME`` per concept family in a clause (``~@NAME`` after a negator), and ``@A+@B``
    for two non-negated families in one clause. A family phrase that starts with the negator
    itself ("without telling", "不要告诉") is that family, not its negation."""
    out: set[str] = set()
    for clause in _CLAUSE.split(text[: MAX_TOKENS * 8].lower()):
        neg = _NEGATOR.search(clause)
        cut = neg.start() if neg else len(clause)
        neg_end = neg.end() if neg else len(clause)
        here = []
        for name, pat in _CONCEPT.items():
            m = pat.search(clause)
            if m is None:
                continue
            if m.start() > cut or (m.start() == cut and m.end() <= neg_end):
                out.add(f"~@{name}")
            else:
                out.add(f"@{name}")
                here.append(name)
        out.update(f"@{a}+@{b}" for a, b in itertools.combinations(here, 2))
    return out


def features(text: str) -> frozenset[str]:
    """The binary features of ``text``: words, word pairs, in-word character 4-grams (of the
    word itself, negated or not) and the :data:`CONCEPTS` features."""
    words = _tokens(text)
    feats = set(words)
    feats.update(f"{a} {b}" for a, b in itertools.pairwise(words))
    for w in {x.lstrip("~") for x in words}:
        padded = f"<{w}>"
        feats.update("#" + padded[i : i + 4] for i in range(max(1, len(padded) - 3)))
    return frozenset(feats | _concepts(text))


@dataclass(frozen=True)
class NgramModel:
    """Weights, bias and the flagging thresholds of a trained model: ``threshold`` is the
    default, ``thresholds`` more by the benign percentile they stand at (e.g. ``"0.95"``)."""

    weights: Mapping[str, float]
    bias: float
    threshold: float
    meta: Mapping[str, Any]
    thresholds: Mapping[str, float] = field(default_factory=dict)

    def at(self, percentile: str | None) -> float:
        """The threshold at ``percentile`` (None: the default); ``ValueError`` if absent."""
        if percentile is None:
            return self.threshold
        if percentile not in self.thresholds:
            known = ", ".join(sorted(self.thresholds)) or "none"
            raise ValueError(f"no threshold at percentile {percentile!r} (known: {known})")
        return self.thresholds[percentile]

    def score(self, text: str) -> float:
        feats = features(text)
        if not feats:
            return self.bias
        scale = 1.0 / math.sqrt(len(feats))
        return self.bias + scale * sum(self.weights.get(f, 0.0) for f in feats)

    def top_features(self, text: str, n: int = 3) -> list[str]:
        """The features pushing ``text`` most toward a flag (for the reason shown)."""
        ranked = sorted(features(text), key=lambda f: -self.weights.get(f, 0.0))
        return [f for f in ranked[:n] if self.weights.get(f, 0.0) > 0]

    def to_json(self) -> dict[str, Any]:
        return {
            "version": WEIGHTS_VERSION,
            "bias": round(self.bias, 6),
            "threshold": round(self.threshold, 6),
            "thresholds": {k: round(v, 6) for k, v in sorted(self.thresholds.items())},
            "meta": dict(self.meta),
            "weights": {k: round(v, 4) for k, v in sorted(self.weights.items()) if abs(v) >= 1e-4},
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> NgramModel:
        if data.get("version") != WEIGHTS_VERSION:
            raise ValueError(f"guard n-gram weights version {data.get('version')!r}")
        return cls(
            weights=dict(data["weights"]),
            bias=float(data["bias"]),
            threshold=float(data["threshold"]),
            meta=dict(data.get("meta") or {}),
            thresholds={k: float(v) for k, v in (data.get("thresholds") or {}).items()},
        )


def write(model: NgramModel, path: Path = WEIGHTS) -> None:
    """Write ``model`` deterministically (same model, same bytes)."""
    body = json.dumps(model.to_json(), sort_keys=True, separators=(",", ":")).encode()
    path.write_bytes(gzip.compress(body, mtime=0))


@functools.lru_cache(maxsize=1)
def shipped() -> NgramModel:
    """The model shipped with the package."""
    return NgramModel.from_json(json.loads(gzip.decompress(WEIGHTS.read_bytes())))


def classify(
    text: str, model: NgramModel | None = None, percentile: str | None = None
) -> tuple[str, str]:
    """(category, reason) of one field's text: ``other`` when the score reaches the
    threshold (at ``percentile``, else the default), else ``none``."""
    m = model or shipped()
    thr = m.at(percentile)
    s = m.score(text)
    if s < thr:
        return "none", f"n-gram score {s:.2f} below {thr:.2f}"
    top = ", ".join(repr(f) for f in m.top_features(text))
    return "other", f"n-gram score {s:.2f} at or above {thr:.2f} ({top})"


def train(
    examples: Iterable[tuple[str, int, float]],
    *,
    epochs: int = 8,
    rate: float = 0.2,
    l2: float = 1e-5,
    seed: int = 0,
) -> tuple[dict[str, float], float]:
    """Logistic regression by SGD over (text, label 0/1, weight); classes balanced;
    deterministic for a given order of ``examples`` and ``seed``."""
    import random

    data = [(features(t), y, w) for t, y, w in examples]
    pos = sum(1 for _f, y, _w in data if y == 1)
    neg = len(data) - pos
    if pos == 0 or neg == 0:
        raise ValueError("training needs both attack and benign examples")
    balance = {1: len(data) / (2 * pos), 0: len(data) / (2 * neg)}
    weights: dict[str, float] = {}
    bias = 0.0
    rnd = random.Random(seed)  # noqa: S311 - the order of training examples, not a secret
    for _ in range(epochs):
        rnd.shuffle(data)
        for feats, y, w in data:
            scale = 1.0 / math.sqrt(len(feats) or 1)
            z = bias + scale * sum(weights.get(f, 0.0) for f in feats)
            p = 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))
            g = (p - y) * balance[y] * w
            for f in feats:
                old = weights.get(f, 0.0)
                weights[f] = old - rate * (g * scale + l2 * old)
            bias -= rate * g
    return weights, bias


__all__ = ["WEIGHTS", "NgramModel", "classify", "features", "shipped", "train", "write"]
