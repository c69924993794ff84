"""What the template compiler takes from the teacher's observed actions.

Only *shapes* are taken, and each is mapped onto a fixed allowlist before it can reach a
rule: which test runner the teacher used (-> a canonical command with a ``<test id>``
placeholder), whether it checked the workspace with ``git diff`` or ``git status``, and
whether its related-test run covered the test file or the whole suite. No path, test id,
argument or output text from a trajectory is ever copied: trajectories are untrusted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from skillci.analyze.trajectory import ActionKind, Trajectory, is_broad_run

#: runner pattern -> canonical command (placeholders in angle brackets).
TEST_COMMANDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\bunittest\b"), "python -m unittest <test id>"),
    (re.compile(r"\bgo\s+test\b"), "go test -run <test name> ./..."),
    (re.compile(r"\bcargo\s+test\b"), "cargo test <test name>"),
    (re.compile(r"\bnpm\s+test\b"), "npm test -- <test id>"),
    (re.compile(r"\btox\b"), "tox -- <test id>"),
    (re.compile(r"\b(?:pytest|py\.test)\b"), "python -m pytest -x -q <test id>"),
)
DEFAULT_TEST_COMMAND = "python -m pytest -x -q <test id>"


@dataclass(frozen=True)
class Observed:
    """Allowlisted facts about how the teacher worked."""

    test_command: str = DEFAULT_TEST_COMMAND
    diff_cmd: str = "git_diff"
    """git_diff or git_status (snake_case, as it appears inside a step)."""
    related_scope: str = "its_test_file"
    """its_test_file or the_whole_suite."""
    tools: tuple[str, ...] = ()
    """Tool names the teacher called (only names from the package's required_tools are
    ever used)."""

    def fill(self, step: str) -> str:
        return (
            step.replace("{test_command}", self.test_command)
            .replace("{diff_cmd}", self.diff_cmd)
            .replace("{related_scope}", self.related_scope)
        )


def observe(teacher: Trajectory | None) -> Observed:
    """Allowlisted facts from a (passing) teacher trajectory; defaults without one."""
    if teacher is None:
        return Observed()
    test_command = DEFAULT_TEST_COMMAND
    for a in teacher.test_runs:
        for rx, canonical in TEST_COMMANDS:
            if rx.search(a.command):
                test_command = canonical
                break
        else:
            continue
        break
    diff_cmd = "git_diff"
    diffs = [a for a in teacher.actions if a.kind is ActionKind.inspect_diff]
    if diffs and all("status" in a.command and "diff" not in a.command for a in diffs):
        diff_cmd = "git_status"
    related = "its_test_file"
    last = teacher.milestones.last_edit
    after = [a for a in teacher.after(last) if a.is_test and a.ok] if last is not None else []
    broad = [a for a in after if is_broad_run(a)]
    if broad and all(not a.tests for a in broad):
        related = "the_whole_suite"
    tools = tuple(dict.fromkeys(a.tool for a in teacher.actions))
    return Observed(test_command, diff_cmd, related, tools)


__all__ = ["DEFAULT_TEST_COMMAND", "TEST_COMMANDS", "Observed", "observe"]
