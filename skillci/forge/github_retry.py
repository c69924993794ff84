"""Retries and error messages for GitHub API calls.

- Rate limits (403/429 carrying ``retry-after``, or ``x-ratelimit-remaining: 0`` with
  ``x-ratelimit-reset``, or GitHub's rate-limit messages) are waited out and retried,
  whatever the method: GitHub did not process the request.
- 5xx and connection errors are retried with exponential backoff only for calls marked
  idempotent; a POST that may have been applied is not blindly repeated.
- Everything else becomes one :class:`~skillci.errors.ForgeError` (or ``ConflictError``)
  line that says what skillci was doing and, for 403/404, which permission the token
  needs — taken from GitHub's ``x-accepted-github-permissions`` header when it sends one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, TypeVar

import requests
from github.GithubException import GithubException, RateLimitExceededException
from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt

from skillci.errors import ConflictError, ForgeError, SkillciError

log = logging.getLogger(__name__)
T = TypeVar("T")

# GitHub's advice for secondary rate limits without headers: wait at least a minute.
SECONDARY_LIMIT_WAIT = 60.0


@dataclass(frozen=True)
class Op:
    """What a call does, for error messages: ``what`` and the permission it needs."""

    what: str
    permission: str


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. ``sleep`` is injectable so tests do not wait."""

    attempts: int = 5
    base_delay: float = 1.0
    max_delay: float = 30.0
    max_rate_limit_wait: float = 300.0
    sleep: Callable[[float], None] = time.sleep


def _headers(exc: GithubException) -> dict[str, str]:
    return {k.lower(): str(v) for k, v in (exc.headers or {}).items()}


def _message(exc: GithubException) -> str:
    data = exc.data
    if isinstance(data, dict):
        msg = str(data.get("message") or "")
        details = []
        for e in data.get("errors") or []:
            if isinstance(e, dict):
                details.append(
                    str(e.get("message") or f"{e.get('field', '?')} {e.get('code', 'invalid')}")
                )
            else:
                details.append(str(e))
        if details:
            msg = f"{msg}: {'; '.join(details)}" if msg else "; ".join(details)
        return msg
    if isinstance(data, (str, bytes)) and data:
        return data.decode(errors="replace") if isinstance(data, bytes) else data
    return exc.message or ""


def github_message(exc: GithubException) -> str:
    """GitHub's own message (and validation details) from an error response."""
    return _message(exc)


def rate_limit_wait(exc: BaseException, now: float | None = None) -> float | None:
    """Seconds GitHub asks us to wait before retrying, or None if not rate limited."""
    if not isinstance(exc, GithubException) or exc.status not in (403, 429):
        return None
    h = _headers(exc)
    now = time.time() if now is None else now
    if "retry-after" in h:
        try:
            return max(0.0, float(h["retry-after"]))
        except ValueError:
            return SECONDARY_LIMIT_WAIT
    if h.get("x-ratelimit-remaining") == "0" and "x-ratelimit-reset" in h:
        try:
            return max(0.0, float(h["x-ratelimit-reset"]) - now) + 1.0
        except ValueError:
            return SECONDARY_LIMIT_WAIT
    if isinstance(exc, RateLimitExceededException) or exc.status == 429:
        return SECONDARY_LIMIT_WAIT
    return None


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, GithubException):
        return exc.status >= 500
    return isinstance(exc, (requests.ConnectionError, requests.Timeout))


def call(op: Op, fn: Callable[[], T], policy: RetryPolicy, *, idempotent: bool = True) -> T:
    """Run ``fn`` (one API request, ideally) with retries; raise GithubException on failure.

    Mapping to skillci errors is left to the caller (:func:`to_error`), so callers can
    handle statuses that are answers (404 for "absent", 422 for "already exists").
    """

    def should_retry(exc: BaseException) -> bool:
        wait = rate_limit_wait(exc)
        if wait is not None:
            return wait <= policy.max_rate_limit_wait
        return idempotent and _transient(exc)

    def wait(state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        rl = rate_limit_wait(exc) if exc else None
        if rl is not None:
            return rl
        return float(min(policy.max_delay, policy.base_delay * 2 ** (state.attempt_number - 1)))

    def before_sleep(state: RetryCallState) -> None:
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "%s: %s; retrying (attempt %d of %d)",
            op.what,
            _describe(exc),
            state.attempt_number + 1,
            policy.attempts,
        )

    retrying = Retrying(
        stop=stop_after_attempt(policy.attempts),
        wait=wait,
        retry=retry_if_exception(should_retry),
        sleep=policy.sleep,
        before_sleep=before_sleep,
        reraise=True,
    )
    return retrying(fn)


def _describe(exc: BaseException | None) -> str:
    if isinstance(exc, GithubException):
        return f"GitHub answered {exc.status} {_message(exc)}".strip()
    return repr(exc)


def to_error(op: Op, exc: BaseException, *, base_url: str = "") -> SkillciError:
    """One skillci error line for a failed GitHub call."""
    if not isinstance(exc, GithubException):
        return ForgeError(
            f"{op.what}: cannot reach GitHub{f' at {base_url}' if base_url else ''}: {exc}",
            hint="check the network and GITHUB_API_URL",
        )
    status, msg, h = exc.status, _message(exc), _headers(exc)
    detail = f" ({msg})" if msg else ""
    wait = rate_limit_wait(exc)
    if wait is not None:
        reset = datetime.fromtimestamp(time.time() + wait, UTC).strftime("%H:%M:%S UTC")
        return ForgeError(
            f"{op.what}: GitHub rate limit exceeded{detail}; it resets around {reset}",
            hint="wait for the reset, or use a GitHub App installation token (higher limits)",
        )
    accepted = h.get("x-accepted-github-permissions")
    needs = f"'{op.permission}'" + (f" (GitHub accepts: {accepted})" if accepted else "")
    if status == 401:
        return ForgeError(
            f"{op.what}: GitHub rejected the token (401{detail})",
            hint="set GITHUB_TOKEN to a valid token for this GitHub host",
        )
    if status == 403:
        return ForgeError(
            f"{op.what}: forbidden (403{detail}); the token needs {needs}",
            hint="grant it in the workflow's `permissions:` block, the App's settings, "
            "or the fine-grained token (see docs/github.md)",
        )
    if status == 404:
        return ForgeError(
            f"{op.what}: not found (404{detail}): it does not exist, or the token cannot "
            f"see it (needs {needs})",
            hint="check GITHUB_REPOSITORY and the token's repository access",
        )
    if status == 409:
        return ConflictError(f"{op.what}: conflict (409{detail})")
    if status == 422:
        return ForgeError(
            f"{op.what}: GitHub refused the request (422{detail})",
            hint="the named field is invalid for GitHub",
        )
    return ForgeError(f"{op.what}: GitHub answered {status}{detail}")


def status_of(exc: BaseException) -> int | None:
    return exc.status if isinstance(exc, GithubException) else None


def data_of(exc: BaseException) -> Any:
    return exc.data if isinstance(exc, GithubException) else None
