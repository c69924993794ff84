"""Run records of trials, their redaction and their store (``.skillci/`` by default).

Import the shapes from :mod:`skillci.trace.models`, the store from
:mod:`skillci.trace.store` and redaction from :mod:`skillci.trace.redact`.

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.tasks`` (docs/architecture.md;
checked by tests/unit/test_architecture.py).
"""
