"""Model calls through litellm: retries, budgets, cost and the response cache.

litellm is imported lazily (it costs seconds at start-up) with
``LITELLM_LOCAL_MODEL_COST_MAP=True`` set first so no price map is fetched from the network.
The embedded simulator is registered as a litellm custom provider on first use, so
``sim/student`` goes through exactly the same path as a real provider.

Transient provider errors (rate limit, timeout, connection, 5xx) are retried with
exponential backoff and jitter (tenacity); a ``Retry-After`` (or ``retry-after-ms``) header
on the error is honoured instead, and holds back every call on that route until it has
passed. Retries never outlast the trial: with a ``time_left`` clock each attempt's timeout is
cut to the time left and no attempt starts that could not finish in it; every failed
attempt is reported to ``on_retry`` (the agent loop records it). A failure that says the
route cannot work (no key, refused connection, unknown host, 401/403/404) is not retried
and is memoised for the command (:mod:`skillci.providers.health`, docs/design/301).
Anything else becomes a :class:`ModelError` at once. A context-window overflow is
:class:`ContextWindowExceeded`.

Calls are made from the trial threads of :func:`skillci.runners.pool.trial_pool`; each
route has one :class:`RouteLimiter` per process and bound, which lets at most
``ModelRoute.max_concurrency`` calls be in flight, and no more than the running scheduler's
``--parallel`` (:func:`skillci.providers.queueing.route_call_limit`; docs/design/231, 263).
The wait for a call slot is queueing time, not the trial's own.
"""

from __future__ import annotations

import atexit
import contextlib
import email.utils
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

from tenacity import (
    RetryCallState,
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)
from tenacity.stop import stop_base

import skillci.providers.health as health
import skillci.providers.openai_compat as openai_compat
from skillci.errors import ContextWindowExceeded, ModelError
from skillci.providers.budget import BudgetMeter
from skillci.providers.cache import ResponseCache, request_key
from skillci.providers.queueing import acquire, hold, route_call_limit
from skillci.providers.routes import ModelRoute
from skillci.providers.types import Completion, Message, ToolCall, ToolSchema

_LITELLM: Any = None


def litellm_module() -> Any:
    """Import litellm once, offline, with the simulator registered."""
    global _LITELLM
    if _LITELLM is None:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        import litellm

        litellm.suppress_debug_info = True
        litellm.telemetry = False
        from skillci.providers.local.provider import register as register_local
        from skillci.providers.sim.provider import register

        register(litellm)
        register_local(litellm)
        if litellm.client_session is None:
            # One pooled HTTP client per process for OpenAI-compatible routes, built by
            # litellm itself (its SSL and HTTP/2 settings). Without it litellm builds a
            # client per route on a cache miss, unlocked: threads making a route's first
            # call at once each build one, and those the cache drops are never closed
            # (their sockets leak until garbage collection: a ResourceWarning under
            # --parallel). A shared session is never closed by the wrappers around it.
            from litellm.llms.openai.common_utils import BaseOpenAILLM

            session = BaseOpenAILLM._get_sync_http_client()
            if session is not None:
                atexit.register(session.close)
                _with_slot_hooks(session)  # a call slot is held for the exchange (280)
            litellm.client_session = session
        _LITELLM = litellm
    return _LITELLM


_SESSION: Any = None
_SESSION_LOCK = threading.Lock()


def _with_slot_hooks(session: Any) -> Any:
    """``session`` (an httpx.Client) with the hooks that hold a call's slot for the HTTP
    exchange (:class:`RouteLimiter`, design 280)."""
    hooks = session.event_hooks
    session.event_hooks = {
        "request": [*hooks.get("request", []), _exchange_starts],
        "response": [*hooks.get("response", []), _exchange_ends],
    }
    return session


def http_session() -> Any:
    """This process's pooled HTTP client for routes called directly
    (:mod:`skillci.providers.openai_compat`): no litellm import; closed at exit."""
    global _SESSION
    with _SESSION_LOCK:
        if _SESSION is None:
            import httpx

            _SESSION = _with_slot_hooks(
                httpx.Client(
                    follow_redirects=True,
                    limits=httpx.Limits(max_connections=None, max_keepalive_connections=128),
                )
            )
            atexit.register(_SESSION.close)
        return _SESSION


#: Modules litellm imports lazily inside its first completion call (~2-3 s of CPU): done
#: once up front, not in the first call of every trial thread at the same time.
_LAZY_LITELLM = (
    "litellm.proxy._types",
    "litellm.proxy.openai_files_endpoints.common_utils",
    "litellm.litellm_core_utils.prompt_templates.file_id_utils",
    "litellm.types.router",
    "litellm.llms.openai.openai",
    "httpcore",
)


def warm_litellm() -> None:
    """Import litellm and what its first call would import (names that no longer exist
    in an installed litellm are skipped)."""
    import importlib

    litellm_module()
    for name in _LAZY_LITELLM:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)


def _transient_types(litellm: Any) -> tuple[type[BaseException], ...]:
    return (
        litellm.RateLimitError,
        litellm.Timeout,
        litellm.APIConnectionError,
        litellm.ServiceUnavailableError,
        litellm.InternalServerError,
        litellm.BadGatewayError,
    )


#: Longest Retry-After honoured (seconds); a longer one is waited for this long.
MAX_RETRY_AFTER = 300.0


def retry_after(exc: BaseException | None) -> float | None:
    """Seconds a provider asked us to wait (``retry-after-ms`` or ``Retry-After``: seconds or
    an HTTP date), from the error's response headers; None when it gave none."""
    headers: Any = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        headers = getattr(getattr(exc, "response", None), "headers", None)
    if headers is None:
        return None
    try:
        ms = headers.get("retry-after-ms")
        if ms is not None:
            return max(0.0, float(ms) / 1000)
        raw = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if raw is None:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(str(raw))
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


class RouteLimiter:
    """At most ``limit`` calls in flight on one route, and none before a Retry-After
    deadline that any call on it received.

    A call holds its slot only while its HTTP exchange is in flight when the route's
    requests go through one of skillci's HTTP sessions (:func:`http_session`, the one
    :func:`litellm_module` hands litellm; their event hooks take and give back the slot):
    the client's request building, response parsing and cost bookkeeping then run outside
    it, and the slot is the endpoint's concurrency, nothing more. A route is known to go
    that way once one of its calls, holding the slot for the whole call, was seen by the
    hooks; until then, for routes that never are (the simulator, providers litellm calls
    with its own HTTP handler), and again after a call the hooks did not see, the slot is
    held for the whole call (docs/design/280)."""

    def __init__(self, limit: int | None) -> None:
        self.limit = limit
        self._sem = threading.BoundedSemaphore(limit) if limit else None
        self._lock = threading.Lock()
        self._not_before = 0.0
        self.at_exchange = False
        """True once a call on this route was seen by the HTTP session's hooks: later
        calls hold the slot only during their HTTP exchange."""
        self.calls = 0
        """Slot holds so far: one per call, or per HTTP exchange (each retry counts)."""
        self.held_sec = 0.0
        """Their summed duration: how long call slots were held (benchmarks/concurrency.py
        compares its mean with the endpoint's latency)."""

    def hold_off(self, seconds: float) -> None:
        with self._lock:
            self._not_before = max(self._not_before, time.monotonic() + seconds)

    def _pause(self) -> None:
        while (left := self._not_before - time.monotonic()) > 0:
            time.sleep(min(left, 1.0))

    def call(self, fn: Any, **kwargs: Any) -> Any:
        self._pause()
        if self._sem is None:
            return self._timed(fn, kwargs)
        claim = _Claim(self, whole_call=not self.at_exchange)
        token = _CLAIM.set(claim)
        try:
            if not claim.whole_call:
                try:
                    return fn(**kwargs)  # the session's hooks hold the slot per exchange
                finally:
                    if not claim.seen:  # it went another way: hold whole calls again
                        self.at_exchange = False
            with hold(self._sem):
                self._pause()
                result = self._timed(fn, kwargs)
            if claim.seen:
                self.at_exchange = True
            return result
        finally:
            claim.give_back()  # an exchange that raised before its response
            _CLAIM.reset(token)

    def _timed(self, fn: Any, kwargs: dict[str, Any]) -> Any:
        start = time.monotonic()
        try:
            return fn(**kwargs)
        finally:
            self._count(time.monotonic() - start)

    def _count(self, held: float) -> None:
        with self._lock:
            self.calls += 1
            self.held_sec += held


class _Claim:
    """One call's claim on its route's slot, in the calling thread's context."""

    __slots__ = ("limiter", "seen", "since", "whole_call")

    def __init__(self, limiter: RouteLimiter, *, whole_call: bool) -> None:
        self.limiter = limiter
        self.whole_call = whole_call
        self.seen = False
        self.since: float | None = None

    def take(self) -> None:
        self.seen = True
        sem = self.limiter._sem
        if self.whole_call or self.since is not None or sem is None:
            return
        self.limiter._pause()
        acquire(sem)
        self.since = time.monotonic()

    def give_back(self) -> None:
        if self.since is None:
            return
        held, self.since = time.monotonic() - self.since, None
        assert self.limiter._sem is not None
        self.limiter._sem.release()
        self.limiter._count(held)


#: The model call running in this thread, if any (set by :meth:`RouteLimiter.call`).
_CLAIM: ContextVar[_Claim | None] = ContextVar("skillci_call_claim", default=None)


def _exchange_starts(request: Any) -> None:
    """httpx request hook of skillci's session: take the running call's slot."""
    claim = _CLAIM.get()
    if claim is not None:
        claim.take()


def _exchange_ends(response: Any) -> None:
    """httpx response hook: give the slot back once the response's headers are in (a
    non-streamed body is read right after; skillci never streams)."""
    claim = _CLAIM.get()
    if claim is not None:
        claim.give_back()


_LIMITERS: dict[tuple[str, int | None], RouteLimiter] = {}
_LIMITERS_LOCK = threading.Lock()


def route_limiter(route_name: str, limit: int | None) -> RouteLimiter:
    """This process's limiter of ``route_name`` (one per route, shared by every client)."""
    with _LIMITERS_LOCK:
        return _LIMITERS.setdefault((route_name, limit), RouteLimiter(limit))


def parse_tool_calls(raw: Sequence[Any] | None) -> list[ToolCall]:
    out: list[ToolCall] = []
    for i, tc in enumerate(raw or []):
        fn = tc.function if hasattr(tc, "function") else tc.get("function", {})
        name = getattr(fn, "name", None) if not isinstance(fn, dict) else fn.get("name")
        args_raw = (
            getattr(fn, "arguments", None) if not isinstance(fn, dict) else fn.get("arguments")
        )
        args_raw = args_raw if isinstance(args_raw, str) else json.dumps(args_raw or {})
        call_id = (
            tc.id if hasattr(tc, "id") else tc.get("id")
        ) or f"call_{i}_{uuid.uuid4().hex[:8]}"
        try:
            parsed = json.loads(args_raw) if args_raw.strip() else {}
            err = None if isinstance(parsed, dict) else "arguments are not a JSON object"
        except json.JSONDecodeError as exc:
            parsed, err = {}, f"arguments are not valid JSON: {exc.msg}"
        except RecursionError:  # model output is untrusted: 100k-deep nesting is no call
            parsed, err = {}, "arguments are nested too deep"
        out.append(
            ToolCall(
                id=str(call_id),
                name=str(name or ""),
                raw_arguments=args_raw,
                arguments=parsed if isinstance(parsed, dict) else {},
                parse_error=err,
            )
        )
    return out


#: One secret holding every model key as ``NAME=value`` lines (the reusable workflows pass
#: their environment's secret of this name; a route's ``api_key_env`` names the line).
MODEL_KEYS_ENV = "SKILLCI_MODEL_KEYS"


def model_keys(text: str) -> dict[str, str]:
    """``NAME=value`` lines (blank lines, ``#`` comments and ``export`` prefixes allowed)."""
    out: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if name.strip():
            out[name.strip()] = value
    return out


class ModelClient:
    """Calls one route. ``use_cache`` reads and writes ``cache`` (when one is given)."""

    def __init__(
        self,
        route_name: str,
        route: ModelRoute,
        *,
        meter: BudgetMeter | None = None,
        cache: ResponseCache | None = None,
        use_cache: bool = False,
        max_retries: int = 4,
        backoff_initial: float = 1.0,
        backoff_max: float = 30.0,
    ) -> None:
        self.route_name = route_name
        self.route = route
        self.meter = meter or BudgetMeter()
        self.cache = cache
        self.use_cache = use_cache and cache is not None
        self.max_retries = max_retries
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.limiter = route_limiter(route_name, route_call_limit(route.max_concurrency))

    def request(
        self, messages: list[Message], tools: list[ToolSchema] | None, seed: int | None
    ) -> dict[str, Any]:
        """The full request (without the API key): what the cache key is made of."""
        req: dict[str, Any] = {
            "model": self.route.model,
            "api_base": self.route.api_base,
            "messages": messages,
            **self.route.sampling_params(),
        }
        if tools:
            req["tools"] = tools
        if seed is not None:
            req["seed"] = seed
        return req

    def _api_key(self) -> str | None:
        env = self.route.api_key_env
        if env is None:
            return None
        key = os.environ.get(env) or model_keys(os.environ.get(MODEL_KEYS_ENV, "")).get(env)
        if not key:
            raise self._down(
                ModelError(
                    f"route {self.route_name!r} needs an API key but ${env} is not set",
                    hint=f"export {env}=..., or add a line {env}=... to ${MODEL_KEYS_ENV} (the "
                    "key itself never goes into provider_routes.json)",
                )
            )
        return key

    def _down(self, err: ModelError) -> health.RouteDown:
        """Memoise ``err`` as this route's fatal failure for the command."""
        return health.mark_down(self.route_name, self.route.fingerprint(), err)

    def complete(
        self,
        messages: list[Message],
        tools: list[ToolSchema] | None = None,
        *,
        seed: int | None = None,
        time_left: Callable[[], float] | None = None,
        on_retry: Callable[[str], None] | None = None,
    ) -> Completion:
        """One call. Cache hits are free; otherwise raises BudgetExceeded before calling when
        the budget is spent, and the route's memoised failure when it cannot work.
        ``time_left``: seconds the caller (a trial) has left, which bounds the attempts;
        ``on_retry``: told one line per failed attempt that is retried."""
        req = self.request(messages, tools, seed)
        fingerprint = self.route.fingerprint()
        key = request_key({"route": fingerprint, "request": req})
        if self.use_cache and self.cache is not None:
            hit = self.cache.get(key)
            if hit is not None:
                self.meter.charge(cached=True)
                return hit
        health.check(self.route_name, fingerprint)
        self.meter.check()
        completion = self._call(req, _Attempts(self, time_left, on_retry))
        self.meter.charge(
            input_tokens=completion.input_tokens,
            output_tokens=completion.output_tokens,
            usd=completion.usd or 0.0,
        )
        if self.use_cache and self.cache is not None:
            self.cache.put(key, self.route_name, completion)
        return completion

    def _call(self, req: dict[str, Any], attempts: _Attempts) -> Completion:
        if openai_compat.goes_direct(self.route):
            return self._call_direct(req, attempts)
        litellm = litellm_module()
        kwargs = dict(req)
        kwargs.update(num_retries=0)
        api_key = self._api_key()
        if api_key is not None:
            kwargs["api_key"] = api_key
        if kwargs.get("api_base") is None:
            kwargs.pop("api_base")
        transient = _transient_types(litellm)
        retrying = self._retrying(
            lambda e: isinstance(e, transient) and not _route_fatal(litellm, e), attempts
        )

        def attempt() -> Any:
            return self.limiter.call(litellm.completion, **kwargs, timeout=attempts.timeout())

        try:
            resp = retrying(attempt)
        except RetryError as exc:
            raise self._gave_up(exc, attempts) from None
        except litellm.ContextWindowExceededError as exc:
            raise ContextWindowExceeded(f"{self.route_name}: {_short(exc)}") from None
        except Exception as exc:
            err = ModelError(f"{self.route_name}: {_describe(exc)}")
            raise (self._down(err) if _route_fatal(litellm, exc) else err) from None
        return self._to_completion(litellm, resp)

    def _call_direct(self, req: dict[str, Any], attempts: _Attempts) -> Completion:
        """An OpenAI-compatible server, over HTTP without litellm (design 282)."""
        api_key = self._api_key()
        retrying = self._retrying(
            lambda e: isinstance(e, openai_compat.TransientHTTPError), attempts
        )

        def attempt() -> Any:
            return self.limiter.call(
                openai_compat.chat,
                session=http_session(),
                route=self.route,
                req=req,
                api_key=api_key,
                timeout=attempts.timeout(),
            )

        try:
            data = retrying(attempt)
        except RetryError as exc:
            raise self._gave_up(exc, attempts) from None
        except ContextWindowExceeded as exc:
            raise ContextWindowExceeded(f"{self.route_name}: {exc.message}") from None
        except health.RouteDown as exc:
            raise self._down(
                ModelError(f"{self.route_name}: {exc.message}", hint=exc.hint)
            ) from None
        except ModelError as exc:
            raise ModelError(f"{self.route_name}: {exc.message}", hint=exc.hint) from None
        except Exception as exc:  # an unusual transport failure
            raise ModelError(f"{self.route_name}: {type(exc).__name__}: {_short(exc)}") from None
        return self._to_completion(None, data)

    def _gave_up(self, exc: RetryError, attempts: _Attempts) -> ModelError:
        last = exc.last_attempt.exception()
        n = exc.last_attempt.attempt_number
        why = " (the trial's time limit)" if attempts.out_of_time else ""
        return ModelError(
            f"{self.route_name}: gave up after {n} attempt{'s' * (n != 1)}{why}: "
            f"{type(last).__name__}: {_short(last)}"
        )

    def _retrying(
        self, transient: Callable[[BaseException], bool], attempts: _Attempts
    ) -> Retrying:
        backoff = wait_exponential_jitter(
            multiplier=self.backoff_initial, max=self.backoff_max, jitter=self.backoff_initial
        )

        def wait(state: RetryCallState) -> float:
            asked = retry_after(state.outcome.exception() if state.outcome else None)
            if asked is None:
                return float(backoff(state))
            asked = min(asked, MAX_RETRY_AFTER)
            self.limiter.hold_off(asked)  # the route's other calls wait too
            return asked

        return Retrying(
            retry=retry_if_exception(transient),
            stop=stop_after_attempt(self.max_retries + 1) | attempts,
            wait=wait,
            before_sleep=attempts.report,
            reraise=False,
        )

    def _to_completion(self, litellm: Any, resp: Any) -> Completion:
        """``resp``: litellm's response object, or (``litellm`` None) a direct call's JSON."""
        choice = _field(resp, "choices")[0]
        msg = _field(choice, "message")
        usage = _field(resp, "usage")
        inp = int(_field(usage, "prompt_tokens") or 0)
        out = int(_field(usage, "completion_tokens") or 0)
        return Completion(
            content=_field(msg, "content"),
            tool_calls=parse_tool_calls(_field(msg, "tool_calls")),
            finish_reason=_field(choice, "finish_reason"),
            model=_field(resp, "model"),
            input_tokens=inp,
            output_tokens=out,
            usd=self._cost(litellm, resp, inp, out),
        )

    def _cost(self, litellm: Any, resp: Any, inp: int, out: int) -> float | None:
        """The route's prices, else litellm's price map (None when it has none). ``litellm``
        None: ``resp`` is a direct call's JSON, priced by its token counts."""
        r = self.route
        if r.input_cost_per_token is not None and r.output_cost_per_token is not None:
            return inp * r.input_cost_per_token + out * r.output_cost_per_token
        try:
            if litellm is None:
                prompt, completion = litellm_module().cost_per_token(
                    model=r.model, prompt_tokens=inp, completion_tokens=out
                )
                return float(prompt) + float(completion)
            return float(litellm.completion_cost(completion_response=resp, model=r.model))
        except Exception:
            return None


#: Seconds an attempt needs at least; a retry that would start with less left is not made.
MIN_ATTEMPT_SEC = 1.0


class _Attempts(stop_base):
    """One call's attempts: bounded by the caller's ``time_left`` (as a tenacity stop
    condition) and reported one line each to ``on_retry`` (:meth:`ModelClient.complete`)."""

    def __init__(
        self,
        client: ModelClient,
        time_left: Callable[[], float] | None,
        on_retry: Callable[[str], None] | None,
    ) -> None:
        self.client = client
        self.time_left = time_left
        self.on_retry = on_retry
        self.out_of_time = False

    def timeout(self) -> float:
        """This attempt's timeout: the route's, cut to the time the caller has left."""
        limit = float(self.client.route.timeout)
        if self.time_left is None:
            return limit
        return max(MIN_ATTEMPT_SEC, min(limit, self.time_left()))

    def __call__(self, state: RetryCallState) -> bool:
        """Stop when the next attempt, after its wait, would start out of time."""
        if self.time_left is None:
            return False
        self.out_of_time = self.time_left() - state.upcoming_sleep < MIN_ATTEMPT_SEC
        return self.out_of_time

    def report(self, state: RetryCallState) -> None:
        if self.on_retry is None:
            return
        exc = state.outcome.exception() if state.outcome else None
        self.on_retry(
            f"{self.client.route_name}: attempt {state.attempt_number} failed: "
            f"{type(exc).__name__}: {_short(exc)}; retrying in {state.upcoming_sleep:.1f} s"
        )


def _route_fatal(litellm: Any, exc: BaseException) -> bool:
    """Does litellm's ``exc`` say the route cannot work (health module)? A refused
    connection or unknown host, or 401/403/404."""
    fatal = (litellm.AuthenticationError, litellm.PermissionDeniedError, litellm.NotFoundError)
    if isinstance(exc, fatal):
        return True
    if not isinstance(exc, litellm.APIConnectionError):
        return False
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError):
            return True
        cause = cause.__cause__ or cause.__context__
    text = str(exc).lower()
    return any(
        s in text
        for s in ("connection refused", "name or service not known", "nodename nor servname")
    )


def _describe(exc: BaseException) -> str:
    """``Type: first line`` of a provider error; the simulator's own refusals as they are
    (``sim/student models only ...``)."""
    text = _short(exc)
    if getattr(exc, "llm_provider", None) in ("sim", "local"):
        return text.split(": ", 1)[1] if text.startswith("litellm.") else text
    return f"{type(exc).__name__}: {text}"


def _field(obj: Any, name: str) -> Any:
    """``obj[name]`` of a JSON object, ``obj.name`` of litellm's objects (None: absent)."""
    return obj.get(name) if isinstance(obj, dict) else getattr(obj, name, None)


def _short(exc: BaseException | None) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


__all__ = [
    "MAX_RETRY_AFTER",
    "ModelClient",
    "RouteLimiter",
    "http_session",
    "litellm_module",
    "model_keys",
    "parse_tool_calls",
    "retry_after",
    "route_limiter",
    "warm_litellm",
]
