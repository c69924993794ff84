"""``skillci init`` in an existing repository holding real public skills (not the bundled
one): what it writes, that --dry-run writes nothing, and that a second run is a no-op."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.errors import ConfigError
from skillci.providers.routes import load_routes_file, resolve_route
from skillci.skill.package import MANIFEST, SkillPackage
from skillci.tasks.models import Purpose
from skillci.tasks.suites import load_suite
from tests.conftest import ROOT
from tests.integration.loop.conftest import git

REAL = ROOT / "tests" / "fixtures" / "real-skills"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    r = tmp_path / "repo"
    shutil.copytree(REAL / "obra" / "systematic-debugging", r / "skills" / "systematic-debugging")
    shutil.copytree(REAL / "anthropics" / "webapp-testing", r / ".claude" / "skills" / "webapp")
    (r / ".gitignore").write_text("node_modules/")  # no final newline
    git_init(r)
    return r


def git_init(r: Path) -> None:
    git(r, "init", "-q", "-b", "main")
    git(r, "add", "-A")
    git(r, "commit", "-qm", "a person's skills")


def snapshot(r: Path) -> dict[str, bytes]:
    return {
        p.relative_to(r).as_posix(): p.read_bytes()
        for p in r.rglob("*")
        if p.is_file() and ".git" not in p.relative_to(r).parts
    }


def test_init_dry_run_then_write_then_idempotent(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    before = snapshot(repo)
    assert main(["init", "--repo", str(repo), "--dry-run", "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert snapshot(repo) == before
    assert plan["skills"] == [".claude/skills/webapp", "skills/systematic-debugging"]

    assert main(["init", "--repo", str(repo), "--json"]) == 0
    done = json.loads(capsys.readouterr().out)
    assert done["written"] == plan["written"]
    written = set(done["written"])
    assert {
        f"skills/systematic-debugging/{MANIFEST}",
        f".claude/skills/webapp/{MANIFEST}",
        "evals/suites/validation.yaml",
        "evals/suites/regression.yaml",
        "evals/suites/security.yaml",
        "provider_routes.json",
        ".gitignore",
        ".pre-commit-config.yaml",
        ".github/workflows/skill-pr.yml",
        ".github/workflows/skill-report.yml",
        ".github/workflows/skill-release.yml",
        ".github/workflows/skill-schedule.yml",
        ".github/workflows/skill-dashboard.yml",
    } <= written
    pr_caller = (repo / ".github" / "workflows" / "skill-pr.yml").read_text()
    assert "uses: skillci/skillci/.github/workflows/skillci-gate.yml@v" in pr_caller
    assert '"skills/systematic-debugging/**"' in pr_caller
    # the skills' own files are untouched, byte for byte
    after = snapshot(repo)
    assert {k: v for k, v in after.items() if k in before and k != ".gitignore"} == {
        k: v for k, v in before.items() if k != ".gitignore"
    }
    pkg = SkillPackage.from_dir(repo / "skills" / "systematic-debugging")
    assert (pkg.manifest.name, pkg.manifest.version) == ("systematic-debugging", "0.1.0")
    for s in ("validation", "regression", "security"):
        assert load_suite(s, repo, purpose=Purpose.optimize).tasks == []
    assert (
        repo / ".gitignore"
    ).read_text() == "node_modules/\n# skillci's local store\n.skillci/\n"
    routes = load_routes_file(repo / "provider_routes.json")
    assert sorted(routes.routes) == ["sim/student", "sim/teacher"]
    assert list(routes.examples) == ["openai/gpt-4o-mini"]
    with pytest.raises(ConfigError, match="only an example"):
        resolve_route("openai/gpt-4o-mini", repo / "provider_routes.json")
    hook = (repo / ".pre-commit-config.yaml").read_text()
    assert "entry: skillci skill lint" in hook and '"skills/systematic-debugging/"' in hook

    # the local store is ignored by git
    (repo / ".skillci").mkdir()
    (repo / ".skillci" / "index.sqlite").write_bytes(b"x")
    git(repo, "add", "-A")
    assert ".skillci" not in git(repo, "status", "--porcelain")

    settled = snapshot(repo)
    assert main(["init", "--repo", str(repo), "--json"]) == 0
    again = json.loads(capsys.readouterr().out)
    assert again["written"] == []
    assert snapshot(repo) == settled
    assert {i["action"] for i in again["items"]} == {"keep"}


def test_existing_pre_commit_config_is_not_rewritten(repo: Path) -> None:
    cfg = "repos:\n  - repo: https://github.com/psf/black\n    rev: 24.1.0\n    hooks: [{id: black}]\n"
    (repo / ".pre-commit-config.yaml").write_text(cfg)
    assert main(["init", "--repo", str(repo)]) == 0
    assert (repo / ".pre-commit-config.yaml").read_text() == cfg


SHA = "0123456789abcdef0123456789abcdef01234567"


def test_the_default_source_pins_the_installed_commit_with_the_tag_in_a_comment() -> None:
    from skillci.flows import init_files
    from skillci.flows.init_files import default_source

    pip_git = json.dumps(
        {
            "url": "https://github.com/acme/skillci.git",
            "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": "v0.1.0"},
        }
    )
    assert default_source("0.1.0", pip_git) == f"acme/skillci@{SHA} # v0.1.0"
    editable = json.dumps({"url": "file:///src/skillci", "dir_info": {"editable": True}})
    assert default_source("0.1.0", editable) == "skillci/skillci@v0.1.0"  # no commit known
    init_files.RELEASE_COMMITS["0.1.0"] = SHA
    try:
        assert default_source("0.1.0", None) == f"skillci/skillci@{SHA} # v0.1.0"
    finally:
        del init_files.RELEASE_COMMITS["0.1.0"]
    (uses, install) = init_files._call(f"acme/skillci@{SHA} # v0.1.0", "skillci-gate.yml")
    assert uses == f"acme/skillci/.github/workflows/skillci-gate.yml@{SHA} # v0.1.0"
    assert install == f"skillci @ git+https://github.com/acme/skillci@{SHA}"


@pytest.mark.parametrize("source", [f"acme/skillci@{SHA}", f"acme/skillci@{SHA} # v0.1.0"])
def test_init_callers_call_the_reusable_workflows_and_are_zizmor_clean(
    tmp_path: Path, source: str
) -> None:
    """The callers ``skillci init`` writes: each job calls one of skillci's reusable
    workflows at the pinned source, with inputs, secrets and permissions that fit it (as
    for skillci's own callers), and zizmor finds nothing."""
    import subprocess
    import sys

    import yaml

    from skillci.flows.init_files import REUSABLE, workflows
    from tests.conftest import ROOT
    from tests.integration.workflows.test_workflow_lint import _LEVEL, ZIZMOR

    files = []
    for rel, text in workflows(["skills/a", ".claude/skills/b"], source).items():
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
        files.append(path)
        wf = yaml.safe_load(text)
        assert wf["permissions"] == {}, rel
        for name, job in wf["jobs"].items():
            target, _, ref = job["uses"].partition("@")
            assert ref == SHA and target.startswith("acme/skillci/.github/workflows/"), rel
            reusable = target.rsplit("/", 1)[1]
            assert reusable in REUSABLE
            called = yaml.safe_load((ROOT / ".github" / "workflows" / reusable).read_text())
            call = called[True]["workflow_call"]
            assert set(job["with"]) <= set(call["inputs"]), rel
            assert (
                job["with"]["skillci-install"]
                == f"skillci @ git+https://github.com/acme/skillci@{SHA}"
            )
            assert set(job.get("secrets") or {}) <= set(call.get("secrets") or {}), rel
            for inner, spec in called["jobs"].items():
                for perm, level in spec["permissions"].items():
                    have = job["permissions"].get(perm, "none")
                    assert _LEVEL[have] >= _LEVEL[level], f"{rel}:{name} -> {inner}: {perm}"
    pr = yaml.safe_load((tmp_path / ".github/workflows/skill-pr.yml").read_text())
    assert pr[True]["pull_request"]["paths"] == ["skills/a/**", ".claude/skills/b/**", "evals/**"]
    if not ZIZMOR.is_file():
        pytest.fail(f"zizmor is not installed: {sys.executable} -m pip install zizmor")
    proc = subprocess.run(
        [str(ZIZMOR), "--offline", "--format", "json", *map(str, files)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0 and json.loads(proc.stdout or "[]") == [], proc.stdout[-3000:]


def test_init_refuses_a_malformed_source(repo: Path) -> None:
    assert main(["init", "--repo", str(repo), "--skillci", "not a source"]) == 2
    assert not (repo / ".github").exists()


def test_root_skill_is_reported_not_managed(tmp_path: Path) -> None:
    r = tmp_path / "r"
    shutil.copytree(REAL / "obra" / "writing-plans", r)
    git_init(r)
    assert main(["init", "--repo", str(r)]) == 0
    assert not (r / MANIFEST).exists()
    assert (r / "evals" / "suites" / "validation.yaml").is_file()
    assert not (r / ".pre-commit-config.yaml").exists()
