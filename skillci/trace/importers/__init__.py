"""Import trials run by other harnesses into :class:`~skillci.trace.models.RunRecord`.

- :mod:`.common` — what every importer shares: stable run ids, timestamps, the verdict rules.
- :mod:`.benchflow` — BenchFlow 0.7 job dirs (``result.json`` + ``acp_trajectory.jsonl``).
- :mod:`.harbor` — Harbor job dirs (``result.json`` TrialResult + ATIF ``trajectory.json``).
- :mod:`.claude_code` — Claude Code session logs (``<session id>.jsonl``), through ATIF.
- :mod:`.codex` — Codex CLI rollouts (``sessions/YYYY/MM/DD/rollout-*.jsonl``), through ATIF.
- :mod:`.opencode` — OpenCode sessions (its SQLite ``opencode.db``), through ATIF.

A trial whose files are missing, unreadable or partial is imported with an explicit state
(``infra_error``, ``timeout``, ``verifier_error``) and a warning — never as a pass or a fail
that nobody verified.
"""
