"""What a scheduled run produced: one :class:`TrialRun` per trial, per-task summaries.

These are reports (``skillci eval run --json`` prints an :class:`EvalResult`); the evidence
itself is the run records in the trace store, which outcomes name by ``run_id``.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from skillci.trace.enums import ERROR_STATES

EVAL_RESULT_SCHEMA_VERSION = 1
#: Trial states: queued/running while in flight; cached or a finished EvalState value, or
#: error (runner failure), skipped (budget spent before it started).
FINAL_STATES = (
    "passed",
    "failed",
    "infra_error",
    "timeout",
    "verifier_error",
    "not_run",
    "environment_unsupported",
    "error",
    "skipped",
)


class TrialRun(BaseModel):
    """One trial's result (or its current state while it runs), as the scheduler reports it.

    Not the gate's :class:`skillci.gate.metrics.TrialOutcome` (one side's verdict input)."""

    model_config = ConfigDict(extra="forbid")

    key: str = Field(description="Trial cache key.")
    task_id: str = Field(description="Task id.")
    repeat_index: int = Field(description="0-based repeat.")
    state: str = Field(description="queued, running, an EvalState value, error or skipped.")
    cached: bool = Field(default=False, description="Reused a complete trial; nothing ran.")
    passed: bool = Field(default=False, description="The verifier passed it.")
    reward: float | None = Field(default=None, description="Verifier reward.")
    run_id: str | None = Field(default=None, description="Run record id in the trace store.")
    stop_reason: str | None = Field(default=None, description="Why the agent stopped.")
    wall_time_sec: float = Field(default=0.0, description="Trial wall time (when it ran).")
    started_at: float | None = Field(default=None, description="Unix time it started (running).")
    trial_dir: str | None = Field(default=None, description="Trial dir.")
    error: str | None = Field(default=None, description="Runner error or skip reason.")
    usd: float | None = Field(default=None, description="Model cost, when known.")
    input_tokens: int | None = Field(default=0, description="Prompt tokens; null: unknown.")
    output_tokens: int | None = Field(default=0, description="Completion tokens; null: unknown.")
    model_calls: int = Field(default=0, description="Model calls.")
    warnings: list[str] = Field(default_factory=list, description="Run record warnings.")


class TaskSummary(BaseModel):
    """Pass rate of one task over its repeats."""

    model_config = ConfigDict(extra="forbid")

    task_id: str
    trials: int = Field(description="Trials with a verdict (passed or failed).")
    passed: int = Field(description="Trials the verifier passed.")
    pass_rate: float | None = Field(description="passed / trials (None without verdicts).")
    mean_reward: float | None = Field(description="Mean reward over trials with a reward.")
    errors: int = Field(description="Trials without a verdict (errors, timeouts, skipped).")


class EvalResult(BaseModel):
    """The outcome of ``skillci eval run``."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=EVAL_RESULT_SCHEMA_VERSION, description="Shape version.")
    trials: list[TrialRun] = Field(description="Every planned trial, in plan order.")
    tasks: list[TaskSummary] = Field(description="Per-task pass rates, in plan order.")
    cached: int = Field(description="Trials reused from the trial cache.")
    ran: int = Field(description="Trials executed by this command.")
    skipped: int = Field(description="Trials not started (budget).")
    errors: int = Field(
        description="Failed measurements: the runner, model route, sandbox or verifier "
        "failed (state error, infra_error, verifier_error or not_run); no verdict."
    )
    unsupported: int = Field(
        default=0,
        description="Trials not run: the runner cannot honour the task's environment "
        "(environment_unsupported; not comparable).",
    )
    budget_stop: str | None = Field(default=None, description="Why the command stopped early.")
    warnings: list[str] = Field(default_factory=list, description="Distinct trial warnings.")

    @property
    def pass_rate(self) -> float | None:
        judged = [t for t in self.trials if t.state in ("passed", "failed")]
        return sum(t.passed for t in judged) / len(judged) if judged else None


def is_error(state: str) -> bool:
    """A failed measurement: the runner failed (``error``) or the trial ended in an error
    state (:attr:`~skillci.trace.enums.EvalState.is_error`: model route, sandbox, verifier)."""
    return state == "error" or state in {s.value for s in ERROR_STATES}


def first_error(result: EvalResult) -> str | None:
    """The first failed measurement's cause, on one line (``task #repeat: cause``)."""
    for t in result.trials:
        if is_error(t.state):
            cause = " ".join((t.error or t.state).split())
            return f"{t.task_id} #{t.repeat_index}: {cause}"[:400]
    return None


def summarize(trials: list[TrialRun], *, budget_stop: str | None = None) -> EvalResult:
    by_task: dict[str, list[TrialRun]] = {}
    for t in trials:
        by_task.setdefault(t.task_id, []).append(t)
    tasks = []
    for task_id, ts in by_task.items():
        judged = [t for t in ts if t.state in ("passed", "failed")]
        rewards = [t.reward for t in ts if t.reward is not None]
        tasks.append(
            TaskSummary(
                task_id=task_id,
                trials=len(judged),
                passed=sum(t.passed for t in judged),
                pass_rate=sum(t.passed for t in judged) / len(judged) if judged else None,
                mean_reward=sum(rewards) / len(rewards) if rewards else None,
                errors=len(ts) - len(judged),
            )
        )
    return EvalResult(
        trials=trials,
        tasks=tasks,
        cached=sum(t.cached for t in trials),
        ran=sum(
            1
            for t in trials
            if not t.cached and t.state not in ("skipped", "queued", "environment_unsupported")
        ),
        skipped=sum(t.state == "skipped" for t in trials),
        errors=sum(is_error(t.state) for t in trials),
        unsupported=sum(t.state == "environment_unsupported" for t in trials),
        budget_stop=budget_stop,
        warnings=sorted({w for t in trials for w in t.warnings}),
    )


SAVED_MODELS: dict[str, type[BaseModel]] = {"eval-result": EvalResult}

__all__ = [
    "SAVED_MODELS",
    "EvalResult",
    "TaskSummary",
    "TrialRun",
    "first_error",
    "is_error",
    "summarize",
]
