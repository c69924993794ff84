"""Where trials execute, and how many.

- :mod:`.base` — :class:`~skillci.runners.base.TrialSpec` (what determines a trial), the
  :class:`~skillci.runners.base.Runner` protocol, the trial cache key.
- :mod:`.sandbox` — bubblewrap (or a loudly-recorded plain subprocess) for every command.
- :mod:`.trialdir` — trial dir layout, the completeness check, ``.incomplete/`` quarantine.
- :mod:`.local` — :class:`~skillci.runners.local.LocalRunner`: workspace copy, agent,
  verifier, run record.
- :mod:`.scheduler` — repeats, parallel trials, the trial cache, per-command budgets.

May import: ``skillci.agents``, ``skillci.errors``, ``skillci.fsutil``,
``skillci.providers``, ``skillci.skill``, ``skillci`` (``__version__``), ``skillci.tasks``,
``skillci.trace`` (docs/architecture.md; checked by tests/unit/test_architecture.py).
"""
