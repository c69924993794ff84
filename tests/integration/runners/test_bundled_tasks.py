"""The bundled tasks and suites are consistent, current and loadable."""

from __future__ import annotations

import subprocess
import sys

import pytest

from skillci.errors import SealedSplitError
from skillci.skill.package import SkillPackage
from skillci.tasks.models import Purpose
from skillci.tasks.suites import list_suites, load_suite
from skillci.tasks.validate import validate_task

from .helpers import BUNDLED, ROOT, SKILL, TASKS, task


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_task_dirs_match_their_generator() -> None:
    res = subprocess.run(
        [sys.executable, str(ROOT / "evals" / "tools" / "build_tasks.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_at_least_15_tasks_in_3_families_all_valid() -> None:
    families = {task(t).family for t in BUNDLED}
    assert len(BUNDLED) >= 15 and {"repo-repair", "security", "config-repair"} <= families
    for t in BUNDLED:
        report = validate_task(TASKS / t)
        assert report.ok, (t, report)
        assert (TASKS / t / "environment" / "Dockerfile").is_file()


def test_every_task_is_in_exactly_one_suite_and_final_is_sealed() -> None:
    names = list_suites(ROOT)
    assert sorted(names) == ["discovery", "final", "ood", "regression", "security", "validation"]
    seen: list[str] = []
    for name in names:
        purpose = Purpose.final_report if name == "final" else Purpose.optimize
        seen += load_suite(name, ROOT, purpose=purpose).tasks
    assert sorted(seen) == BUNDLED
    with pytest.raises(SealedSplitError):
        load_suite("final", ROOT, purpose=Purpose.optimize)


def test_the_skill_eval_lists_name_bundled_non_final_tasks() -> None:
    pkg = SkillPackage.from_dir(SKILL)
    final = set(load_suite("final", ROOT, purpose=Purpose.final_report).tasks)
    security = set(load_suite("security", ROOT, purpose=Purpose.optimize).tasks)
    for name in ("smoke", "regression", "security"):
        ids = pkg.eval_list(name).tasks
        assert ids and set(ids) <= set(BUNDLED) - final
    assert set(pkg.eval_list("security").tasks) == security
