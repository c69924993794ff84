"""Releases, channels, canary analysis and rollback.

Pure parts (no git, no I/O): :mod:`skillci.release.changelog` (the changelog entry from a
ChangeList and a GateReport), :mod:`skillci.release.compat` (compatibility matrix and
COMPATIBILITY.md), :mod:`skillci.release.manifest_text` (textual manifest edits),
:mod:`skillci.release.promote` (rule lifecycle candidate -> active),
:mod:`skillci.release.canary` (canary vs stable verdict, request bucketing) and the saved
shapes in :mod:`skillci.release.models`.

Adapters: :mod:`skillci.release.channels` (channel refs and their append-only log, moved
with compare-and-swap), :mod:`skillci.release.tags` (release tags) and
:mod:`skillci.release.production` (ingest of production run records).

Design: docs/design/080-089, user guide: docs/release.md.

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.gate``, ``skillci.patch``,
``skillci.skill``, ``skillci.trace``, ``skillci.vcs`` (docs/architecture.md; checked by
tests/unit/test_architecture.py).
"""
