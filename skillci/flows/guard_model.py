"""The guard classifiers' model calls (``--guard-model ROUTE``, repeatable; designs 407, 458).

The decision is pure (:mod:`skillci.patch.second_opinion`); this module resolves the route
and calls it through :class:`~skillci.providers.client.ModelClient` (retries, budget, cost,
and the response cache when a state dir is given: the same patch is never paid twice).
An unknown route is invalid input (exit 2) before anything runs; a failing call is not an
error of the command but a recorded, cautious opinion.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from skillci.patch.models import Patch
from skillci.patch.second_opinion import GuardCall, GuardOpinion, GuardReply, second_opinion


class GuardModel:
    """One classifier route for a command (resolved once; ``ConfigError`` when unknown)."""

    def __init__(self, route_name: str, state_dir: Path | None = None) -> None:
        from skillci.providers.budget import BudgetMeter
        from skillci.providers.cache import ResponseCache
        from skillci.providers.client import ModelClient
        from skillci.providers.routes import resolve_route

        self.route_name = route_name
        cache = ResponseCache(state_dir / "model-cache") if state_dir is not None else None
        self.client = ModelClient(
            route_name,
            resolve_route(route_name),
            meter=BudgetMeter(name="guard-model"),
            cache=cache,
            use_cache=cache is not None,
        )

    def call(self) -> GuardCall:
        def ask(messages: list[dict[str, Any]]) -> GuardReply:
            return self.client.complete(messages, seed=0)

        return ask

    def opinion(self, patch: Patch, *, untrusted_texts: int = 0) -> GuardOpinion:
        return second_opinion(patch, self.call(), self.route_name, untrusted_texts=untrusted_texts)


def guard_models(routes: Sequence[str], state_dir: Path | None = None) -> list[GuardModel]:
    """One :class:`GuardModel` per route, in the order given, a route named twice asked once;
    every route is resolved before any is asked (an unknown one is invalid input, exit 2)."""
    return [GuardModel(r, state_dir) for r in dict.fromkeys(routes)]


__all__ = ["GuardModel", "guard_models"]
