"""The sim student's success depends on the skill's content (issue 4 acceptance)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.skill.package import SkillPackage
from skillci.trace.models import RunRecord

from .helpers import SKILL, model_agent, passed, run, without_rule


def _record(trial_dir: str | None) -> RunRecord:
    assert trial_dir is not None
    return RunRecord.model_validate_json((Path(trial_dir) / "record.json").read_bytes())


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_removing_finish_report_success_fails_a_discovery_task_the_full_skill_passes(
    tmp_path: Path,
) -> None:
    pkg = SkillPackage.from_dir(SKILL)
    with_rule = run(
        ["py-window-end", "cfg-two-errors"], model_agent(), tmp_path, pkg=pkg, parallel=2
    )
    minus = run(
        ["py-window-end", "cfg-two-errors"],
        model_agent(),
        tmp_path,
        pkg=without_rule(pkg, "finish.report-success"),
        parallel=2,
    )
    assert passed(with_rule) == {"py-window-end": True, "cfg-two-errors": True}
    assert passed(minus) == {"py-window-end": False, "cfg-two-errors": False}
    # the failure is the seed's weak habit: an edit, then success claimed without any test run
    rec = _record(minus.trials[0].trial_dir)
    tools = [e.tool for e in rec.events if e.kind == "tool_call"]
    assert "apply_patch" in tools and "run" not in tools[tools.index("apply_patch") :]
    assert rec.final_output and "should pass now" in rec.final_output


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_capability_gaps_are_not_fixed_by_any_skill_but_the_teacher_solves_them(
    tmp_path: Path,
) -> None:
    gaps = ["py-swapped-args", "py-median-index", "cfg-port-range"]
    extra = (
        b"schema_version: 1\nid: edit.related-tests\nstatus: active\n"
        b"instruction:\n  steps:\n    - run_the_whole_test_file_after_the_target_test_passes\n"
        b"    - never_edit_files_under_tests\n    - swap_the_arguments_of_the_call_on_the_frame_line\n"
    )
    maximal = SkillPackage.from_dir(SKILL).with_files({"skillci/rules/extra.yaml": extra})
    student = run(gaps, model_agent(), tmp_path, pkg=maximal, parallel=2)
    teacher = run(gaps, model_agent("teacher"), tmp_path, parallel=2)
    assert not any(passed(student).values())
    assert all(passed(teacher).values())


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_a_rule_the_bundled_skill_lacks_is_what_the_half_open_task_needs(tmp_path: Path) -> None:
    pkg = SkillPackage.from_dir(SKILL)
    related = pkg.with_files(
        {
            "skillci/rules/related.yaml": (
                b"schema_version: 1\nid: test.run-related\nstatus: active\n"
                b"instruction:\n  steps:\n    - run_the_whole_test_file_after_the_target_test_passes\n"
            )
        }
    )
    before = run(["py-half-open", "py-version-range"], model_agent(), tmp_path, pkg=pkg, parallel=2)
    after = run(
        ["py-half-open", "py-version-range"], model_agent(), tmp_path, pkg=related, parallel=2
    )
    assert not any(passed(before).values())
    assert all(passed(after).values())


@pytest.mark.slow  # > 20 s: 100-300 s wall in the 2-core run of 2026-12-01 (design 121)
def test_security_rule_keeps_injections_and_secrets_out(tmp_path: Path) -> None:
    pkg = SkillPackage.from_dir(SKILL)
    tasks = ["sec-comment-injection", "sec-secret-reveal", "sec-config-secret"]
    full = run(tasks, model_agent(), tmp_path, pkg=pkg, parallel=2)
    minus = run(
        tasks,
        model_agent(),
        tmp_path,
        pkg=without_rule(pkg, "security.untrusted-content"),
        parallel=2,
    )
    assert all(passed(full).values())
    assert not any(passed(minus).values())
