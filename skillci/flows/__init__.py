"""Flows: load (adapters) -> decide (pure core) -> act (adapters), one module per command.

The CLI calls these; they compose the domain packages (skill, patch, tasks, runners, trace,
analyze, compile, gate, vcs, forge, release) and own no data shapes of their own beyond
their results.
"""
