"""``--runner harbor|benchflow --env NAME``: the trial commands' trials on a harness's
environment (issue 36; issue 31).

``eval run``, ``gate``, ``review`` and ``propose`` take the same runner flags; :func:`runner_options`
checks them (exit 2 on a bad combination, before anything loads), :func:`open_environment`
makes the runner's :class:`~skillci.runners.harness_remote.HarnessEnvironment` from the runner
registry (Harbor: a cloud environment without its credentials, or no Harbor executable, exit 4;
BenchFlow: no ``bench`` or no Docker engine, exit 2 -- each before any trial), and
:func:`remote_source` the :class:`~skillci.runners.remote.RemoteTrials` the gate's rounds run
on — the same decision code as a local gate, over records kept in the same trial cache and
trace store (docs/design/412-runner-harbor-cli.md, 431-runner-benchflow.md).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillci.errors import InvalidInputError
from skillci.runners.base import JudgeSpec
from skillci.runners.harness_remote import HarnessEnvironment
from skillci.runners.outcome import TrialRun
from skillci.runners.registry import LOCAL, remote_runners, runner_entry, trial_runners
from skillci.runners.remote import RemoteLimits, RemoteTrials
from skillci.trace.store import TraceStore

#: Harbor attempts in flight at once when ``--concurrency`` is not given.
DEFAULT_CONCURRENCY = 4


@dataclass(frozen=True)
class RunnerOptions:
    """Where a command's trials run remotely, and the limits that hold there."""

    #: the runner's environment (``--env``): Harbor's docker, daytona, modal, e2b, runloop;
    #: BenchFlow's docker
    env: str
    #: attempts in flight at once on the environment (``--concurrency``)
    concurrency: int = DEFAULT_CONCURRENCY
    #: attempts per command, retries and look-ahead included (``--max-trials``; None: no limit)
    max_trials: int | None = None
    #: dollars per command (``--max-usd``; None: no limit)
    max_usd: float | None = None
    #: Harbor's executable (``--harbor``; None: $SKILLCI_HARBOR, else ``harbor`` on PATH)
    harbor: str | None = None
    #: the remote runner (``--runner``): a registry runner with ``remote``
    runner: str = "harbor"

    @property
    def name(self) -> str:
        """As records and reports show it: ``<runner>:<env>``."""
        return f"{self.runner}:{self.env}"

    def environment_class(self) -> type[HarnessEnvironment]:
        return runner_entry(self.runner).environment_class()

    @property
    def executable(self) -> str | None:
        """The harness executable named on the command line (``--harbor``; refused with any
        runner whose environment class does not take it)."""
        return self.harbor

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
    something remotely without ``--runner harbor|benchflow``, a remote runner without
    ``--env`` (unless it has one environment only), ``--harbor`` with another runner, an
    unknown runner or environment: exit 2 naming the flag and the valid values."""
    runner = runner or LOCAL
    remotes = "|".join(remote_runners())
    if runner not in trial_runners():
        raise InvalidInputError(
            f"--runner {runner!r} cannot run these trials",
            hint=f"use one of: {', '.join(trial_runners())} (a remote runner takes --env NAME)",
        )
    if runner == LOCAL:
        given = {"--env": env, "--concurrency": concurrency, "--max-trials": max_trials,
                 "--max-usd": max_usd, "--harbor": harbor}  # fmt: skip
        for flag, value in given.items():
            if value is not None:
                raise InvalidInputError(
                    f"{flag} needs --runner {remotes} (trials run locally without it)",
                    hint=f"add --runner {remotes} --env NAME, or drop {flag}",
                )
        return None
    cls = runner_entry(runner).environment_class()
    table, envs = cls.environments, ", ".join(cls.environments)
    if harbor is not None and cls.executable_option != "--harbor":
        raise InvalidInputError(
            f"--harbor is Harbor's executable: --runner {runner} does not take it",
            hint=f"drop --harbor (${cls.executable_variable} names {cls.label}'s)",
        )
    if env is None and len(table) == 1:
        env = next(iter(table))
    if env is None:
        raise InvalidInputError(f"--runner {runner} needs --env NAME", hint=f"use one of: {envs}")
    if env not in table:
        raise InvalidInputError(
            f"unknown {cls.label} environment {env!r}", hint=f"use one of: {envs}"
        )
    for flag, value in (("--concurrency", concurrency), ("--max-trials", max_trials)):
        if value is not None and value < (1 if flag == "--concurrency" else 0):
            raise InvalidInputError(f"{flag} {value} is out of range", hint=f"pass {flag} >= 1")
    return RunnerOptions(
        env=env,
        concurrency=concurrency or DEFAULT_CONCURRENCY,
        max_trials=max_trials,
        max_usd=max_usd,
        harbor=harbor,
        runner=runner,
    )


def preflight(opts: RunnerOptions) -> None:
    """Refuse now, before anything is touched, what :func:`open_environment` would refuse
    (Harbor: missing credentials or executable, exit 4; BenchFlow: no engine, exit 2)."""
    opts.environment_class().preflight(opts.env, opts.executable)


def check_agent(opts: RunnerOptions | None, kind: str) -> None:
    """Exit 2 when the remote runner of ``opts`` cannot run agent kind ``kind``."""
    if opts is not None:
        opts.environment_class().check_agent(kind)


def open_environment(opts: RunnerOptions, state_dir: Path) -> HarnessEnvironment:
    """The environment of ``opts``, its jobs dirs under ``state_dir/<runner>-jobs``; what
    :func:`preflight` refuses fails here."""
    cls = opts.environment_class()
    exe: dict[str, Any] = {cls.executable_field: opts.executable}
    return cls(opts.env, state_dir / f"{opts.runner}-jobs", concurrency=opts.concurrency, **exe)


def remote_source(
    opts: RunnerOptions,
    env: HarnessEnvironment,
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
    "check_agent",
    "open_environment",
    "preflight",
    "remote_config",
    "remote_source",
    "runner_options",
]
