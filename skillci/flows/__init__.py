"""Flows: load (adapters) -> decide (pure core) -> act (adapters), one module per command.

The CLI calls these; they compose the domain packages (skill, patch, tasks, runners, trace,
analyze, compile, gate, vcs, forge, release) and own no data shapes of their own beyond
their results. :class:`~skillci.flows.context.RepoContext` opens the adapters (git, trace
store, forge, worktrees). Command families: ``propose``; ``review``/``gate``/``gate_shard``
(evals plan/run/merge); ``release``; ``canary``/``canary_ci``; ``pr_open``; ``evalrun``
(``eval run``); ``rawtask`` (``eval raw-task``); ``pipeline/`` (``pipeline`` and
``compile static|fast|deep``); ``demo``.

May import: ``skillci.agents``, ``skillci.analyze``, ``skillci.compile``,
``skillci.errors``, ``skillci.forge``, ``skillci.fsutil``, ``skillci.gate``,
``skillci.patch``, ``skillci.providers``, ``skillci.release``, ``skillci.runners``,
``skillci.runtime``, ``skillci.schemas``, ``skillci.skill``, ``skillci`` (``__version__``),
``skillci.tasks``, ``skillci.trace``, ``skillci.vcs`` (docs/architecture.md; checked by
tests/unit/test_architecture.py). The CLI imports no domain package: the shapes a command
renders are re-exported by its family's flow, the registries read through ``plugins``
(design 420).
"""
