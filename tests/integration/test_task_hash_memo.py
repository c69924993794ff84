"""The task-dir hash memo of the gate (docs/design/269): an unchanged task tree is not read
again, a changed one is hashed again (so its trials re-run)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

from skillci.flows.context import TASK_HASHES, RepoContext
from skillci.flows.gate import _load_side
from skillci.tasks.loader import dir_hash

ROOT = Path(__file__).resolve().parents[2]
TASKS = ("cfg-log-level", "cfg-bool-flag")


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t"}
    env |= {"GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    out = subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)
    return out.stdout.decode().strip()


def _commit(repo: Path, msg: str) -> str:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", msg)
    return _git(repo, "rev-parse", "HEAD")


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "skills" / "repo-debugger", repo / "skills" / "repo-debugger")
    for t in TASKS:
        shutil.copytree(ROOT / "evals" / "tasks" / t, repo / "evals" / "tasks" / t)
    suites = repo / "evals" / "suites"
    suites.mkdir()
    (suites / "validation.yaml").write_text(
        "schema_version: 1\nname: validation\nsplit: validation\ntasks:\n"
        + "".join(f"  - {t}\n" for t in TASKS)
    )
    _git(repo.parent, "init", "-q", "-b", "main", str(repo))
    return repo


def _hashes(ctx: RepoContext, sha: str) -> dict[str, str]:
    side = _load_side(ctx, sha, "skills/repo-debugger", ("validation",))
    for t in side.tasks["validation"]:  # what the trial keys are made of: the files now
        assert t.content_hash == dir_hash(t.root)
    return {t.id: t.content_hash for t in side.tasks["validation"]}


def test_a_changed_task_is_hashed_again_and_an_unchanged_one_is_remembered(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    first = _commit(repo, "tasks")
    ctx = RepoContext.open(repo, state_dir=tmp_path / "state")
    before = _hashes(ctx, first)
    memo = json.loads((ctx.state_dir / TASK_HASHES).read_text())
    assert sorted(before.values()) == sorted(v[0] for v in memo.values())

    inst = repo / "evals" / "tasks" / TASKS[0] / "instruction.md"
    inst.write_text(inst.read_text() + "\nMind the trailing newline.\n")
    second = _commit(repo, "edit one task")
    after = _hashes(ctx, second)
    assert after[TASKS[0]] != before[TASKS[0]]  # changed: hashed again, its trials re-run
    assert after[TASKS[1]] == before[TASKS[1]]
    assert len(json.loads((ctx.state_dir / TASK_HASHES).read_text())) == 3

    (repo / ".gitattributes").write_text("*.md text eol=lf\n")
    third = _commit(repo, "attributes")  # may change checkouts: every tree is new to the memo
    assert _hashes(ctx, third) == after
    assert len(json.loads((ctx.state_dir / TASK_HASHES).read_text())) == 5


def test_a_memo_file_that_is_not_hashes_is_ignored(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    sha = _commit(repo, "tasks")
    ctx = RepoContext.open(repo, state_dir=tmp_path / "state")
    path = ctx.state_dir / TASK_HASHES
    path.parent.mkdir(parents=True)
    path.write_text("[1, 2")
    good = _hashes(ctx, sha)
    keys = list(json.loads(path.read_text()))
    path.write_text(json.dumps({key: ["not-a-hash", "x"] for key in keys}))
    assert _hashes(ctx, sha) == good


def test_files_at_reads_every_blob_in_one_batch_byte_for_byte(tmp_path: Path) -> None:
    from skillci.vcs.git import Git

    repo = tmp_path / "repo"
    files = {
        "a.txt": b"one\ntwo\n",
        "empty": b"",
        "bin.dat": bytes(range(256)) * 3,
        "sub/no-newline.md": b"last line",
        "sub/deep/x": b"\n\n\n",
    }
    for rel, data in files.items():
        (repo / "pkg" / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / "pkg" / rel).write_bytes(data)
    (repo / "other.txt").parent.mkdir(parents=True, exist_ok=True)
    (repo / "other.txt").write_text("outside\n")
    _git(tmp_path, "init", "-q", "-b", "main", str(repo))
    sha = _commit(repo, "files")
    assert Git(repo).files_at(sha, "pkg") == files
    assert Git(repo).files_at(sha, "nothing-here") == {}
