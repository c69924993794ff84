"""The sandbox policy: may task code run on this machine, and how isolated?

Every command that runs task code takes ``--sandbox required|auto|none``
(docs/design/310-sandbox-policy.md):

- ``required``: trials run in a sandbox (bubblewrap, or the Docker runner) or not at all.
  The default when the ``CI`` environment variable is set.
- ``auto`` (the default elsewhere): bubblewrap when it works; without it, only the tasks
  bundled with skillci (the demo's) run, unsandboxed and said so; third-party task code is
  refused with the fix.
- ``none``: no sandbox, the user accepts the risk.

``SKILLCI_SANDBOX`` sets the default for a project (a workflow's ``env:``). The command
sets the policy once (:func:`use_policy`; ``main`` forgets it after the command);
:func:`sandbox_for` applies it where trials are
planned (:func:`skillci.runners.base.plan`), before anything runs. The policy never changes
a trial's cache key: ``required`` keeps the mode ``auto`` (which resolves to bubblewrap).
"""

from __future__ import annotations

import functools
import logging
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:
    from skillci.tasks.models import Task

SandboxPolicy = Literal["required", "auto", "none"]
POLICIES: tuple[str, ...] = get_args(SandboxPolicy)
ENV_VAR = "SKILLCI_SANDBOX"

FIX = (
    "install bubblewrap (apt-get install bubblewrap), use Docker (--sandbox docker on eval "
    "run), or pass --sandbox none to accept the risk"
)
BUNDLED_UNSANDBOXED = (
    "NO SANDBOX: bubblewrap is not available; running only skillci's bundled demo tasks, "
    "unsandboxed, as your user, with network (third-party tasks would be refused)"
)

#: The policy the running command set (a process runs one command; trials are planned in
#: any of its threads, so this is a module global, not a context variable). None: unset.
_policy: list[SandboxPolicy] = []
_log = logging.getLogger("skillci.sandbox")


def default_policy(env: dict[str, str] | None = None) -> SandboxPolicy:
    """``$SKILLCI_SANDBOX`` if set, else ``required`` under CI, else ``auto``."""
    from skillci.errors import UsageError

    env = dict(os.environ) if env is None else env
    raw = env.get(ENV_VAR, "").strip()
    if raw:
        if raw not in POLICIES:
            raise UsageError(
                f"{ENV_VAR}={raw!r} is not a sandbox policy", hint="use required, auto or none"
            )
        return raw  # type: ignore[return-value]
    if env.get("CI", "").strip().lower() not in ("", "0", "false"):
        return "required"
    return "auto"


def use_policy(flag: str | None) -> SandboxPolicy:
    """Set this command's policy: ``flag`` (``--sandbox``) or :func:`default_policy`."""
    from skillci.errors import UsageError

    if flag is not None and flag not in POLICIES:
        raise UsageError(f"unknown sandbox policy {flag!r}", hint="use required, auto or none")
    policy: SandboxPolicy = flag if flag is not None else default_policy()  # type: ignore[assignment]
    _policy[:] = [policy]
    return policy


def reset_policy() -> None:
    """Forget the command's policy (``skillci.cli.main`` after each command)."""
    _policy.clear()


def current_policy() -> SandboxPolicy:
    """The policy a command set, else :func:`default_policy` (library callers)."""
    return _policy[0] if _policy else default_policy()


@functools.cache
def _bundled() -> dict[str, str]:
    """Task id -> content hash of the tasks bundled with skillci (its checkout or the
    wheel's data): the only task code ``auto`` runs without a sandbox."""
    from skillci.errors import SkillciError
    from skillci.tasks.loader import load_task
    from skillci.tasks.models import Purpose

    pkg = Path(__file__).resolve().parents[1]
    out: dict[str, str] = {}
    for here in (pkg.parent / "evals" / "tasks", pkg / "data" / "evals" / "tasks"):
        if not here.is_dir():
            continue
        for d in sorted(here.iterdir()):
            if d.name in out or not (d / "task.toml").is_file():
                continue
            try:
                out[d.name] = load_task(d, purpose=Purpose.inspect).content_hash
            except SkillciError:
                continue
    return out


def is_bundled(task: Task) -> bool:
    """Whether ``task`` is byte-for-byte one of skillci's bundled tasks."""
    return _bundled().get(task.id) == task.content_hash


def sandbox_for(tasks: Iterable[Task], mode: str) -> str:
    """The sandbox mode the trials of ``tasks`` run with under the current policy, or a
    :class:`~skillci.errors.SandboxError` naming the fix. An explicit mode (``bwrap``,
    ``none``, ``docker``) was chosen by the caller and is kept."""
    from skillci.errors import SandboxError
    from skillci.runners.sandbox import bwrap_path

    if mode != "auto":
        return mode
    policy = current_policy()
    if policy == "none":
        return "none"
    if bwrap_path() is not None:
        return "auto"
    if policy == "required":
        raise SandboxError(
            "--sandbox required: no sandbox works on this machine (bubblewrap is missing or fails)",
            hint=FIX,
        )
    foreign = sorted({t.id for t in tasks if not is_bundled(t)})
    if foreign:
        shown = ", ".join(foreign[:3]) + (
            f" (+{len(foreign) - 3} more)" if len(foreign) > 3 else ""
        )
        raise SandboxError(
            f"no sandbox on this machine (bubblewrap is missing): refusing to run third-party "
            f"task code ({shown}) on the host",
            hint=FIX,
        )
    _warn_once()
    return "auto"


@functools.cache
def _warn_once() -> None:
    _log.warning(BUNDLED_UNSANDBOXED)


__all__ = [
    "BUNDLED_UNSANDBOXED",
    "ENV_VAR",
    "FIX",
    "POLICIES",
    "SandboxPolicy",
    "current_policy",
    "default_policy",
    "is_bundled",
    "reset_policy",
    "sandbox_for",
    "use_policy",
]
