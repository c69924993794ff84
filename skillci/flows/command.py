"""What every command shares around its flow, for the command line: where its state lives
(``default_home``, ``find_repo_root``: the trace store's home) and the per-command memo of
failed model routes (``reset_routes``, design 301). Light imports only (no typing, no
pydantic): ``skillci.cli.main`` loads this for every command, ``trace ls`` included
(docs/design/420)."""

from __future__ import annotations

from skillci.providers.health import reset as reset_routes
from skillci.trace.index import default_home, find_repo_root

__all__ = ["default_home", "find_repo_root", "reset_routes"]
