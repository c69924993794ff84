"""The command line: Typer commands that parse arguments, call one flow and render its
result (rich tables, ``--json``). One module per command family (``cli/<family>.py``),
registered in :mod:`skillci.cli.main`; the choices a user types come from the registries
(:mod:`skillci.cli.choices`). A command's module is imported only when it runs and rich
only on first use (:mod:`skillci.cli.output`), so ``skillci --help`` and ``trace ls`` start
fast (benchmarks/cli_startup.py).

May import: ``skillci.errors``, ``skillci.flows``, ``skillci.forge``, ``skillci.fsutil``,
``skillci.gate``, ``skillci.graders``, ``skillci.present``, ``skillci.providers``,
``skillci.release``, ``skillci.runners``, ``skillci.schemas``, ``skillci.skill``,
``skillci.tasks``, ``skillci.trace``, ``skillci.vcs``, ``skillci.version`` and the package
root (docs/architecture.md; checked by tests/unit/test_architecture.py). The goal is
``flows`` only: the list shrinks as commands gain flows.
"""
