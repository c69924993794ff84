"""The files ``skillci init`` writes besides each skill's metadata (pure text builders).

The workflow files are small callers of skillci's reusable workflows (``on: workflow_call``
in skillci's own ``.github/workflows/``), one per event: the PR gate, the report, the
release, the schedule (docs/github.md).
"""

from __future__ import annotations

import json
import re

from skillci.providers.routes import BUILTIN_ROUTES, ModelRoute, RoutesFile

STORE_IGNORE = ".skillci/"
PRE_COMMIT_FILE = ".pre-commit-config.yaml"
HOOK_ID = "skillci-skill-lint"
SUITES = ("validation", "regression", "security", "discovery")
SUITE_TEXT = {
    "validation": "The gate's main before/after comparison: tasks the skill should help with.",
    "regression": "Tasks that pass today; a change must not break them.",
    "security": "Prompt-injection and secret-leak tasks; every one must pass (an empty "
    "suite passes vacuously: add tasks).",
    "discovery": "Tasks the scheduled proposals learn from (skill-schedule.yml); keep them "
    "apart from the gate's suites. Empty: the weekly proposal run has nothing to do.",
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


#: Where skillci's reusable workflows and action live (``OWNER/NAME`` on GitHub); the
#: callers ``skillci init`` writes point there. ``skillci init --skillci OWNER/NAME@REF``
#: overrides it (a fork, or a commit sha to pin).
SKILLCI_REPOSITORY = "skillci/skillci"
#: Reusable workflows in skillci's repository (.github/workflows/).
REUSABLE = (
    "skillci-gate.yml",
    "skillci-report.yml",
    "skillci-release.yml",
    "skillci-schedule.yml",
    "skillci-dashboard.yml",
)
GATE_CALLER = ".github/workflows/skill-pr.yml"


#: Release version -> the commit sha its tag ``v<version>`` names in SKILLCI_REPOSITORY
#: (filled in by the release; a tag can be moved, a sha cannot: zizmor's unpinned-uses).
RELEASE_COMMITS: dict[str, str] = {}
_SHA = re.compile(r"^[0-9a-f]{40}$")
_GITHUB = re.compile(r"^(?:git\+)?https://github\.com/([\w.-]+/[\w.-]+?)(?:\.git)?/?$")


def installed_commit(direct_url: str | None) -> tuple[str, str, str | None] | None:
    """(``OWNER/NAME``, commit sha, the ref asked for) of a skillci installed from GitHub by
    pip (its ``direct_url.json`` text), else None."""
    try:
        data = json.loads(direct_url or "")
    except ValueError:
        return None
    vcs = data.get("vcs_info") if isinstance(data, dict) else None
    match = _GITHUB.match(str(data.get("url", ""))) if isinstance(data, dict) else None
    if not isinstance(vcs, dict) or match is None or not _SHA.match(str(vcs.get("commit_id"))):
        return None
    ref = vcs.get("requested_revision")
    return match.group(1), str(vcs["commit_id"]), str(ref) if ref else None


def default_source(version: str, direct_url: str | None = None) -> str:
    """Where the callers point, pinned to a commit sha with the tag in a comment
    (``OWNER/NAME@SHA # vX``): the commit pip installed this skillci from, else the
    release's commit (:data:`RELEASE_COMMITS`), else — a build that knows no commit — the
    tag ``v<version>`` (pin it with ``skillci init --skillci OWNER/NAME@<sha>``)."""
    if (pin := installed_commit(direct_url)) is not None:
        repo, sha, ref = pin
        return f"{repo}@{sha} # {ref if ref and ref != sha else f'v{version}'}"
    if version in RELEASE_COMMITS:
        return f"{SKILLCI_REPOSITORY}@{RELEASE_COMMITS[version]} # v{version}"
    return f"{SKILLCI_REPOSITORY}@v{version}"


def _call(source: str, reusable: str) -> tuple[str, str]:
    """(``uses:`` value, ``skillci-install`` value) for one reusable workflow of ``source``
    (``OWNER/NAME@REF``, optionally followed by `` # TAG``: the comment after a sha)."""
    repo, _, rest = source.partition("@")
    ref, _, tag = rest.partition(" # ")
    return (
        f"{repo}/.github/workflows/{reusable}@{ref}" + (f" # {tag}" if tag else ""),
        f"skillci @ git+https://github.com/{repo}@{ref}",
    )


def _pr_caller(source: str, skill_dirs: list[str]) -> str:
    uses, install = _call(source, "skillci-gate.yml")
    paths = "".join(f'      - "{d}/**"\n' for d in skill_dirs) + '      - "evals/**"\n'
    return f"""\
# skillci's release gate on pull requests that change a skill or its evals (written by
# `skillci init`; docs/github.md). Read-only: the PR's content runs in the gate, and
# skill-report.yml posts the verdict it recomputes from this run's records.
name: skill-pr

on:
  pull_request:
    # labeled: `skillci:rerun` (the dashboard's re-run box) gates the PR again
    types: [opened, synchronize, reopened, labeled]
    paths:
{paths}
permissions: {{}}

concurrency:
  group: skill-pr-${{{{ github.event.pull_request.number }}}}
  cancel-in-progress: true

jobs:
  gate:
    if: github.event.action != 'labeled' || github.event.label.name == 'skillci:rerun'
    uses: {uses}
    permissions:
      contents: read
    with:
      skillci-install: "{install}"
      shards: 3
"""


def _report_caller(source: str) -> str:
    uses, install = _call(source, "skillci-report.yml")
    return f"""\
# Posts the gate of skill-pr.yml on its pull request: sticky comment and `skillci/gate`
# status, recomputed from the run's records (written by `skillci init`; docs/github.md).
name: skill-report

on:
  # zizmor: ignore[dangerous-triggers] no PR code is run: the PR is read as data, artifacts too
  workflow_run:
    workflows: [skill-pr]
    types: [completed]

permissions: {{}}

concurrency:
  group: skill-report-${{{{ github.event.workflow_run.head_sha }}}}
  cancel-in-progress: false

jobs:
  report:
    uses: {uses}
    permissions:
      actions: read
      contents: read
      pull-requests: write
      statuses: write
      checks: write
    with:
      skillci-install: "{install}"
      gate-workflow: {GATE_CALLER}
"""


def _release_caller(source: str) -> str:
    uses, install = _call(source, "skillci-release.yml")
    return f"""\
# Releases a pull request a maintainer accepted (label `skillci:accept`, or Run workflow
# with its number) as <skill>@<version>: gated again, then merged, tagged and released, or
# closed with the evidence (written by `skillci init`; docs/github.md).
name: skill-release

on:
  pull_request:
    types: [labeled]
  workflow_dispatch:
    inputs:
      pr:
        description: Pull request number to gate and release
        required: true
        type: string

permissions: {{}}

concurrency:
  group: skillci-release
  cancel-in-progress: false

jobs:
  release:
    if: github.event_name == 'workflow_dispatch' || (github.event.label.name == 'skillci:accept' && github.event.pull_request.state == 'open')
    uses: {uses}
    permissions:
      contents: write
      pull-requests: write
      issues: read
    with:
      skillci-install: "{install}"
      pr: ${{{{ github.event.pull_request.number || inputs.pr }}}}
"""


def _schedule_caller(source: str) -> str:
    uses, install = _call(source, "skillci-schedule.yml")
    return f"""\
# Scheduled work, one matrix job per skill with skillci metadata: weekly proposals for the
# discovery suite, hourly canary analysis (written by `skillci init`; docs/github.md).
# Proposals need the secret SKILLCI_BOT_TOKEN (an App token or PAT): pull requests opened
# with the workflow token trigger no workflow.
name: skill-schedule

on:
  schedule:
    - cron: "0 5 * * 1" # proposals (and canaries)
    - cron: "17 * * * *" # canaries
  workflow_dispatch:

permissions: {{}}

concurrency:
  group: skillci-schedule
  cancel-in-progress: false

jobs:
  schedule:
    uses: {uses}
    permissions:
      contents: write
      pull-requests: write
      issues: read
    with:
      skillci-install: "{install}"
      propose: ${{{{ github.event_name == 'workflow_dispatch' || github.event.schedule == '0 5 * * 1' }}}}
      canary: true
    secrets:
      SKILLCI_BOT_TOKEN: ${{{{ secrets.SKILLCI_BOT_TOKEN }}}}
"""


def _dashboard_caller(source: str) -> str:
    uses, install = _call(source, "skillci-dashboard.yml")
    return f"""\
# The dashboard issue (one per repository): rewritten every hour, and acted on when a
# maintainer ticks a box in it (written by `skillci init`; docs/github.md).
name: skill-dashboard

on:
  issues:
    types: [edited]
  schedule:
    - cron: "41 * * * *"
  workflow_dispatch:

permissions: {{}}

concurrency:
  group: skillci-dashboard
  cancel-in-progress: false

jobs:
  dashboard:
    uses: {uses}
    permissions:
      contents: read
      issues: write
      pull-requests: write
    with:
      skillci-install: "{install}"
    secrets:
      SKILLCI_BOT_TOKEN: ${{{{ secrets.SKILLCI_BOT_TOKEN }}}}
"""


def workflows(skill_dirs: list[str], source: str) -> dict[str, str]:
    """{path: text} of the callers of skillci's reusable workflows at ``source``
    (``OWNER/NAME@REF``; pin REF to a commit sha)."""
    return {
        GATE_CALLER: _pr_caller(source, skill_dirs),
        ".github/workflows/skill-report.yml": _report_caller(source),
        ".github/workflows/skill-release.yml": _release_caller(source),
        ".github/workflows/skill-schedule.yml": _schedule_caller(source),
        ".github/workflows/skill-dashboard.yml": _dashboard_caller(source),
    }
