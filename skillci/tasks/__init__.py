"""Evaluation tasks (SkillsBench/Harbor and BenchFlow layouts), suites/splits and rewards.

Shapes live in :mod:`skillci.tasks.models`; loading in :mod:`skillci.tasks.loader`,
suites and the sealed final split in :mod:`skillci.tasks.suites`, the reward convention and
the ``/logs`` mapping in :mod:`skillci.tasks.reward`. See docs/tasks.md.

May import: ``skillci.errors``, ``skillci.fsutil`` (docs/architecture.md; checked by
tests/unit/test_architecture.py).
"""
