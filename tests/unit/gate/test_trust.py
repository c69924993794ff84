"""Which gate runs may decide a PR's status (skillci/gate/trust.py)."""

from __future__ import annotations

import dataclasses

from skillci.gate.trust import GATE_WORKFLOW_PATH, RunFacts, problems

HEAD, BASE = "a" * 40, "b" * 40
HONEST = RunFacts(
    pr_head=HEAD,
    workflow_path=GATE_WORKFLOW_PATH,
    changed_paths=("skills/repo-debugger/rules/x.yaml", "evals/tasks/t/task.toml"),
    base_is_on_base_branch=True,
    spec_head=HEAD,
    spec_base=BASE,
    spec_skill="repo-debugger",
    changed_skills=("skills/repo-debugger",),
)


def test_an_honest_run_has_no_problem() -> None:
    assert problems(HONEST) == []
    assert problems(dataclasses.replace(HONEST, spec_skill="skills/repo-debugger")) == []
    assert problems(dataclasses.replace(HONEST, workflow_path=None)) == []  # --pr N by hand


def test_each_forgery_is_named() -> None:
    cases = {
        "changed_paths": (
            (*HONEST.changed_paths, ".github/workflows/skill-pr.yml"),
            ".github/workflows/skill-pr.yml",
        ),
        "workflow_path": (".github/workflows/evil.yml", "evil.yml"),
        "spec_head": ("c" * 40, "gated head cccccccccccc"),
        "base_is_on_base_branch": (False, "not on the PR's base branch"),
        "spec_skill": ("other-skill", "gated skill other-skill"),
    }
    for field, (value, says) in cases.items():
        found = problems(dataclasses.replace(HONEST, **{field: value}))
        assert len(found) == 1 and says in found[0], (field, found)


def test_code_changes_count_however_many() -> None:
    paths = ("skills/a/SKILL.md", "skillci/cli/main.py", "pyproject.toml")
    (found,) = problems(dataclasses.replace(HONEST, changed_paths=paths))
    assert "skillci/cli/main.py (and 1 more)" in found


def test_skill_folders_of_the_base_branch_are_data_github_never() -> None:
    elsewhere = dataclasses.replace(
        HONEST,
        changed_paths=("agents/pdf/SKILL.md",),
        changed_skills=("agents/pdf",),
        spec_skill="agents/pdf",
    )
    assert len(problems(elsewhere)) == 1  # not a folder the base branch manages
    assert problems(dataclasses.replace(elsewhere, skill_dirs=("agents/pdf",))) == []
    root = dataclasses.replace(
        HONEST, changed_paths=(".github/workflows/skill-pr.yml",), skill_dirs=(".", "")
    )
    (found,) = problems(root)  # a skill at the repository root does not make .github data
    assert ".github/workflows/skill-pr.yml" in found
