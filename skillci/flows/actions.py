"""GitHub Actions around a command, for the command line: its step outputs, job summary and
triggering event (``skillci.forge.actions``; each a no-op outside Actions)."""

from __future__ import annotations

from skillci.forge.actions import add_summary, read_event, set_output

__all__ = ["add_summary", "read_event", "set_output"]
