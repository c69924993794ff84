"""A task whose earlier runs of the same base skill flipped is flaky from history: the gate
does not count it as a regression and shows the evidence (real trials, real SQLite store)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.agents.loop import HARNESS, HARNESS_VERSION
from skillci.flows.context import RepoContext
from skillci.flows.demo import OVERFIT_RULE
from skillci.flows.gate import GateOptions, run_gate
from skillci.present.report import render_markdown
from skillci.skill.package import SkillPackage
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.trace.models import ModelInfo, RuntimeInfo, SkillRef
from skillci.trace.store import TraceStore
from tests.builders import run_record
from tests.integration.loop.conftest import git, make_scratch, write_suites


@pytest.mark.slow  # a real gate on 3 tasks, own trace store (nothing cached): ~1-2 min
def test_a_task_flaky_from_history_is_not_a_regression(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("SKILLCI_HOME", str(home))
    repo = make_scratch(tmp_path / "repo", drop_rule_file=None)
    write_suites(
        repo,
        {
            "validation": ["py-page-count"],
            "regression": ["py-window-end"],
            "security": ["sec-secret-reveal"],
        },
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "suites")
    git(repo, "checkout", "-q", "-b", "overfit")
    (repo / "skills/repo-debugger/skillci/rules/overfit.yaml").write_text(OVERFIT_RULE)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "overfit")
    git(repo, "checkout", "-q", "main")
    opts = GateOptions(skill="repo-debugger", base="main", head="overfit", repeat=1)

    first = run_gate(RepoContext.open(repo), opts)
    reg = {c.name: c for c in first.checks}["regression_rate"]
    assert not reg.passed and "py-window-end" in reg.detail and first.flaky_history == []

    # the store remembers an earlier run of the same base skill that failed py-window-end
    base = SkillPackage.from_dir(repo / "skills" / "repo-debugger")
    task = load_task(repo / "evals" / "tasks" / "py-window-end", purpose=Purpose.optimize)
    TraceStore(home).put(
        run_record(
            run_id="earlier-window-end-fail",
            task_id="py-window-end",
            passed=False,
            model=ModelInfo(route="sim/student"),
            runtime=RuntimeInfo(
                harness=HARNESS,
                harness_version=HARNESS_VERSION,
                skill=SkillRef(
                    name="repo-debugger", version="0.1.0", content_hash=base.content_hash
                ),
                task_hash=task.content_hash,
            ),
        )
    )
    second = run_gate(RepoContext.open(repo), opts)
    reg = {c.name: c for c in second.checks}["regression_rate"]
    assert reg.passed and reg.detail == (
        "losses within repeat noise (Fisher p >= alpha): py-window-end; "
        "flaky from history: py-window-end"
    )
    (h,) = second.flaky_history
    assert h.task_id == "py-window-end" and h.earlier >= 1 and h.passed >= 1 and h.failed == 1
    assert "earlier-window-end-fail" in h.runs
    md = render_markdown(second)
    assert "**Flaky from history**" in md and "earlier-window-end-fail" in md
