"""Chat completions sent straight to an OpenAI-compatible server (docs/design/282).

A route ``openai/<model>`` with an ``api_base`` is a server that speaks OpenAI's chat
completions protocol: vLLM, SGLang, llama.cpp, Ollama, a gateway — where a frozen student
model is usually served. litellm adds ~5 ms of Python to each such call (its logging
object, parameter mapping, cost-map lookups, the OpenAI SDK it wraps; measured 8.4 ms per
call against 1.6 ms for the request itself), most of a model-bound trial's CPU under
``--parallel``, where trial threads share one interpreter lock. So
:class:`~skillci.providers.client.ModelClient` posts those requests itself, through the
process's pooled HTTP session, unless the route says ``"client": "litellm"`` or passes a
parameter that is not part of the protocol (then litellm maps it, as before).

The request is the one litellm would send for such a route: ``model`` without its
``openai/`` prefix, the messages, tools and sampling parameters as given, ``extra_body``
merged in, ``Authorization: Bearer <key>`` when the route has a key. Errors become what the
litellm path raises: a :class:`TransientHTTPError` (rate limit, timeout, 5xx, a broken
connection) that the caller retries, honouring its ``Retry-After``; a
:class:`~skillci.providers.health.RouteDown` when the route cannot work (refused
connection, unknown host, 401/403/404: docs/design/301);
:class:`~skillci.errors.ContextWindowExceeded` for a 400 about the context length; any other
failure a :class:`~skillci.errors.ModelError`.
"""

from __future__ import annotations

import json
import re
from typing import Any

import httpx

from skillci.errors import ContextWindowExceeded, ModelError
from skillci.providers.health import FATAL_STATUS, RouteDown
from skillci.providers.routes import ModelRoute

#: Chat-completions body fields a route's ``params`` may set on the direct path; any other
#: key (``drop_params``, ``extra_headers``, provider specifics) sends the route via litellm.
BODY_PARAMS = frozenset(
    {
        "temperature",
        "top_p",
        "max_tokens",
        "max_completion_tokens",
        "stop",
        "presence_penalty",
        "frequency_penalty",
        "logit_bias",
        "logprobs",
        "top_logprobs",
        "seed",
        "response_format",
        "tool_choice",
        "parallel_tool_calls",
        "user",
        "reasoning_effort",
        "extra_body",
    }
)

#: Statuses worth another attempt: timeout, conflict, rate limit, server errors, overload.
TRANSIENT_STATUS = frozenset({408, 409, 429, 500, 502, 503, 504, 529})

_CONTEXT = re.compile(
    r"context[ _](length|window)|maximum context|too many tokens|prompt is too long|"
    r"input is too long|exceeds the model'?s",
    re.IGNORECASE,
)


class TransientHTTPError(Exception):
    """A failure worth retrying; ``response`` (when there was one) carries Retry-After."""

    def __init__(self, message: str, response: httpx.Response | None = None) -> None:
        super().__init__(message)
        self.response = response


def goes_direct(route: ModelRoute) -> bool:
    """Does ``route`` call its server directly (module docstring)?"""
    return (
        route.client == "auto"
        and route.provider == "openai"
        and bool(route.api_base)
        and set(route.params) <= BODY_PARAMS
    )


def body(route: ModelRoute, req: dict[str, Any]) -> dict[str, Any]:
    """The JSON body for ``req`` (ModelClient.request: model, api_base, messages, ...)."""
    out = {k: v for k, v in req.items() if k not in ("api_base", "extra_body")}
    out["model"] = route.model.split("/", 1)[1]
    extra = req.get("extra_body")
    if isinstance(extra, dict):
        out.update(extra)
    return out


def chat(
    session: httpx.Client,
    route: ModelRoute,
    req: dict[str, Any],
    api_key: str | None,
    timeout: float | None = None,
) -> dict[str, Any]:
    """POST ``req`` to the route's ``/chat/completions``; the parsed answer. ``timeout``
    (default the route's): this attempt's limit, cut to what the trial has left."""
    assert route.api_base is not None
    url = route.api_base.rstrip("/") + "/chat/completions"
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    where = f"{route.model} at {route.api_base}"
    limit = route.timeout if timeout is None else timeout
    try:
        resp = session.post(url, json=body(route, req), headers=headers, timeout=limit)
    except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
        raise RouteDown(
            f"api_base {route.api_base!r} of {route.model} is not a usable URL: {exc}",
            hint="use the server's http(s) root, e.g. http://127.0.0.1:8000/v1",
        ) from None
    except httpx.ConnectError as exc:  # refused, or no such host: the route is down
        raise RouteDown(
            f"cannot connect to {where}: {exc}",
            hint="start the model server, or fix api_base in provider_routes.json",
        ) from None
    except httpx.TimeoutException as exc:
        raise TransientHTTPError(f"timed out after {limit:g} s ({where})") from exc
    except httpx.TransportError as exc:
        raise TransientHTTPError(f"{type(exc).__name__}: {exc} ({where})") from exc
    if resp.status_code >= 400:
        message = _error_message(resp)
        text = f"HTTP {resp.status_code} from {where}: {message}"
        if resp.status_code in TRANSIENT_STATUS:
            raise TransientHTTPError(text, resp)
        if resp.status_code in (400, 413, 422) and _CONTEXT.search(message):
            raise ContextWindowExceeded(text)
        if resp.status_code in FATAL_STATUS:
            raise RouteDown(text)
        raise ModelError(text)
    data: dict[str, Any] = {}
    try:
        data = resp.json()
        shaped = isinstance(data["choices"][0]["message"], dict)
    except (ValueError, KeyError, IndexError, TypeError):
        shaped = False
    if not shaped:
        raise ModelError(
            f"{where} answered HTTP {resp.status_code} without a chat completion: "
            f"{resp.text[:200]!r}",
            hint="is api_base the server's OpenAI-compatible root (usually ending in /v1)?",
        )
    return data


def _error_message(resp: httpx.Response) -> str:
    try:
        err = resp.json().get("error")
    except (ValueError, AttributeError):
        return resp.text[:300].strip() or resp.reason_phrase
    if isinstance(err, dict):
        return str(err.get("message") or json.dumps(err))[:300]
    return str(err or resp.reason_phrase)[:300]


__all__ = [
    "BODY_PARAMS",
    "TRANSIENT_STATUS",
    "TransientHTTPError",
    "body",
    "chat",
    "goes_direct",
]
