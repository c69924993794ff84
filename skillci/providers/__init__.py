"""Model providers: how skillci reaches a model (the adapter for every model call).

- :mod:`.routes` — ``provider_routes.json`` (route name -> litellm model, api base, limits).
- :mod:`.client` — :class:`~skillci.providers.client.ModelClient`, the one place litellm is
  called (imported lazily); :mod:`.cache` its response cache; :mod:`.budget` per-command
  token/cost budgets; :mod:`.types` the call's result shapes.
- :mod:`.reward_model` — the fast path's reward-model contract.
- :mod:`.gateway` — the loopback model gateway real agents talk to (keys stay here);
  :mod:`.wire` the agents' wire formats to and from one chat call.
- :mod:`.sim` — the embedded deterministic simulated models (``sim/student``,
  ``sim/teacher``) registered as a litellm custom provider.

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.trace.models``,
``skillci.skill.tokens`` and
itself. Never flows/ or cli/. Not to be confused with the ``models.py`` modules of other
packages, which hold pydantic data shapes.
"""
