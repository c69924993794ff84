"""Route health: a route that cannot work fails once per command, not once per trial.

Some model failures say the route itself is unusable, whatever the request: its API key is
not set, the server refuses the connection or its host does not resolve, it answers 401,
403 or 404 (a wrong key, no access, no such model). Retrying them only delays the error
(a refused connection on loopback took 17 s through the backoff) and every later trial of
the command would fail the same way. So the first such failure is memoised here, per route
(its name and :meth:`~skillci.providers.routes.ModelRoute.fingerprint`), and every later
call on that route in this command raises the same :class:`~skillci.errors.ModelError` at
once, without a request (docs/design/301).

The memo lives for one command: :func:`skillci.cli.main.main` calls :func:`reset` before
each one, so that a command run after the key is exported (or the server started) in the
same process calls the model again.
"""

from __future__ import annotations

import threading

from skillci.errors import ModelError

#: HTTP statuses that mean the route, not the request, is wrong.
FATAL_STATUS = frozenset({401, 403, 404})

_DOWN: dict[tuple[str, str], ModelError] = {}
_LOCK = threading.Lock()


class RouteDown(ModelError):
    """The route cannot work in this command (no key, refused, unauthorised): not retried."""

    default_hint = "check the route in provider_routes.json, its server and its API key env var"


def check(route_name: str, fingerprint: str) -> None:
    """Raise the memoised failure of the route, if it failed fatally in this command."""
    with _LOCK:
        down = _DOWN.get((route_name, fingerprint))
    if down is not None:
        raise RouteDown(down.message, hint=down.hint)


def mark_down(route_name: str, fingerprint: str, err: ModelError) -> RouteDown:
    """Remember that the route failed fatally with ``err`` (the first cause is kept);
    returns the error to raise."""
    with _LOCK:
        first = _DOWN.setdefault((route_name, fingerprint), err)
    return RouteDown(first.message, hint=first.hint)


def down_routes() -> dict[str, str]:
    """Route name -> first cause, of the routes that failed fatally in this command."""
    with _LOCK:
        return {name: err.message for (name, _), err in _DOWN.items()}


def reset() -> None:
    """Forget every route's failure (a new command starts)."""
    with _LOCK:
        _DOWN.clear()


__all__ = ["FATAL_STATUS", "RouteDown", "check", "down_routes", "mark_down", "reset"]
