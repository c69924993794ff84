"""Test-impact selection: which tasks re-run after a skill change."""

from __future__ import annotations

from skillci.gate.impact import changed_files, loaded_files_by_task, select_tasks
from skillci.gate.metrics import TrialOutcome

LOADED = {
    "fix-off-by-one": {
        "SKILL.md",
        "skillci/workflows/unit-test-failure.md",
        "skillci/tools/run-tests.md",
    },
    "ci-timeout": {
        "SKILL.md",
        "skillci/workflows/ci-failure.md",
        "skillci/recovery/command-timeout.md",
    },
    "trivial": {"SKILL.md"},
}


def test_only_tasks_that_loaded_a_changed_file_rerun() -> None:
    sel = select_tasks({"skillci/recovery/command-timeout.md"}, LOADED)
    assert sel.rerun == ["ci-timeout"]
    assert sel.reuse == ["fix-off-by-one", "trivial"]
    assert (sel.selected, sel.total) == (1, 3)
    assert sel.summary == "re-run 1 of 3 tasks (33%), reuse 2"
    row = {t.task_id: t for t in sel.tasks}["ci-timeout"]
    assert row.changed_loaded == ["skillci/recovery/command-timeout.md"]
    assert "loaded changed file(s): skillci/recovery/command-timeout.md" in row.reason


def test_bootstrap_change_reruns_everything_even_if_not_recorded() -> None:
    # the trials' records need not list SKILL.md: it is always loaded
    loaded = {t: files - {"SKILL.md"} for t, files in LOADED.items()}
    sel = select_tasks({"./SKILL.md"}, loaded)
    assert sel.selected == sel.total == 3
    assert all("always-loaded file changed: SKILL.md" in t.reason for t in sel.tasks)


def test_extra_always_loaded_index_and_unseen_tasks() -> None:
    sel = select_tasks(
        {"skill.json"},
        LOADED,
        tasks=[*LOADED, "new-task"],
        always_loaded=["SKILL.md", "skill.json"],
    )
    assert sel.selected == 4
    sel = select_tasks(set(), LOADED, tasks=[*LOADED, "new-task"])
    assert sel.rerun == ["new-task"]
    assert {t.task_id: t.reason for t in sel.tasks}["new-task"] == "no base trials to reuse"


def test_nothing_changed_reuses_everything() -> None:
    sel = select_tasks([], LOADED)
    assert (sel.selected, sel.total, sel.rerun) == (0, 3, [])


def test_changed_files_between_renders() -> None:
    before = {"SKILL.md": b"a", "skillci/workflows/x.md": b"x", "skillci/tools/old.md": b"o"}
    after = {"SKILL.md": b"a", "skillci/workflows/x.md": b"x2", "skillci/tools/new.md": b"n"}
    assert changed_files(before, after) == {
        "skillci/workflows/x.md",
        "skillci/tools/old.md",
        "skillci/tools/new.md",
    }


def test_loaded_files_union_over_base_repeats_only() -> None:
    def o(side: str, repeat: int, files: set[str]) -> TrialOutcome:
        return TrialOutcome(
            task_id="t",
            side=side,
            repeat=repeat,
            reward=1.0,
            passed=True,  # type: ignore[arg-type]
            loaded_skill_files=frozenset(files),
        )

    out = [
        o("base", 0, {"SKILL.md"}),
        o("base", 1, {"./skillci/tools/a.md"}),
        o("head", 0, {"skillci/tools/b.md"}),
    ]
    assert loaded_files_by_task(out) == {"t": frozenset({"SKILL.md", "skillci/tools/a.md"})}


def test_reasons_name_the_changed_sections() -> None:
    from skillci.gate.impact import changed_sections

    before = {"SKILL.md": b"# Skill\nintro\n## Verify\nrun it\n", "skillci/tools/x.md": b"# X\nx\n"}
    after = {
        "SKILL.md": b"# Skill\nintro\n## Verify\nrun it twice\n",
        "skillci/tools/x.md": b"# X\nx\n",
    }
    secs = changed_sections(before, after)
    assert secs == {"SKILL.md": ["Skill > Verify"]}
    sel = select_tasks(
        ["SKILL.md"], {"t1": ["SKILL.md"], "t2": ["skillci/tools/x.md"]}, sections_changed=secs
    )
    assert sel.rerun == ["t1", "t2"]
    assert sel.changed_sections == {"SKILL.md": ["Skill > Verify"]}
    assert sel.tasks[0].reason == "always-loaded file changed: SKILL.md § Skill > Verify"


def test_on_demand_section_edit_reruns_only_tasks_that_loaded_the_file() -> None:
    from skillci.gate.impact import changed_sections

    before = {"SKILL.md": b"# S\n", "skillci/tools/x.md": b"# X\n## Use\nold\n## Keep\nk\n"}
    after = {"SKILL.md": b"# S\n", "skillci/tools/x.md": b"# X\n## Use\nnew\n## Keep\nk\n"}
    secs = changed_sections(before, after)
    sel = select_tasks(
        ["skillci/tools/x.md"],
        {"t1": ["SKILL.md"], "t2": ["skillci/tools/x.md"]},
        sections_changed=secs,
    )
    assert (sel.rerun, sel.reuse) == (["t2"], ["t1"])
    assert sel.tasks[1].reason == "loaded changed file(s): skillci/tools/x.md § X > Use"
