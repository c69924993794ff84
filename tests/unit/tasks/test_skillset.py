"""The skills a task ships, on real SkillsBench tasks (tests/fixtures/skillsbench-tasks)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.errors import UsageError
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.tasks.skillset import select_skill, skill_dirs

SLICE = Path(__file__).resolve().parents[2] / "fixtures" / "skillsbench-tasks"


def test_every_skill_folder_is_found_and_nothing_else() -> None:
    quake = SLICE / "earthquake-location-determination" / "environment" / "skills"
    assert (quake / "licenses").is_dir()  # a folder beside the skills that is not one
    assert [p.name for p in skill_dirs(quake)] == [
        "adloc-fastapi",
        "obspy-data-api",
        "obspy-datacenter-client",
        "seisbench-model-api",
        "seismic-picker-selection",
    ]
    # this task's publisher spells it skill.md
    maven = SLICE / "fix-build-google-auto" / "environment" / "skills"
    assert len(skill_dirs(maven)) == 3
    assert skill_dirs(maven / "maven-build-lifecycle") == [maven / "maven-build-lifecycle"]


def test_several_skills_need_a_name_and_the_others_are_companions() -> None:
    root = SLICE / "hvac-control" / "environment" / "skills"
    with pytest.raises(UsageError, match="holds 5 skills") as err:
        select_skill(root)
    assert err.value.hint is not None and "--skill" in err.value.hint
    chosen = select_skill(root, "imc-tuning-rules")
    assert chosen.under_test == root / "imc-tuning-rules"
    assert len(chosen.skills) == 5 and chosen.under_test not in chosen.companions
    assert len(chosen.companions) == 4
    with pytest.raises(UsageError, match="not among"):
        select_skill(root, "no-such-skill")
    one = SLICE / "gh-repo-analytics" / "environment" / "skills"
    assert select_skill(one).companions == ()


def test_most_real_tasks_ship_several_skills() -> None:
    tasks = [load_task(p, purpose=Purpose.inspect) for p in sorted(SLICE.iterdir()) if p.is_dir()]
    counts = [len(skill_dirs(t.skills_dir)) if t.skills_dir else 0 for t in tasks]
    assert all(n >= 1 for n in counts)
    assert sum(n >= 3 for n in counts) >= 10
