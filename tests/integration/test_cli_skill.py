"""The CLI as a user runs it: real subprocesses, exit codes, one-line errors."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import PLAIN_FIXTURES, ROOT


def skillci(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.pop("GITHUB_ACTIONS", None)
    e.update(env or {})
    return subprocess.run(
        [sys.executable, "-m", "skillci", *args],
        capture_output=True,
        text=True,
        env=e,
        cwd=cwd or ROOT,
        timeout=120,
        check=False,
    )


def test_lint_bundled_clean() -> None:
    r = skillci("skill", "lint", "skills/repo-debugger")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 error(s), 0 warning(s)" in r.stdout


def test_lint_seeded_problem_exit_2_with_location(tmp_path: Path) -> None:
    pkg = tmp_path / "repo-debugger"  # the folder a harness finds it by (Agent Skills spec)
    shutil.copytree(ROOT / "skills" / "repo-debugger", pkg)
    skill_md = pkg / "SKILL.md"
    skill_md.write_text(
        skill_md.read_text().replace(
            "Work in this order", "Carefully analyze, then work in this order"
        )
    )
    r = skillci("skill", "lint", str(pkg), "--json")
    assert r.returncode == 2
    data = json.loads(r.stdout)
    (f,) = [x for x in data["packages"][0]["findings"] if x["severity"] == "error"]
    line = next(i for i, t in enumerate(skill_md.read_text().splitlines(), 1) if "Carefully" in t)
    assert (f["code"], f["file"], f["line"]) == ("SK010", str(skill_md), line)


def test_error_is_one_line_with_hint_and_github_annotation(tmp_path: Path) -> None:
    r = skillci("skill", "render", str(tmp_path))
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "hint:" in r.stderr and "Traceback" not in r.stderr
    r = skillci("skill", "render", str(tmp_path), env={"GITHUB_ACTIONS": "true"})
    assert r.stderr.startswith(f"::error file={tmp_path}::no skillci.yaml")


def test_verbose_shows_traceback(tmp_path: Path) -> None:
    r = skillci("-v", "skill", "render", str(tmp_path))
    assert r.returncode == 2 and "Traceback" in r.stderr


def test_usage_error_exit_2() -> None:
    r = skillci("skill", "lint")
    assert r.returncode == 2


def test_import_export_cli_round_trip(tmp_path: Path) -> None:
    src = PLAIN_FIXTURES / "skillsbench-task"
    r = skillci("skill", "import", str(src), "--out", str(tmp_path / "pkg"), "--json")
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["name"] == "docx"
    r = skillci("skill", "export", str(tmp_path / "pkg"), "--out", str(tmp_path / "out"))
    assert r.returncode == 0, r.stderr
    orig = src / "environment" / "skills" / "docx"
    for p in orig.rglob("*"):
        if p.is_file():
            assert (tmp_path / "out" / p.relative_to(orig)).read_bytes() == p.read_bytes()
    r = skillci("skill", "export", str(tmp_path / "pkg"), "--out", str(tmp_path / "out"))
    assert r.returncode == 2 and "not empty" in r.stderr


def test_import_dry_run_writes_nothing(tmp_path: Path) -> None:
    r = skillci(
        "skill",
        "import",
        str(PLAIN_FIXTURES / "anthropic-pdf"),
        "--out",
        str(tmp_path / "p"),
        "--dry-run",
    )
    assert r.returncode == 0 and "would write" in r.stdout
    assert not (tmp_path / "p").exists()


def test_render_json_and_out(tmp_path: Path) -> None:
    r = skillci(
        "skill",
        "render",
        "skills/repo-debugger",
        "--harness",
        "builtin",
        "--out",
        str(tmp_path / "r"),
        "--json",
    )
    assert r.returncode == 0, r.stderr
    data = json.loads(r.stdout)
    assert (tmp_path / "r" / "skill.json").is_file()
    assert data["bootstrap_tokens"] == next(
        f["tokens"] for f in data["files"] if f["path"] == "SKILL.md"
    )


def test_version_and_module_entry() -> None:
    r = skillci("--version")
    assert r.returncode == 0 and r.stdout.startswith("skillci ")


def test_migrate_moves_an_old_layout_package_and_lint_refuses_it_before(tmp_path: Path) -> None:
    from tests.unit.skill.test_migration import legacy_files

    old = tmp_path / "repo-debugger"
    for rel, data in legacy_files().items():
        (old / rel).parent.mkdir(parents=True, exist_ok=True)
        (old / rel).write_bytes(data)
    r = skillci("skill", "lint", str(old))
    assert r.returncode == 2 and "skillci skill migrate" in r.stderr and r.stderr.count("\n") == 1
    before = sorted(p.relative_to(old).as_posix() for p in old.rglob("*") if p.is_file())
    r = skillci("skill", "migrate", str(old), "--dry-run", "--json")
    assert r.returncode == 0, r.stderr
    plan = json.loads(r.stdout)
    assert plan["moves"]["rules/finish.yaml"] == "skillci/rules/finish.yaml"
    assert sorted(p.relative_to(old).as_posix() for p in old.rglob("*") if p.is_file()) == before
    r = skillci("skill", "migrate", str(old))
    assert r.returncode == 0, r.stderr
    after = {p.relative_to(old).as_posix(): p.read_bytes() for p in old.rglob("*") if p.is_file()}
    committed = ROOT / "skills" / "repo-debugger"
    assert after == {
        p.relative_to(committed).as_posix(): p.read_bytes()
        for p in committed.rglob("*")
        if p.is_file()
    }
    assert not (old / "rules").exists()
    assert skillci("skill", "lint", str(old)).returncode == 0
    r = skillci("skill", "migrate", str(old))
    assert r.returncode == 0 and "already in the current layout" in r.stdout
