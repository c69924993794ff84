"""Where trials execute, and how many.

- :mod:`.base` — :class:`~skillci.runners.base.TrialSpec` (what determines a trial), the
  :class:`~skillci.runners.base.Runner` protocol, the trial cache key.
- :mod:`.sandbox` — bubblewrap (or a loudly-recorded plain subprocess) for every command.
- :mod:`.trialdir` — trial dir layout, the completeness check, ``.incomplete/`` quarantine.
- :mod:`.registry` — every runner and sandbox by name (entry points ``skillci.runners``,
  ``skillci.sandboxes``): the one dispatch from a trial mode to its runner.
- :mod:`.local` — :class:`~skillci.runners.local.TrialRunner` (the trial template a runner
  fills in) and :class:`~skillci.runners.local.LocalRunner`: workspace copy, agent,
  verifier, run record.
- :mod:`.pool` — what every trial scheduler shares: the worker pool whose workers die with
  the command (even under SIGKILL), ``.incomplete/`` quarantine, the cap on trials.
- :mod:`.scheduler` — repeats, parallel trials, the trial cache, per-command budgets
  (``eval run``, the gate, ``evals run``).
- :mod:`.slots` — trials in named ``test-NNN`` dirs of a run dir, resumable (the compile
  pipeline's eval stages and Deep's rollouts).
- :mod:`.docker`, :mod:`.benchflow`, :mod:`.harbor`, :mod:`.cliparse` — other runners and
  external harness CLIs. :mod:`.harness_remote` is what running a command's trials on a
  harness shares; :mod:`.harbor_remote` runs them on Harbor's environments,
  :mod:`.benchflow_remote` on BenchFlow's docker sandbox; :mod:`.harbor_builtin` runs
  skillci's built-in agent on Harbor (the loop here, its commands in the container, through
  :mod:`.harbor_env.builtin_agent`).

May import: ``skillci.agents``, ``skillci.errors``, ``skillci.fsutil``,
``skillci.providers``, ``skillci.skill``, ``skillci`` (``__version__``), ``skillci.tasks``,
``skillci.trace`` (docs/architecture.md; checked by tests/unit/test_architecture.py).
"""
