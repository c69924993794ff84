"""Graders for tasks whose output is not a test script (pure: no subprocess, network, git).

A task may declare, in ``tests/graders.toml`` (inside the verifier dir, so the agent never
sees it and the trial's evaluator identity covers it), **assertions** over the agent's final
answer and the files it wrote (exact, contains, regex, json-schema, file-exists,
command-exit, or a plug-in's kind) and **rubrics** judged by a model route. Each grader is
recorded with its own result; the task's reward follows a declared rule (all / weighted /
threshold).

- :mod:`.models` — the file's shape and the results (``GradeReport``).
- :mod:`.load` — ``tests/graders.toml`` -> :class:`~.models.GradersFile` (errors at file:line).
- :mod:`.kinds` — what an assertion kind is (:class:`~.kinds.AssertionKind`: ``validate``,
  ``check``): the interface a plug-in implements.
- :mod:`.registry` — every assertion kind by name: skillci's own, then the entry points of
  the group ``skillci.graders`` (docs/design/403).
- :mod:`.assertions` — skillci's own kinds, and one assertion over given text and files ->
  :class:`~.models.GraderResult` (the one dispatch to a kind).
- :mod:`.combine` — grader results (+ the verifier's reward) -> reward and pass.
- :mod:`.judge` — the blinded judge prompt, its answer's parser, pairwise in both orders.
- :mod:`.calibrate` — agreement with human labels (accuracy, Cohen's kappa + CI) and
  :func:`~.calibrate.judge_fit`, the check that refuses an unfit judge.
- :mod:`.skill_creator` — skill-creator's ``evals/evals.json`` <-> task drafts.

The adapter that runs them in a trial (commands in the sandbox, judge calls through the
provider client) is :mod:`skillci.runners.grading`.

May import: ``skillci.errors``, ``skillci.tasks`` (docs/architecture.md).
"""
