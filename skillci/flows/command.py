"""What every command family shares around its flow, for the command line: where its state
lives (``default_home``, ``find_repo_root``: the trace store's home), the sandbox policy a
``--sandbox`` names (``use_policy``), the per-command memo of failed model routes
(``reset_routes``, design 301), and GitHub Actions' step outputs, job summary and event
(``set_output``, ``add_summary``, ``read_event``). Light imports only: ``trace ls`` and
every command load this (docs/design/420)."""

from __future__ import annotations

from skillci.forge.actions import add_summary, read_event, set_output
from skillci.providers.health import reset as reset_routes
from skillci.runners.policy import POLICIES, use_policy
from skillci.trace.index import default_home, find_repo_root

__all__ = [
    "POLICIES",
    "add_summary",
    "default_home",
    "find_repo_root",
    "read_event",
    "reset_routes",
    "set_output",
    "use_policy",
]
