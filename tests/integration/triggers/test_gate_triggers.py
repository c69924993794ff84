"""The gate's trigger check: a PR that breaks the description is rejected with the queries
that flipped; one that leaves name and description alone does not run it (auto)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.flows.context import RepoContext
from skillci.flows.gate import GateOptions, run_gate
from skillci.flows.triggers import trigger_gate
from skillci.present.report import render_markdown
from skillci.skill.catalogue import CatalogueEntry
from skillci.skill.package import SKILL_MD, TRIGGERS, SkillPackage
from tests.conftest import ROOT
from tests.integration.loop.conftest import git

OTHERS = [CatalogueEntry(name="pdf", description="Fill and merge PDF forms.")]
SMALL = """runs: 1
queries:
- {id: ci-log-fix, query: CI is red; fix the failing pytest test from the log, should_trigger: true}
- {id: tox-failure, query: tox reports a failing test in the Python repo, should_trigger: true}
- {id: pdf, query: merge these pdf forms, should_trigger: false}
- {id: poem, query: a poem about autumn, should_trigger: false}
"""


def _with_description(pkg: SkillPackage, text: str) -> SkillPackage:
    md = pkg.text(SKILL_MD)
    start = md.index("description:")
    end = md.index("\n", start)
    return pkg.with_files({SKILL_MD: (md[:start] + f"description: {text}" + md[end:]).encode()})


@pytest.mark.slow  # ~30 s on a loaded 2-core machine (litellm import + 16 recorded decisions)
def test_trigger_gate_runs_on_a_description_change_and_lists_flips(tmp_path: Path) -> None:
    base = SkillPackage.from_dir(ROOT / "skills/repo-debugger")
    base = base.with_files({TRIGGERS: SMALL.encode()})
    assert trigger_gate(base, base, OTHERS, model="sim/student", home=tmp_path) is None
    same = trigger_gate(base, base, OTHERS, model="sim/student", home=tmp_path, mode="always")
    assert same is not None and same.passed and not same.flipped
    broken = _with_description(base, "Helps with code.")
    res = trigger_gate(base, broken, OTHERS, model="sim/student", home=tmp_path)
    assert res is not None and not res.passed
    assert res.max_drop == base.manifest.release_gate.max_trigger_drop == 0.1
    assert res.base.recall == 1.0 and res.head.recall == 0.0
    assert "trigger recall 100.0% -> 0.0% (-100.0%) (needs drop <= 10.0%)" in res.reasons
    assert res.reasons[-1].startswith("flipped: ")
    assert {f.query_id for f in res.flipped if not f.now_holds} == {"ci-log-fix", "tox-failure"}
    assert (
        trigger_gate(base, broken, OTHERS, model="sim/student", home=tmp_path, mode="never") is None
    )


@pytest.mark.slow
def test_the_gate_rejects_a_pr_that_breaks_the_description(
    tmp_path: Path,
) -> None:
    import shutil

    repo = tmp_path / "r"
    shutil.copytree(ROOT / "skills", repo / "skills")
    shutil.copytree(ROOT / "evals", repo / "evals")
    (repo / "evals/suites").mkdir(exist_ok=True)
    (repo / "evals/suites/validation.yaml").write_text(
        "schema_version: 1\nname: validation\nsplit: validation\ntasks:\n  - cfg-bool-flag\n"
    )
    (repo / ".gitignore").write_text(".skillci/\n")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "vague")
    md = repo / "skills/repo-debugger/SKILL.md"
    text = md.read_text()
    start = text.index("description:")
    md.write_text(text[:start] + "description: Helps with code." + text[text.index("\n", start) :])
    git(repo, "commit", "-qam", "vague description")
    ctx = RepoContext.open(repo, state_dir=tmp_path / "home")
    opts = GateOptions(
        skill="repo-debugger",
        base="main",
        head="vague",
        suites=("validation",),
        repeat=1,
        sequential=False,
    )
    report = run_gate(ctx, opts)
    assert report.verdict == "reject"
    assert report.triggers is not None and not report.triggers.passed
    assert any(r.startswith("trigger recall") for r in report.reasons)
    check = next(c for c in report.checks if c.name == "triggers")
    assert not check.passed
    md_text = render_markdown(report)
    assert "### Triggers (FAIL; max drop 10%)" in md_text
    assert "- broken: `ci-log-fix` (should trigger; loaded 3/3 -> 0/3)" in md_text
