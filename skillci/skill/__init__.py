"""Skill packages: ``SkillPackage``, ``Rule``, ``Manifest``; load/save byte-exact; lint;
render; tokens.

May import: ``skillci.errors``, ``skillci.fsutil`` (docs/architecture.md; checked by
tests/unit/test_architecture.py).
"""
