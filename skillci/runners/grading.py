"""Run a task's graders (``tests/graders.toml``) for one trial: the adapter of
:mod:`skillci.graders`.

Called by the runner where the verifier runs (:meth:`LocalRunner._verify`, so Docker and
``eval regrade`` too), after ``tests/test.sh`` when the task has one. ``command-exit``
assertions run in the verifier's sandbox shell (cwd the workspace); the other assertions
read the final answer and workspace files (never following a link out of the workspace);
rubrics go to the judge through the provider client — cached, costed, and recorded in the
run record's ``evaluation.details['graders']`` (redacted with the rest of the record).

A judge that fails (model error, budget, an answer that does not parse) makes the trial
``infra_error``: not the agent's fault, never ``failed``; so does an assertion kind whose
check raises (a plug-in's bug: ``failure_class: grader_error``). (Trial error states are
being reworked on the ``errors`` branch; this uses the existing ``EvalState.infra_error``.)
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from skillci.agents.base import Shell
from skillci.errors import SkillciError
from skillci.fsutil import atomic_write_text
from skillci.graders.assertions import MAX_READ, check_assertion
from skillci.graders.combine import combine, verifier_result
from skillci.graders.judge import (
    JudgeAnswerError,
    Message,
    PairwiseOutcome,
    judge_messages,
    pairwise_messages,
    pairwise_outcome,
    parse_verdicts,
    parse_winner,
)
from skillci.graders.kinds import Ran
from skillci.graders.models import (
    Assertion,
    CriterionVerdict,
    GraderResult,
    GradersFile,
    JudgeUsage,
    Rubric,
)
from skillci.providers.budget import BudgetMeter
from skillci.providers.cache import ResponseCache
from skillci.providers.client import ModelClient
from skillci.runners.base import JudgeSpec
from skillci.tasks.reward import REWARD_JSON, REWARD_TXT
from skillci.trace.models import EvalState, Evaluation
from skillci.trace.redact import Redactor

GRADERS_SOURCE = "tests/graders.toml"


class ModelJudge:
    """A judge on one model route: every call cached (``state_dir/cache/responses``) and
    counted in :attr:`usage`. It is told nothing but the task, the rubric and the output."""

    def __init__(self, spec: JudgeSpec, state_dir: Path) -> None:
        self.spec = spec
        self.client = ModelClient(
            spec.route_name,
            spec.route,
            meter=BudgetMeter(name="judge"),
            cache=ResponseCache(state_dir / "cache" / "responses"),
            use_cache=True,
        )
        self.usage = JudgeUsage(route=spec.route_name)

    def _ask(self, messages: list[Message]) -> str:
        done = self.client.complete(messages, seed=0)
        u = self.usage
        self.usage = u.model_copy(
            update={
                "model_calls": u.model_calls + 1,
                "cached_calls": u.cached_calls + int(done.cached),
                "input_tokens": u.input_tokens + (0 if done.cached else done.input_tokens),
                "output_tokens": u.output_tokens + (0 if done.cached else done.output_tokens),
                "usd": round(u.usd + (0.0 if done.cached else done.usd or 0.0), 8),
            }
        )
        return done.content or ""

    def verdicts(self, task: str, rubric: Rubric, output: str) -> list[CriterionVerdict]:
        """One verdict per criterion (raises JudgeAnswerError or a model error)."""
        return parse_verdicts(self._ask(judge_messages(task, rubric, output)), rubric)

    def compare(self, task: str, rubric: Rubric, x: str, y: str) -> PairwiseOutcome:
        """x against y, shown in both orders; a win only when both agree."""
        first = parse_winner(self._ask(pairwise_messages(task, rubric, x, y)))
        second = parse_winner(self._ask(pairwise_messages(task, rubric, y, x)))
        return pairwise_outcome(first, second)


def read_in(workspace: Path, rel: str) -> bytes | None:
    """``rel`` under ``workspace`` (at most MAX_READ bytes), or None when it is missing,
    not a regular file, or resolves outside the workspace."""
    root = workspace.resolve()
    try:
        path = (workspace / rel).resolve()
    except (OSError, RuntimeError):
        return None
    if not path.is_relative_to(root) or not path.is_file():
        return None
    try:
        with path.open("rb") as fh:
            return fh.read(MAX_READ)
    except OSError:
        return None


def _target_text(target: str, answer: str, workspace: Path) -> str | None:
    if target == "answer":
        return answer
    raw = read_in(workspace, target[5:])
    return None if raw is None else raw.decode("utf-8", errors="replace")


def _rubric_result(
    judge: ModelJudge, task: str, r: Rubric, answer: str, workspace: Path
) -> GraderResult:
    assert r.id is not None
    text = _target_text(r.target, answer, workspace)
    if text is None:  # nothing to judge: the agent did not write the file
        return GraderResult(
            id=r.id,
            kind="rubric",
            passed=False,
            score=0.0,
            weight=r.weight,
            detail=f"{r.target[5:]} is missing; not judged",
        )
    verdicts = judge.verdicts(task, r, Redactor().redact_text(text))  # no secret to a judge
    met = sum(v.passed for v in verdicts)
    score = round(met / len(verdicts), 6)
    return GraderResult(
        id=r.id,
        kind="rubric",
        passed=score >= r.min_score,
        score=score,
        weight=r.weight,
        detail=f"{met}/{len(verdicts)} criteria met (judge {judge.spec.route_name}; "
        f"needs {r.min_score:g})",
        criteria=verdicts,
    )


def _grader_error(graders: GradersFile, a: Assertion, exc: Exception) -> Evaluation:
    """The trial's evaluation when checking assertion ``a`` raised: ``infra_error``."""
    why = f"assertion {a.id!r} (kind {a.kind}) raised {type(exc).__name__}: {exc}"
    return Evaluation(
        state=EvalState.infra_error,
        threshold=graders.reward.pass_mark,
        reward_source=GRADERS_SOURCE,
        verifier_output=why[-4000:],
        failure_class="grader_error",
        details={"grader_error": why[:2000], "kind": a.kind},
    )


def grade_trial(
    graders: GradersFile,
    *,
    instruction: str,
    answer: str,
    workspace: Path,
    shell: Shell,
    timeout: float,
    judge: JudgeSpec,
    state_dir: Path,
    verifier: Evaluation | None = None,
) -> Evaluation:
    """The trial's :class:`Evaluation` from its graders (and ``verifier``, test.sh's)."""
    if verifier is not None and verifier.state not in (EvalState.passed, EvalState.failed):
        return verifier  # test.sh timed out or wrote no reward: the outcome is unknown
    results: list[GraderResult] = []

    def run(command: str) -> Ran:
        out = shell.run(command, timeout=timeout)
        return Ran(exit_code=None if out.timed_out else out.exit_code, output=out.output)

    for a in graders.assertion:
        try:
            results.append(
                check_assertion(a, answer=answer, read=lambda p: read_in(workspace, p), run=run)
            )
        except Exception as exc:  # a kind's own bug (a plug-in's): not the agent's fault
            return _grader_error(graders, a, exc)
    model_judge = ModelJudge(judge, state_dir) if graders.rubric else None
    try:
        for r in graders.rubric:
            assert model_judge is not None
            results.append(_rubric_result(model_judge, instruction, r, answer, workspace))
    except (SkillciError, JudgeAnswerError) as exc:
        assert model_judge is not None
        return Evaluation(
            state=EvalState.infra_error,
            threshold=graders.reward.pass_mark,
            reward_source=GRADERS_SOURCE,
            verifier_output=f"judge {judge.route_name} failed: {exc}"[-4000:],
            failure_class="judge_error",
            details={
                "judge_error": str(exc),
                "judge": model_judge.usage.model_dump(mode="json"),
            },
        )
    if verifier is not None:
        assert verifier.reward is not None
        results.insert(
            0, verifier_result(verifier.reward, verifier.passed, graders.reward.verifier_weight)
        )
    report = combine(graders.reward, results, model_judge.usage if model_judge else None)
    failed = [r.id for r in results if not r.passed]
    summary = f"graders: reward {report.reward:g} ({report.rule}); " + (
        f"failed: {', '.join(failed)}" if failed else "all passed"
    )
    details = dict(verifier.details) if verifier is not None else {}
    details["graders"] = report.model_dump(mode="json")
    state = EvalState.passed if report.passed else EvalState.failed
    return Evaluation(
        state=state,
        passed=report.passed,
        reward=report.reward,
        threshold=report.threshold,
        reward_source=GRADERS_SOURCE,
        verifier_exit_code=verifier.verifier_exit_code if verifier is not None else None,
        verifier_output=(
            (verifier.verifier_output + "\n" if verifier is not None else "") + summary
        )[-4000:],
        details=details,
    )


def publish_reward(verifier_logs: Path, evaluation: Evaluation) -> None:
    """Make ``logs/verifier`` say what the graders decided: test.sh's own reward files move
    to ``logs/verifier/test_sh/`` (kept as evidence) and the task's reward is written to
    ``reward.json`` (``{"reward": r, "graders": report}``), or none when there is no reward
    (a judge error) — so the trial dir's reward agrees with its record (read_complete)."""
    aside = verifier_logs / "test_sh"
    for name in (REWARD_TXT, REWARD_JSON):
        if (verifier_logs / name).is_file():
            aside.mkdir(parents=True, exist_ok=True)
            os.replace(verifier_logs / name, aside / name)
    if evaluation.reward is not None:
        body = {"reward": evaluation.reward, "graders": evaluation.details.get("graders")}
        atomic_write_text(verifier_logs / REWARD_JSON, json.dumps(body, indent=1), durable=False)


__all__ = ["GRADERS_SOURCE", "ModelJudge", "grade_trial", "publish_reward", "read_in"]
