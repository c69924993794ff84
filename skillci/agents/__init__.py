"""Agents that act in a trial: the built-in tool-calling loop over litellm, the oracle
(the task's reference solution), a no-op agent for overhead measurements, and real agents
(Claude Code, Codex, OpenCode) run through their headless CLI.

- :mod:`.base` — the :class:`~skillci.agents.base.Agent` protocol, its context and result.
- :mod:`.workspace` — file tools confined to the trial workspace (the ``Files`` protocol);
  :mod:`.shellfiles` the same tools through the trial's shell (a workspace in a remote
  container: Harbor).
- :mod:`.tools` — tool schemas (versioned, hashed) and their execution.
- :mod:`.prompt` — the system prompt with the skill bootstrap.
- :mod:`.loop` — :class:`~skillci.agents.loop.BuiltinAgent`.
- :mod:`.oracle` — :class:`~skillci.agents.oracle.OracleAgent`, :class:`~skillci.agents.oracle.NoopAgent`.
- :mod:`.registry` — every agent by name (``--agent``; entry points ``skillci.agents``).
- :mod:`.headless` — real agents through their headless CLI; :mod:`.real` one adapter per
  agent (Claude Code, Codex, OpenCode); :mod:`.install` the npm install cache.

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.providers``,
``skillci.skill``, ``skillci`` (``__version__``), ``skillci.trace`` (docs/architecture.md;
checked by tests/unit/test_architecture.py).
"""
