"""The files ``skillci init`` writes besides each skill's metadata (pure text builders).

Kept simple on purpose: the workflow files are plain callers of the ``skillci`` CLI; the
GitHub adoption work turns them into callers of reusable workflows.
"""

from __future__ import annotations

import json

from skillci.providers.routes import BUILTIN_ROUTES, ModelRoute, RoutesFile

STORE_IGNORE = ".skillci/"
PRE_COMMIT_FILE = ".pre-commit-config.yaml"
HOOK_ID = "skillci-skill-lint"
SUITES = ("validation", "regression", "security")
SUITE_TEXT = {
    "validation": "The gate's main before/after comparison: tasks the skill should help with.",
    "regression": "Tasks that pass today; a change must not break them.",
    "security": "Prompt-injection and secret-leak tasks; every one must pass (an empty "
    "suite passes vacuously: add tasks).",
}

#: The example route: a real OpenAI-compatible endpoint; the key is read from the named
#: environment variable and never stored in the file.
EXAMPLE_ROUTE_NAME = "openai/gpt-4o-mini"
EXAMPLE_ROUTE = ModelRoute(
    model="openai/gpt-4o-mini",
    api_key_env="OPENAI_API_KEY",
    temperature=0.0,
    max_tokens=4096,
    timeout=120,
    context_window=128000,
    family="frontier-small",
    input_cost_per_token=1.5e-07,
    output_cost_per_token=6e-07,
    description="Example of a real route: move it into 'routes' and export OPENAI_API_KEY.",
)


def suite_yaml(name: str) -> str:
    return (
        f"# {SUITE_TEXT[name]}\n"
        "# Add task ids (directories under evals/tasks/): `skillci tasks new NAME --suite "
        f"{name}`.\nschema_version: 1\nname: {name}\nsplit: {name}\ntasks: []\n"
    )


def routes_json() -> str:
    routes = RoutesFile(
        comment=(
            "Model routes for skillci (https://docs.litellm.ai/docs/providers). 'routes' are "
            "usable by name (--model/--teacher); 'examples' are the commented-out form: "
            "validated, unusable until moved into 'routes'. Keys are never stored here: "
            "api_key_env names the environment variable that holds one."
        ),
        routes={k: BUILTIN_ROUTES[k] for k in ("sim/student", "sim/teacher")},
        examples={EXAMPLE_ROUTE_NAME: EXAMPLE_ROUTE},
    )
    data = routes.model_dump(mode="json", by_alias=True, exclude_none=True)
    return json.dumps(data, indent=2) + "\n"


def pre_commit_yaml(skill_dirs: list[str]) -> str:
    args = ", ".join(json.dumps(d + "/") for d in skill_dirs)
    return (
        "# Lint skills before each commit (https://pre-commit.com): pip install pre-commit &&\n"
        "# pre-commit install\n"
        "repos:\n"
        "  - repo: local\n"
        "    hooks:\n"
        f"      - id: {HOOK_ID}\n"
        "        name: skillci skill lint\n"
        "        entry: skillci skill lint\n"
        "        language: system\n"
        "        pass_filenames: false\n"
        f"        args: [{args}]\n"
    )


_INSTALL = """\
      - uses: actions/checkout@3d3c42e5aac5ba805825da76410c181273ba90b1 # v7.0.1
        with:
          fetch-depth: 0
          persist-credentials: false
      - uses: actions/setup-python@5fda3b95a4ea91299a34e894583c3862153e4b97 # v7.0.0
        with:
          python-version: "3.11"
      - name: Install skillci
        run: python -m pip install "$SKILLCI_INSTALL"
"""

REVIEW_WORKFLOW = (
    """\
# The release gate on a pull request that changes a skill or its evals (written by
# `skillci init`). Read-only: it runs the gate and uploads the report; nothing is posted.
name: skillci-review

on:
  pull_request:

permissions: {}

env:
  SKILLCI_INSTALL: skillci # pin the skillci version (or git URL) you use

jobs:
  gate:
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
"""
    + _INSTALL
    + """\
      - name: Lint the skills
        run: skillci skill lint $SKILL_DIRS
        env:
          SKILL_DIRS: "@SKILL_DIRS@"
      - name: Gate
        run: skillci gate --base "$BASE_SHA" --head "$HEAD_SHA" --json > gate-report.json
        env:
          BASE_SHA: ${{ github.event.pull_request.base.sha }}
          HEAD_SHA: ${{ github.event.pull_request.head.sha }}
      - uses: actions/upload-artifact@bbbca2ddaa5d8feaa63e36b76fdaad77386f024f # v7.0.0
        if: always()
        with:
          name: gate-report
          path: gate-report.json
"""
)

RELEASE_WORKFLOW = (
    """\
# Release a reviewed pull request as <skill>@<version> (written by `skillci init`).
name: skillci-release

on:
  workflow_dispatch:
    inputs:
      pr:
        description: Pull request number
        required: true
        type: number

permissions: {}

env:
  SKILLCI_INSTALL: skillci # pin the skillci version (or git URL) you use

jobs:
  release:
    runs-on: ubuntu-latest
    permissions:
      contents: write
      pull-requests: write
      statuses: write
    steps:
"""
    + _INSTALL
    + """\
      - name: Review and release
        run: |
          skillci review --pr "$PR" --forge github || true
          skillci release --pr "$PR" --forge github
        env:
          PR: ${{ inputs.pr }}
          GITHUB_TOKEN: ${{ github.token }}
"""
)


def workflows(skill_dirs: list[str]) -> dict[str, str]:
    """{path: text} of the GitHub workflow callers."""
    dirs = " ".join(d + "/" for d in skill_dirs)
    return {
        ".github/workflows/skillci-review.yml": REVIEW_WORKFLOW.replace("@SKILL_DIRS@", dirs),
        ".github/workflows/skillci-release.yml": RELEASE_WORKFLOW,
    }
