"""Pull requests: the Forge protocol and its implementations (LocalForge, GitHubForge).

- :mod:`.base` — the :class:`~skillci.forge.base.Forge` protocol callers type against (PRs,
  comments, statuses, ``upsert_pr`` by patch id, and where branches/tags/channel refs live)
  and the ``PullRequest`` shapes.
- :mod:`.local` — LocalForge: PRs recorded inside the repository itself.
- :mod:`.github` (PRs), :mod:`.github_refs` (branches, tags, channel refs),
  :mod:`.github_repo`, :mod:`.github_push`, :mod:`.github_retry`, :mod:`.github_env` —
  GitHubForge through PyGithub; :mod:`.actions` — GitHub Actions' files (event payload,
  step outputs, job summary); :mod:`.select` — which forge a command uses.

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.trace`` (redaction),
``skillci.vcs`` (docs/architecture.md;
checked by tests/unit/test_architecture.py).
"""
