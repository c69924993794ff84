"""Agents that act in a trial: the built-in tool-calling loop over litellm, the oracle
(the task's reference solution) and a no-op agent for overhead measurements.

- :mod:`.base` — the :class:`~skillci.agents.base.Agent` protocol, its context and result.
- :mod:`.workspace` — file tools confined to the trial workspace.
- :mod:`.tools` — tool schemas (versioned, hashed) and their execution.
- :mod:`.prompt` — the system prompt with the skill bootstrap.
- :mod:`.loop` — :class:`~skillci.agents.loop.BuiltinAgent`.
- :mod:`.oracle` — :class:`~skillci.agents.oracle.OracleAgent`, :class:`~skillci.agents.oracle.NoopAgent`.

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.providers``,
``skillci.skill``, ``skillci`` (``__version__``), ``skillci.trace`` (docs/architecture.md;
checked by tests/unit/test_architecture.py).
"""
