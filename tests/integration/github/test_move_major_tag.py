"""scripts/move_major_tag.sh (publish.yml's last step, design 350) against the fake GitHub
API: the major tag is created, then moved (forced) to each release of that major, through
git/refs calls that GitHub's OpenAPI description allows."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from tests.conftest import ROOT
from tests.fakes.github_api import FakeGitHub
from tests.integration.github.conftest import sh

SCRIPT = ROOT / "scripts" / "move_major_tag.sh"


def move(fake: FakeGitHub, tag: str, sha: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GH_", "GITHUB_"))}
    env |= {
        "GH_TOKEN": fake.token,
        "GITHUB_REPOSITORY": f"{fake.owner}/{fake.name}",
        "GITHUB_API_URL": fake.base_url,
    }
    return subprocess.run(
        ["bash", str(SCRIPT), tag, sha],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        env=env,
    )


def test_major_tag_created_then_moved(fake: FakeGitHub, bare: Path, work: Path) -> None:
    first = sh(work, "rev-parse", "HEAD")
    done = move(fake, "v0.1.0", first)
    assert (done.returncode, done.stdout) == (0, f"created v0 -> {first} (v0.1.0)\n"), done.stderr
    assert sh(bare, "rev-parse", "refs/tags/v0") == first

    (work / "a.txt").write_text("two\n")
    sh(work, "commit", "-qam", "two")
    sh(work, "push", "-q", "origin", "main")
    second = sh(work, "rev-parse", "HEAD")
    done = move(fake, "v0.2.0", second)
    assert (done.returncode, done.stdout) == (0, f"moved v0 -> {second} (v0.2.0)\n"), done.stderr
    assert sh(bare, "rev-parse", "refs/tags/v0") == second
    # back to an older commit (a re-released patch of v0) is a forced move
    assert move(fake, "v0.2.1", first).returncode == 0
    assert sh(bare, "rev-parse", "refs/tags/v0") == first

    assert move(fake, "v1.0.0", second).returncode == 0
    assert sh(bare, "rev-parse", "refs/tags/v1") == second
    assert sh(bare, "rev-parse", "refs/tags/v0") == first


def test_bad_input_exits_2_and_a_refused_call_exits_4(fake: FakeGitHub, work: Path) -> None:
    head = sh(work, "rev-parse", "HEAD")
    bad = move(fake, "0.1.0", head)
    assert (bad.returncode, bad.stderr) == (2, "error: tag '0.1.0' is not vX.Y.Z\n")
    assert move(fake, "v0.1.0", "HEAD").returncode == 2
    refused = move(fake, "v0.1.0", "f" * 40)  # no such commit on GitHub
    assert refused.returncode == 4
    assert refused.stderr.startswith("error: GitHub answered 422 for tag v0: ")
