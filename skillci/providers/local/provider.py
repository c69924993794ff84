"""litellm custom provider ``local``: learned models answering in skillci's process.

``local/guard-ngram`` answers the guard's second-opinion prompt with the n-gram classifier of
:mod:`.ngram` (design 444); ``local/guard-probe`` with the linear probe of :mod:`.probe` over an
embeddings server's vectors (design 457: the route's ``extra_body`` names ``embeddings_api_base``
and ``embeddings_model``; ``memory: true`` adds the exemplar memory of design 470). Registered
next to ``sim`` by ``skillci.providers.client``.
"""

from __future__ import annotations

from typing import Any

from skillci.providers.guard_fields import answer_fields
from skillci.providers.local import ngram, probe
from skillci.providers.sim.provider import OutOfDomain, add_provider, prompt_tokens, text_response

PROVIDER = "local"
MODELS = ("local/guard-ngram", "local/guard-probe")
CONTEXT_WINDOW = 200_000


def respond(
    model: str, messages: list[dict[str, Any]], optional_params: dict[str, Any]
) -> dict[str, Any]:
    """The answer of a ``local/`` model as an OpenAI-style response dict."""
    name = model if model.startswith(f"{PROVIDER}/") else f"{PROVIDER}/{model}"
    if name not in MODELS:
        raise ValueError(f"unknown local model {model!r}; use {' or '.join(MODELS)}")
    used = prompt_tokens(messages, optional_params.get("tools"))
    if used > CONTEXT_WINDOW:
        raise OverflowError(f"prompt is {used} tokens; {name} accepts {CONTEXT_WINDOW}")
    extra = optional_params.get("extra_body") or {}
    given = extra.get("percentile")
    percentile = None if given is None else str(given)
    if name == "local/guard-probe":
        base, served = extra.get("embeddings_api_base"), extra.get("embeddings_model")
        try:
            classify = probe.classifier(
                None if base is None else str(base),
                None if served is None else str(served),
                percentile,
                memory=_flag(extra.get("memory"), name),
            )
            text = answer_fields(messages, classify)
        except probe.ProbeError as exc:  # a measurement that failed: an error, never a pass
            raise OutOfDomain(f"{name}: {exc}") from None
    else:
        model_ = ngram.shipped()
        model_.at(percentile)  # an unknown percentile: ValueError before any field is read

        def classify_ngram(text: str) -> tuple[str, str]:
            return ngram.classify(text, model_, percentile)

        text = answer_fields(messages, classify_ngram)
    if not text.startswith("{"):
        raise OutOfDomain(f"{name} only answers the guard's second-opinion prompt")
    return text_response(name, text, used)


def _flag(value: Any, name: str) -> bool:
    """extra_body ``memory``: true or false (absent: false)."""
    if value is None or isinstance(value, bool):
        return bool(value)
    raise ValueError(f"{name}: extra_body memory must be true or false, not {value!r}")


def register(litellm: Any) -> None:
    """Add the ``local`` provider to ``litellm.custom_provider_map`` (idempotent)."""
    add_provider(litellm, PROVIDER, respond)


__all__ = ["MODELS", "PROVIDER", "register", "respond"]
