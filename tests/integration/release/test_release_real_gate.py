"""propose -> review (a real gate run with the sim student) -> release, end to end."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.flows.context import RepoContext
from skillci.flows.gate import GATE_BLOB
from skillci.flows.propose import ProposeOptions, propose
from skillci.flows.release import release_pr, stamped
from skillci.flows.review import review
from skillci.gate.verdict import GateReport
from skillci.release.tags import tag_message
from skillci.skill.models import Lifecycle
from skillci.skill.package import SkillPackage
from skillci.vcs.git import Git
from tests.integration.loop.conftest import git, make_scratch

TASK = "py-page-count"  # needs finish.report-success, which the scratch repo lacks


@pytest.fixture
def scratch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    return make_scratch(tmp_path / "repo")


@pytest.mark.slow  # 17 s idle in CI (2026-12-03), 27-34 s at load 2-4: near the 20 s budget
def test_propose_review_release(scratch: Path) -> None:
    ctx = RepoContext.open(scratch)
    out = propose(ctx, ProposeOptions(skill="repo-debugger", task=TASK))
    assert out.action == "opened" and out.pr is not None, out.message
    report = review(
        ctx, 1, repeat=1, student="sim/student", suites=("validation", "regression", "security")
    )
    assert report.verdict == "accept", report.reasons

    res = release_pr(ctx, 1)
    assert res.action == "released" and res.gate_id == report.gate_id
    assert (res.from_version, res.version) == ("0.7.0", "0.7.1")
    entry = res.entry or ""
    lines = entry.splitlines()
    assert lines[0] == "repo-debugger 0.7.0 -> 0.7.1"
    assert lines[1].startswith(
        "Added:    finish.report-success — reason: reported_success_without_verification ("
    )
    assert f"student failed 1/1 run(s) on {TASK}" in lines[1]
    assert "gate repaired 5/5 task(s) failing on base" in lines[1]
    val = report.suite("validation")
    assert val is not None
    b, h = (val.metrics.sides[s].pass_rate.pass_rate for s in ("base", "head"))
    assert lines[-2].startswith(f"Validation: pass rate {b:.1%} -> {h:.1%} (")
    assert lines[-1] == (
        "Compatibility: verified sim/student int8 / skillci-builtin-v1; "
        "not yet verified: repo-agent-v4"
    )
    stored = ctx.store.get_blob(GATE_BLOB, report.gate_id, GateReport)  # what release read
    assert tag_message(Git(scratch), "repo-debugger@0.7.1") == stamped(entry, stored)
    assert git(scratch, "rev-parse", "repo-debugger@0.7.1^{commit}") == git(
        scratch, "rev-parse", "main"
    )
    pkg = SkillPackage.from_dir(scratch / "skills" / "repo-debugger")
    rule = pkg.rule("finish.report-success")
    assert rule is not None and rule.rule.status is Lifecycle.active
    assert rule.rule.provenance is not None
    assert rule.rule.provenance.last_verified_on == report.gate_id
    assert pkg.manifest.compatibility.verified[0].score == pytest.approx(h, abs=1e-4)
