"""Run records of trials, their redaction and their store (``.skillci/`` by default).

Import the shapes from :mod:`skillci.trace.models`, the store from
:mod:`skillci.trace.store` and redaction from :mod:`skillci.trace.redact`. A record as
OpenTelemetry spans: :mod:`skillci.trace.otel` (pure), sent or written as OTLP by
:mod:`skillci.trace.otlp` (the optional ``otel`` extra, imported lazily).

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.tasks`` (docs/architecture.md;
checked by tests/unit/test_architecture.py).
"""
