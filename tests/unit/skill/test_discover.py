"""Skill folders from repository paths (pure)."""

from __future__ import annotations

from skillci.skill.discover import owning_skill, skill_dirs, touched_skills


def test_outermost_skill_folders_outside_tasks_and_caches() -> None:
    paths = [
        "skills/a/SKILL.md",
        "skills/a/examples/inner/SKILL.md",  # bundled by skill a, not a skill of its own
        ".claude/skills/b/SKILL.md",
        "evals/tasks/t1/task.toml",
        "evals/tasks/t1/environment/skills/c/SKILL.md",  # a task's mounted skill
        "node_modules/x/SKILL.md",
        ".skillci/trials/y/SKILL.md",
        "README.md",
    ]
    assert skill_dirs(paths) == [".claude/skills/b", "skills/a"]


def test_root_skill_owns_everything() -> None:
    assert skill_dirs(["SKILL.md", "sub/SKILL.md", "scripts/x.py"]) == ["."]
    assert owning_skill("scripts/x.py", ["."]) == "."


def test_touched_skills_maps_paths_to_the_deepest_folder() -> None:
    dirs = ["skills/a", "skills/ab"]
    assert owning_skill("skills/ab/SKILL.md", dirs) == "skills/ab"
    assert owning_skill("skills/a/scripts/x.py", dirs) == "skills/a"
    assert owning_skill("README.md", dirs) is None
    assert touched_skills(["skills/a/SKILL.md", "README.md", "skills/a/x"], dirs) == ["skills/a"]
