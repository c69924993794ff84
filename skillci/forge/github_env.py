"""GitHubForge and ``git fetch/push`` to GitHub, configured from the environment.

- :func:`forge_from_env`: :meth:`GitHubForge.from_env`, with PyGithub's pause between
  requests (0.25 s, writes 1 s — GitHub's advice against secondary rate limits) unless
  ``SKILLCI_GITHUB_THROTTLE=off`` (tests against a loopback fake; GitHub Enterprise
  instances without secondary limits).
- :func:`git_auth_env`: ``git`` talks to GitHub with ``GITHUB_TOKEN`` the way
  ``actions/checkout`` does (an ``http.<server>/.extraheader``), passed through
  ``GIT_CONFIG_*`` variables so the token is neither written to ``.git/config`` nor shown
  on a command line. Workflows check out with ``persist-credentials: false``.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from skillci.vcs.git import Git

if TYPE_CHECKING:
    from skillci.forge.github import GitHubForge

THROTTLE_VAR = "SKILLCI_GITHUB_THROTTLE"
DEFAULT_SERVER = "https://github.com"


def forge_from_env(env: Mapping[str, str] | None = None, **kw: Any) -> GitHubForge:
    from skillci.forge.github import GitHubForge

    env = os.environ if env is None else env
    if env.get(THROTTLE_VAR, "").lower() in ("off", "0", "false", "no"):
        kw.setdefault("seconds_between_requests", None)
        kw.setdefault("seconds_between_writes", None)
    return GitHubForge.from_env(env=env, **kw)


def open_github(git: Git) -> GitHubForge:
    """The ``github`` entry of :mod:`skillci.forge.registry` (the repository comes from
    ``$GITHUB_REPOSITORY``, not from ``git``)."""
    return forge_from_env()


def git_auth_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """``GIT_CONFIG_*`` variables that authenticate git's HTTPS requests to GitHub."""
    env = os.environ if env is None else env
    token = env.get("GITHUB_TOKEN")
    if not token:
        return {}
    server = (env.get("GITHUB_SERVER_URL") or DEFAULT_SERVER).rstrip("/")
    basic = base64.b64encode(f"x-access-token:{token}".encode()).decode()
    n = int(env.get("GIT_CONFIG_COUNT") or 0)
    return {
        "GIT_CONFIG_COUNT": str(n + 1),
        f"GIT_CONFIG_KEY_{n}": f"http.{server}/.extraheader",
        f"GIT_CONFIG_VALUE_{n}": f"AUTHORIZATION: basic {basic}",
    }


def fetch(git: Git, refspecs: Sequence[str], *, remote: str = "origin") -> None:
    """``git fetch`` from GitHub (the checked-out branch may move: skillci reads through
    plumbing, never the work tree)."""
    git.write(
        "fetch", "--quiet", "--no-tags", "--update-head-ok", remote, *refspecs, env=git_auth_env()
    )


def push(git: Git, refspecs: Sequence[str], *, remote: str = "origin") -> None:
    """``git push`` to GitHub; never forced (a moved ref is a conflict to resolve)."""
    if refspecs:
        git.write("push", "--quiet", "--atomic", remote, *refspecs, env=git_auth_env())
