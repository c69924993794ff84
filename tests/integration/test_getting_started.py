"""docs/getting-started.md, executed — and the end-to-end test of a person's own skill repo: every ``sh`` block of its local part (sections before
"The same on GitHub"), verbatim and in order, as one bash script in a scratch directory
with the real CLI — a real public skill, the sim models, LocalForge. Then the outcome the
guide promises is checked: an accepted prose change released with a changelog entry naming
the edited section, canaried, rolled back."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from skillci.flows.context import RepoContext
from skillci.forge.base import PRState
from skillci.release.channels import ChannelStore
from tests.conftest import ROOT

GUIDE = ROOT / "docs" / "getting-started.md"
BLOCK_RE = re.compile(r"^```sh\n(.*?)^```$", re.MULTILINE | re.DOTALL)
GITHUB_HEADING = "## 9. The same on GitHub"


def local_blocks(text: str) -> list[str]:
    local = text.split(GITHUB_HEADING, 1)[0]
    return [m.group(1) for m in BLOCK_RE.finditer(local)]


def test_guide_has_executable_local_part() -> None:
    text = GUIDE.read_text()
    assert GITHUB_HEADING in text
    blocks = local_blocks(text)
    assert len(blocks) >= 8
    assert any("skillci pr open" in b for b in blocks)
    assert not any("--forge github" in b for b in blocks)


@pytest.mark.slow  # > 20 s: 45 s wall in CI's default run of 2026-12-01 (tests/budget.py)
def test_getting_started_local_part_runs_verbatim(tmp_path: Path) -> None:
    script = "set -euo pipefail\n" + "\n".join(local_blocks(GUIDE.read_text()))
    env = {
        **os.environ,
        "SKILLCI_SRC": str(ROOT),
        "SKILLCI_HOME": str(tmp_path / "home"),
        "SKILLCI_ACTOR": "alice",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "COLUMNS": "200",
    }
    env.pop("SKILLCI_PROVIDER_ROUTES", None)
    env.pop("SKILLCI_FORGE", None)
    proc = subprocess.run(
        ["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    out = proc.stdout
    assert proc.returncode == 0, f"stdout:\n{out[-4000:]}\nstderr:\n{proc.stderr[-4000:]}"

    repo = tmp_path / "my-skills"
    # tasks: the seven examples and the template are valid, oracle passes, do-nothing fails
    assert "8 task(s): 0 error(s)" in out
    assert out.count("oracle passed, do-nothing failed") == 8
    # the prose diff and the local PR
    assert "SKILL.md § Systematic Debugging > Before you report success: added" in out
    assert "opened #1 Say when success may be reported" in out
    # review decided, with numbers
    assert "PR #1: accept (gate gate-" in out
    pr = RepoContext.open(repo).forge.get_pr(1)
    assert pr.patch_id is None and pr.state is PRState.merged
    assert pr.statuses["skillci/gate"].state == "success"
    # release: patch bump, the entry names the edited section, with the gate's numbers
    assert "released systematic-debugging@0.1.1 (0.1.0 -> 0.1.1, patch) from PR #1" in out
    log = (repo / "skills/systematic-debugging/skillci/CHANGELOG.md").read_text()
    entry = log.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    assert entry[0] == "systematic-debugging 0.1.0 -> 0.1.1"
    assert entry[1].startswith(
        'Section:  SKILL.md "Systematic Debugging > Before you report success" — section added'
    )
    assert re.match(r"Validation: pass rate 16\.7% -> 100\.0% \(95% CI", entry[2]), entry[2]
    assert entry[3].startswith("Compatibility: verified sim/student")
    assert "systematic-debugging@0.1.1" in out.split()
    # canary, then rollback, in the channel log; the changelog marks the version
    events = [e.type for e in ChannelStore(RepoContext.open(repo).git).log("systematic-debugging")]
    assert events[-2:] == ["canary_start", "rollback"]
    assert (
        "**Rolled back**" in (repo / "skills/systematic-debugging/skillci/CHANGELOG.md").read_text()
    )
    # the real route the guide enabled resolves (no call is made)
    from skillci.providers.routes import resolve_route

    assert resolve_route("openai/gpt-4o-mini", repo / "provider_routes.json").api_key_env == (
        "OPENAI_API_KEY"
    )
