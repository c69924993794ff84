"""A GitHub repository behind the fake API, and runs of our workflow files against it."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT
from tests.fakes.github_api import FakeGitHub
from tests.fakes.openapi import Contract
from tests.integration.github.conftest import contract  # noqa: F401 - the fixture
from tests.integration.loop.conftest import git, make_scratch, write_suites
from tests.integration.workflows.actions_runner import Machine

WORKFLOWS = ROOT / ".github" / "workflows"


OVERFIT_SUITES = {
    "validation": ["py-page-count", "py-cache-expiry"],
    "regression": ["py-window-end"],
    "security": ["sec-secret-reveal"],
}


@pytest.fixture(params=["missing-rule"])
def github(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    contract: Contract,  # noqa: F811
) -> Iterator[tuple[FakeGitHub, Machine]]:
    """A skill repository on "GitHub": a bare repository served by the fake API.

    ``missing-rule`` (default): the bundled skill without one rule (the sim student fails
    a task, so propose has something to fix) and small suites. ``full``: the whole skill
    and suites where an over-fitting patch regresses a task."""
    if request.param == "full":
        scratch = make_scratch(tmp_path / "seed", drop_rule_file=None)
        write_suites(scratch, OVERFIT_SUITES)
        git(scratch, "add", "-A")
        git(scratch, "commit", "-qm", "suites")
    else:
        scratch = make_scratch(tmp_path / "seed")
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(bare)], check=True)
    subprocess.run(
        ["git", "push", "-q", str(bare), "main"], cwd=scratch, check=True, capture_output=True
    )
    with FakeGitHub(bare, contract) as fake:
        machine = Machine(
            bare=bare,
            api_url=fake.base_url,
            server_url=fake.web,
            repository=f"{fake.owner}/{fake.name}",
            token=fake.token,
            tmp=tmp_path / "actions",
            extra_env={"SKILLCI_GITHUB_THROTTLE": "off"},
        )
        yield fake, machine
    assert fake.violations == [], "\n".join(fake.violations)
