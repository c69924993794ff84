"""``skillci resolve``: which skill version a deployment loads for a request (the
deployment API, :mod:`skillci.runtime`)."""

from __future__ import annotations

from skillci.runtime import Resolution, resolve

__all__ = ["Resolution", "resolve"]
