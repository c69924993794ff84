"""``--runner harbor --env NAME``: the trial commands' trials on a Harbor environment (issue 36).

``eval run``, ``gate``, ``review`` and ``propose`` take the same runner flags; :func:`runner_options`
checks them (exit 2 on a bad combination, before anything loads), :func:`open_environment`
makes the :class:`~skillci.runners.harbor_remote.HarborEnvironment` (a cloud environment
without its credentials, or no Harbor executable: exit 4, before any trial), and
:func:`remote_source` the :class:`~skillci.runners.remote.RemoteTrials` the gate's rounds run
on — the same decision code as a local gate, over records kept in the same trial cache and
trace store (docs/design/412-runner-harbor-cli.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from skillci.errors import InvalidInputError
from skillci.runners.base import JudgeSpec
from skillci.runners.harbor_remote import ENVIRONMENTS, HarborEnvironment
from skillci.runners.outcome import TrialRun
from skillci.runners.registry import LOCAL, trial_runners
from skillci.runners.remote import RemoteLimits, RemoteTrials
from skillci.trace.store import TraceStore

#: Harbor attempts in flight at once when ``--concurrency`` is not given.
DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class RunnerOptions:
    """Where a command's trials run remotely, and the limits that hold there."""

    #: the Harbor environment (``--env``): docker, daytona, modal, e2b, runloop
    env: str
    #: attempts in flight at once on the environment (``--concurrency``)
    concurrency: int = DEFAULT_CONCURRENCY
    #: attempts per command, retries and look-ahead included (``--max-trials``; None: no limit)
    max_trials: int | None = None
    #: dollars per command (``--max-usd``; None: no limit)
    max_usd: float | None = None
    #: Harbor's executable (``--harbor``; None: $SKILLCI_HARBOR, else ``harbor`` on PATH)
    harbor: str | None = None

    @property
    def name(self) -> str:
        """As records and reports show it: ``harbor:<env>``."""
        return f"harbor:{self.env}"

    def limits(self, *, lookahead: int = 1) -> RemoteLimits:
        return RemoteLimits(
            concurrency=self.concurrency,
            budget=self.max_trials,
            max_dollars=self.max_usd,
            lookahead=lookahead,
        )


def runner_options(
    runner: str | None,
    env: str | None,
    *,
    concurrency: int | None = None,
    max_trials: int | None = None,
    max_usd: float | None = None,
    harbor: str | None = None,
) -> RunnerOptions | None:
    """The remote runner the flags ask for (None: local trials). A flag that only means
    something remotely without ``--runner harbor``, ``--runner harbor`` without ``--env``,
    an unknown runner or environment: exit 2 naming the flag and the valid values."""
    runner = runner or LOCAL
    if runner not in trial_runners():
        raise InvalidInputError(
            f"--runner {runner!r} cannot run these trials",
            hint=f"use one of: {', '.join(trial_runners())} (harbor needs --env NAME)",
        )
    envs = ", ".join(ENVIRONMENTS)
    if runner == LOCAL:
        given = {"--env": env, "--concurrency": concurrency, "--max-trials": max_trials,
                 "--max-usd": max_usd, "--harbor": harbor}  # fmt: skip
        for flag, value in given.items():
            if value is not None:
                raise InvalidInputError(
                    f"{flag} needs --runner harbor (trials run locally without it)",
                    hint=f"add --runner harbor --env NAME ({envs}), or drop {flag}",
                )
        return None
    if env is None:
        raise InvalidInputError("--runner harbor needs --env NAME", hint=f"use one of: {envs}")
    if env not in ENVIRONMENTS:
        raise InvalidInputError(f"unknown Harbor environment {env!r}", hint=f"use one of: {envs}")
    for flag, value in (("--concurrency", concurrency), ("--max-trials", max_trials)):
        if value is not None and value < (1 if flag == "--concurrency" else 0):
            raise InvalidInputError(f"{flag} {value} is out of range", hint=f"pass {flag} >= 1")
    return RunnerOptions(
        env=env,
        concurrency=concurrency or DEFAULT_CONCURRENCY,
        max_trials=max_trials,
        max_usd=max_usd,
        harbor=harbor,
    )


def preflight(opts: RunnerOptions) -> None:
    """Exit 4 now, before anything is touched, when the environment lacks its credentials or
    Harbor is not installed (what :func:`open_environment` would refuse)."""
    from skillci.runners.harbor import find_harbor
    from skillci.runners.harbor_remote import check_environment

    check_environment(opts.env)
    find_harbor(opts.harbor)


def open_environment(opts: RunnerOptions, state_dir: Path) -> HarborEnvironment:
    """The Harbor environment of ``opts``, its jobs dirs under ``state_dir/harbor-jobs``:
    a cloud environment without credentials or no Harbor executable fails here (exit 4)."""
    return HarborEnvironment(
        opts.env, state_dir / "harbor-jobs", concurrency=opts.concurrency, harbor=opts.harbor
    )


def remote_source(
    opts: RunnerOptions,
    env: HarborEnvironment,
    state_dir: Path,
    store: TraceStore,
    *,
    rounds: int = 1,
    judge: JudgeSpec | None = None,
    lookahead: int = 1,
    progress: Callable[[TrialRun], None] | None = None,
) -> RemoteTrials:
    """The :class:`RemoteTrials` over ``env`` keeping records in ``state_dir``'s trial cache
    and ``store``, telling ``progress`` of each trial as a local run does."""
    return RemoteTrials(
        env,
        state_dir,
        opts.limits(lookahead=lookahead),
        rounds=rounds,
        judge=judge,
        store=store,
        progress=progress,
    )


def remote_config(opts: RunnerOptions, src: RemoteTrials) -> dict[str, object]:
    """What a report says about where its trials ran and what they cost."""
    s = src.stats
    return {
        "runner": opts.name,
        "remote": {"submitted": s.submitted, "retried": s.retried, "cancelled": s.cancelled,
                   "unused": s.unused, "over_budget": s.over_budget,
                   "usd": round(s.usd, 6), "cost_unknown": s.cost_unknown},
    }  # fmt: skip


__all__ = [
    "DEFAULT_CONCURRENCY",
    "RunnerOptions",
    "open_environment",
    "preflight",
    "remote_config",
    "remote_source",
    "runner_options",
]
