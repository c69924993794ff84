"""Git access: every git write goes through :class:`skillci.vcs.git.Git`.

May import: ``skillci.errors``, ``skillci.fsutil`` (docs/architecture.md; checked by
tests/unit/test_architecture.py).
"""
