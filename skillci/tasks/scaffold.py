"""A new task in the Harbor layout, ready to edit (pure: returns the files to write).

The template is a complete, working task so that ``skillci tasks validate --run`` passes
on it before the author changes anything: the reference solution writes ``answer.txt``;
the verifier gives reward 1 only when it holds the expected line, so an agent that does
nothing fails. The author replaces the instruction, the workspace files, the solution and
the check; the comments in ``tests/test.sh`` say what the verifier must do.
"""

from __future__ import annotations

import re

from skillci.errors import UsageError

TASK_NAME_RE = re.compile(r"^[a-z0-9][a-z0-9._-]{0,62}$")

INSTRUCTION = """\
# {name}

Write the single word `done` into the file `answer.txt` at the root of the workspace.

<!-- Replace this with what the agent must do, as a user would ask it. Name the inputs
(files in the workspace) and the expected result, not how to get there. -->
"""

TASK_TOML = """\
version = "1.0"

[metadata]
author_name = "{author}"
difficulty = "easy"
category = "{category}"
tags = []
description = "TODO: one line on what this task checks."

[verifier]
timeout_sec = 120

[agent]
timeout_sec = 300

[environment]
build_timeout_sec = 300
cpus = 1
memory_mb = 1024
storage_mb = 1024
allow_internet = false
"""

DOCKERFILE = """\
# The image the agent works in (Docker / Harbor runners); the local runner copies this
# folder (without this file) to the workspace at /app.
FROM python:3.12-slim
WORKDIR /app
COPY . /app
"""

WORKSPACE_README = """\
Files in environment/ (except Dockerfile) are the agent's workspace at /app.
"""

SOLVE_SH = """\
#!/usr/bin/env bash
# Reference solution: what a correct agent would do, run in the workspace (/app).
# `skillci tasks validate --run` runs it and requires the verifier to pass.
set -euo pipefail
echo done > answer.txt
"""

TEST_SH = """\
#!/usr/bin/env bash
# Verifier: runs in the workspace (/app) after the agent; tests/ is read-only at /tests.
# Write 1 (pass) or 0 (fail) to ${LOGS_DIR:-/logs}/verifier/reward.txt. It must FAIL when
# the agent did nothing (`skillci tasks validate --run` checks both directions).
set -u
LOGS="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS/verifier"
if [ "$(cat answer.txt 2>/dev/null)" = "done" ]; then
  echo 1 > "$LOGS/verifier/reward.txt"
else
  echo "answer.txt does not hold 'done'" >&2
  echo 0 > "$LOGS/verifier/reward.txt"
fi
"""


#: ``tasks new --grader``: test (tests/test.sh), assertions or rubric (tests/graders.toml).
GRADER_KINDS = ("test", "assertions", "rubric")

ASSERTIONS_TOML = """\
# Graders of this task (docs/tasks.md "Graders"): checks of the agent's final answer
# ("answer") and of files it wrote ("file:<path in the workspace>"). No tests/test.sh is
# needed; with one, its reward counts as one more grader named "verifier".
[reward]
rule = "all"            # all | weighted | threshold (then: threshold = 0.75)

[[assertion]]
id = "answer-file"
kind = "file-exists"    # exact | contains | regex | json-schema | file-exists | command-exit | a plug-in's
target = "file:answer.txt"

[[assertion]]
id = "answer-is-done"
kind = "exact"          # the whole text, surrounding whitespace ignored
target = "file:answer.txt"
value = "done"

[[assertion]]
id = "nothing-else-changed"
kind = "command-exit"   # runs in the verifier's sandbox, in the workspace
command = '''test -z "$(git status --porcelain | grep -v answer.txt)"'''
"""

RUBRIC_INSTRUCTION = """\
# {name}

Write a short plan for adding a `--verbose` flag to a command-line tool into the file
`plan.md` at the root of the workspace: its goal, then numbered steps, each saying how to
check it.

<!-- Replace this with what the agent must produce, as a user would ask for it. -->
"""

RUBRIC_TOML = """\
# Graders of this task (docs/tasks.md "Graders"). A rubric's criteria are decided one by
# one by the judge (`--judge ROUTE`; default sim/judge, a LEXICAL simulator: calibrate a
# real judge with `skillci judge calibrate` before trusting it).
[reward]
rule = "threshold"
threshold = 0.75

[[assertion]]
id = "plan-written"
kind = "file-exists"
target = "file:plan.md"

[[assertion]]
id = "numbered-steps"
kind = "regex"
target = "file:plan.md"
value = '^1\\. '      # a TOML literal string: no escapes

[[rubric]]
id = "plan-quality"
target = "file:plan.md"
criteria = [
  "The plan states its goal",
  "The plan has numbered steps",
  "Each step says how to check it",
]
reference = "A goal line, then 1., 2., ... steps, each ending with how to check it."
min_score = 1.0          # share of criteria the judge must pass for this grader to pass
"""

RUBRIC_SOLVE_SH = """\
#!/usr/bin/env bash
# Reference solution: writes the document the rubric describes.
set -euo pipefail
cat > plan.md <<'PLAN'
# Plan: a --verbose flag

Goal: the tool prints what it does when given --verbose.

Numbered steps:

1. Parse the flag in cli.py. Check: `tool --verbose --help` lists it.
2. Log each action when the flag is set. Check: a run with the flag prints the actions.
3. Document the flag in README.md. Check: the README names it.
PLAN
"""


def check_name(name: str) -> None:
    if not TASK_NAME_RE.match(name):
        raise UsageError(
            f"{name!r} is not a task name",
            hint="lower-case letters, digits, '.', '_' or '-' (e.g. parse-dates)",
        )


def task_files(
    name: str, *, author: str = "", category: str = "general", grader: str = "test"
) -> dict[str, tuple[bytes, bool]]:
    """{path inside the task dir: (bytes, executable)} of a new task ``name``, graded by
    ``grader``: ``test`` (tests/test.sh), ``assertions`` or ``rubric`` (tests/graders.toml)."""
    check_name(name)
    if grader not in GRADER_KINDS:
        raise UsageError(f"unknown grader {grader!r}", hint=f"use one of {', '.join(GRADER_KINDS)}")
    files = {
        "instruction.md": (INSTRUCTION.format(name=name).encode(), False),
        "task.toml": (TASK_TOML.format(author=author, category=category).encode(), False),
        "environment/Dockerfile": (DOCKERFILE.encode(), False),
        "environment/README.md": (WORKSPACE_README.encode(), False),
        "solution/solve.sh": (SOLVE_SH.encode(), True),
        "tests/test.sh": (TEST_SH.encode(), True),
    }
    if grader == "assertions":
        del files["tests/test.sh"]
        files["tests/graders.toml"] = (ASSERTIONS_TOML.encode(), False)
    elif grader == "rubric":
        del files["tests/test.sh"]
        files["instruction.md"] = (RUBRIC_INSTRUCTION.format(name=name).encode(), False)
        files["solution/solve.sh"] = (RUBRIC_SOLVE_SH.encode(), True)
        files["tests/graders.toml"] = (RUBRIC_TOML.encode(), False)
    return files


def add_to_suite_text(text: str, task: str) -> str | None:
    """A suite file's text with ``task`` appended to its ``tasks:`` list (comments and order
    kept), or None when the list is not a plain block list this function can extend."""
    lines = text.splitlines(keepends=True)
    start = next((i for i, ln in enumerate(lines) if re.match(r"^tasks\s*:", ln)), None)
    if start is None:
        return None
    if re.match(r"^tasks\s*:\s*\[\s*\]\s*(#.*)?$", lines[start].rstrip("\n")):
        lines[start] = f"tasks:\n  - {task}\n"
        return "".join(lines)
    if lines[start].split(":", 1)[1].split("#", 1)[0].strip():
        return None  # a flow list with items
    end = start + 1
    while end < len(lines) and re.match(r"^\s+(- |#)|^\s*$", lines[end]):
        end += 1
    last = max(
        (i for i in range(start + 1, end) if lines[i].lstrip().startswith("- ")), default=start
    )
    indent = re.match(r"^(\s*)", lines[last]).group(1) if last > start else "  "  # type: ignore[union-attr]
    if not lines[last].endswith("\n"):
        lines[last] += "\n"
    lines.insert(last + 1, f"{indent}- {task}\n")
    return "".join(lines)
