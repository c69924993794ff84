"""The two enums of a run record, :class:`AgentRole` and :class:`EvalState`.

They live apart from :mod:`skillci.trace.models` so that code which only lists runs (the
light path of ``skillci trace ls``, :mod:`skillci.trace.index`) does not import pydantic.
:mod:`skillci.trace.models` re-exports both; import them from there in general.
"""

from __future__ import annotations

import enum


class AgentRole(enum.StrEnum):
    """Who acted in the trial."""

    student = "student"
    """The frozen target model the skill is compiled for."""
    teacher = "teacher"
    """A strong model whose trajectory is compared with the student's."""
    oracle = "oracle"
    """No model: the task's reference solution (``solution/solve.sh``) was run."""
    production = "production"
    """A trace imported from real use (canary/production traffic)."""


class EvalState(enum.StrEnum):
    """How a trial ended, and whose failure it is (docs/design/300).

    ``passed``/``failed`` (and ``timeout``) are the skill's outcome: the verifier judged a
    run that completed. ``infra_error``, ``verifier_error`` and ``not_run`` are errors of
    the measurement (:attr:`is_error`): the model route, sandbox, harness or verifier
    failed, so nothing was learnt about the skill; they are never reused from the trial
    cache and never counted in a pass rate. ``environment_unsupported``: nothing ran.
    """

    passed = "passed"
    """The verifier ran and the reward reached the pass threshold."""
    failed = "failed"
    """The verifier ran and the reward is below the threshold."""
    infra_error = "infra_error"
    """The trial could not run properly (sandbox, runner, model service): not the agent's fault."""
    timeout = "timeout"
    """The agent or the verifier ran past its time limit."""
    verifier_error = "verifier_error"
    """The verifier crashed or wrote no readable reward; the outcome is unknown."""
    not_run = "not_run"
    """The verifier was not run (e.g. the trial was stopped by a budget before it)."""
    environment_unsupported = "environment_unsupported"
    """The runner cannot honour the task's environment (an image step, working directory,
    network, GPUs, memory): nothing ran. Not comparable; the gate leaves it out."""

    @property
    def is_error(self) -> bool:
        """A failed measurement, not a failed skill: the trial says nothing about the skill
        (:data:`ERROR_STATES`)."""
        return self in ERROR_STATES

    @property
    def judged(self) -> bool:
        """The verifier judged a completed run: the skill's own outcome."""
        return not self.is_error and self is not EvalState.environment_unsupported


#: States that are the measurement's failure, not the skill's (docs/design/300).
ERROR_STATES = frozenset({EvalState.infra_error, EvalState.verifier_error, EvalState.not_run})


__all__ = ["ERROR_STATES", "AgentRole", "EvalState"]
