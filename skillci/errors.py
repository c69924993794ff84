"""Error types for skillci.

Every failure a user can cause or meet is a :class:`SkillciError` subclass that carries an
exit code and a one-line fix hint. ``skillci.cli.main.main`` turns them into one line on
stderr (or a ``::error::`` annotation under GitHub Actions) and the process exit code.

Exit codes (see ``ExitCode``): 0 ok, 1 gate rejected (a verdict, not a crash), 2 invalid
input, 3 internal error, 4 external failure (git, runner, model, forge), 130 interrupted.
"""

from __future__ import annotations

import enum
from pathlib import Path

TYPE_CHECKING = False  # typing is not imported at run time (CLI start-up, design 260)
if TYPE_CHECKING:
    from typing import Any


class ExitCode(enum.IntEnum):
    OK = 0
    REJECTED = 1
    INVALID_INPUT = 2
    INTERNAL = 3
    EXTERNAL = 4
    INCONCLUSIVE = 5
    """The gate could not decide: the evidence neither accepts nor rejects (design 290)."""
    INTERRUPTED = 130

    @classmethod
    def of_verdict(cls, verdict: str) -> ExitCode:
        """0 accept, 1 reject, 5 inconclusive."""
        return {"accept": cls.OK, "inconclusive": cls.INCONCLUSIVE}.get(verdict, cls.REJECTED)


class SkillciError(Exception):
    """Root of every error skillci raises on purpose."""

    exit_code: ExitCode = ExitCode.INTERNAL
    default_hint: str = "re-run with -v and report the traceback"

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        file: str | Path | None = None,
        line: int | None = None,
        col: int | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint if hint is not None else self.default_hint
        self.file = str(file) if file is not None else None
        self.line = line
        self.col = col

    @property
    def location(self) -> str:
        """``file:line:col`` (as much of it as is known), or ``""``."""
        if self.file is None:
            return ""
        loc = self.file
        if self.line is not None:
            loc += f":{self.line}"
            if self.col is not None:
                loc += f":{self.col}"
        return loc

    def one_line(self) -> str:
        where = f"{self.location}: " if self.location else ""
        text = f"{where}{self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text.replace("\n", " ")

    def __str__(self) -> str:
        return self.one_line()


class InvalidInputError(SkillciError):
    """The user gave us something we cannot use: a bad flag, file, config or skill."""

    exit_code = ExitCode.INVALID_INPUT
    default_hint = "check the named file or flag"


class UsageError(InvalidInputError):
    default_hint = "see `skillci --help`"


class ConfigError(InvalidInputError):
    default_hint = "fix the named field in the config file"


class SkillFormatError(InvalidInputError):
    """A skill package file cannot be parsed or does not match its schema."""

    default_hint = "fix the named field; `skillci skill lint` lists every problem"


class LintFailed(InvalidInputError):
    """Lint found errors (exit 2), or warnings under --strict."""

    default_hint = "fix the findings listed above"


class TaskFormatError(InvalidInputError):
    default_hint = "compare the task dir with the SkillsBench/Harbor layout (docs/tasks.md)"


class JudgeUnfit(InvalidInputError):
    """The suite declares a minimum agreement for its rubric judge and the judge is below it."""

    default_hint = (
        "calibrate another --judge (skillci judge calibrate --suite S --judge ROUTE), or add "
        "labelled examples"
    )


class PatchError(InvalidInputError):
    """A patch is malformed, out of bounds, or its preconditions fail."""

    default_hint = "run `skillci patch check` to see every problem"


class SealedSplitError(InvalidInputError):
    """An optimisation code path tried to read the sealed final split."""

    default_hint = "the final split is only read by `skillci eval run --suite final`"


class GateRejected(SkillciError):
    """A release gate said no. This is a verdict, not a crash."""

    exit_code = ExitCode.REJECTED
    default_hint = "see the gate report for the failing checks"


class NeedsApproval(GateRejected):
    """A PR marked ``needs-approval`` (the guard or its classifier) without a human's
    approval: automation neither merges nor closes it (design 407)."""

    default_hint = "review the flagged fields in the PR body, add the skillci:approved label, re-run `skillci review`, then release"


class InternalError(SkillciError):
    exit_code = ExitCode.INTERNAL


class ExternalError(SkillciError):
    """Something outside skillci failed: git, a runner, a model, a forge."""

    exit_code = ExitCode.EXTERNAL
    default_hint = "check that the external tool or service is installed and reachable"


class GitError(ExternalError):
    default_hint = "git failed. Is it installed, and are you in a Git repository?"


class RunnerError(ExternalError):
    default_hint = "check the runner's log in the trial dir"


class ModelError(ExternalError):
    default_hint = "check the route in provider_routes.json and its API key env var"


class BudgetExceeded(ExternalError):
    default_hint = "raise the budget (--max-usd/--max-tokens/--max-calls) or narrow the run"


class ForgeError(ExternalError):
    default_hint = "check the forge token and its permissions"


class ConflictError(ExternalError):
    """A compare-and-swap lost the race: someone else moved the ref first."""

    default_hint = "re-run; another skillci process changed the same record"


class CompileError(PatchError):
    """A diagnosis cannot be compiled into a bounded patch (not compilable, nothing to add,
    or over the manifest's patch limits)."""

    default_hint = "see the diagnosis: route it to its upgrade path or widen patch_limits"


class ModelOutputError(ModelError):
    """A model's answer did not match the required schema, even after a retry.

    ``exchange`` carries the prompt and the raw answers (a ``ModelExchange``) so the caller
    can record what the model said."""

    default_hint = "try another --compiler route, or use the deterministic template compiler"

    def __init__(self, message: str, *, exchange: object | None = None, **kw: Any) -> None:
        super().__init__(message, **kw)
        self.exchange = exchange


class ContextWindowExceeded(ModelError):
    """The prompt no longer fits the model's context window."""

    default_hint = "shorten what the agent reads (skill size, tool output) or use a larger model"


class SandboxError(RunnerError):
    """The trial sandbox could not be set up or refused an operation."""

    default_hint = (
        "check that bubblewrap works (`bwrap --ro-bind / / true`), or pass --sandbox none to "
        "accept running task code unsandboxed"
    )


class ReleaseRefused(InvalidInputError):
    """``skillci release`` refused: no accepting gate report for the PR's current head, the
    PR is not open, or the version is already released."""

    default_hint = "run `skillci review --pr N` on the PR's current head, then release again"


class RewardModelError(ExternalError):
    """The reward-model service (AgentRM-compatible HTTP) is down or answered nonsense."""

    default_hint = (
        "start the reward-model service (GET /health must answer status ok) or pass --no-rm "
        "to rank by the deterministic pre-scores alone"
    )


class PipelineLocked(InvalidInputError):
    """Another process holds the run directory of a compile pipeline."""

    default_hint = "wait for the other `skillci pipeline` to finish, or pass another --run-dir"


class MissingExtra(ExternalError):
    """An optional feature's packages (a pyproject extra) are not installed. Exit 4, like a
    missing agent or git: the environment lacks a tool, the input is fine."""

    default_hint = "install the extra the message names: pip install 'skillci[EXTRA]'"
