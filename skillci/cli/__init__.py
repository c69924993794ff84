"""The command line: Typer commands that parse arguments, call one flow and render its
result (rich tables, ``--json``). One module per command family (``cli/<family>.py``),
registered in :mod:`skillci.cli.main`; the choices a user types come from the registries
(:mod:`skillci.cli.choices`, through :mod:`skillci.flows.plugins`). A command's module is imported only when it runs and rich
only on first use (:mod:`skillci.cli.output`), so ``skillci --help`` and ``trace ls`` start
fast (benchmarks/cli_startup.py).

May import: ``skillci.errors``, ``skillci.flows``, ``skillci.fsutil``, ``skillci.present``
and ``skillci.version`` — no domain package: the work is in ``flows/``, which re-exports the
shapes a command renders (docs/architecture.md, design 420; checked by
tests/unit/test_architecture.py).
"""
