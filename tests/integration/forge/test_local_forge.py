from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest

from skillci.errors import ConflictError
from skillci.forge.base import PRState
from skillci.forge.local import LocalForge
from skillci.vcs.git import Git
from tests.integration.forge.conftest import make_branch, sh


def forge(repo: Path) -> LocalForge:
    return LocalForge(Git(repo))


def test_open_list_get_and_pinned_head(repo: Path) -> None:
    head = make_branch(repo, "skillci/x", {"b.txt": "two\n"})
    f = forge(repo)
    pr = f.open_pr(
        title="t", body="b", base="main", head_branch="skillci/x", labels=["skillci"], patch_id="p1"
    )
    assert pr.number == 1 and pr.head_sha == head
    assert sh(repo, "rev-parse", "refs/skillci/pr/1/head") == head
    assert [p.number for p in f.list_prs(state=PRState.open, label="skillci")] == [1]
    assert f.get_pr(1).title == "t"
    # the working tree and index are untouched by forge writes
    assert sh(repo, "status", "--porcelain") == ""


def test_event_log_is_append_only_chain(repo: Path) -> None:
    make_branch(repo, "skillci/x", {"b.txt": "two\n"})
    f = forge(repo)
    f.open_pr(title="t", body="b", base="main", head_branch="skillci/x", labels=[])
    f.add_labels(1, ["skillci", "missing_validation"])
    f.set_status(1, context="skillci/gate", state="pending", description="running")
    f.upsert_comment(1, "<!-- skillci:gate-report --> v1")
    f.upsert_comment(1, "<!-- skillci:gate-report --> v2")
    f.upsert_comment(1, "<!-- skillci:gate-report --> v3")
    pr = f.get_pr(1)
    assert (
        len(pr.comments) == 1
        and pr.comments[0].revisions == 3
        and pr.comments[0].body.endswith("v3")
    )
    types = [e["type"] for e in f.log(1)]
    assert types == ["opened", "labeled", "status", "comment", "comment", "comment"]
    assert pr.statuses["skillci/gate"].state == "pending"


def test_close_deletes_branch_keeps_record_and_head(repo: Path) -> None:
    head = make_branch(repo, "skillci/x", {"b.txt": "two\n"})
    f = forge(repo)
    f.open_pr(title="t", body="b", base="main", head_branch="skillci/x", labels=[], patch_id="pp")
    pr = f.close(1, "rejected: regression 1/5")
    assert pr.state == PRState.closed
    assert Git(repo).rev("refs/heads/skillci/x") is None
    assert sh(repo, "rev-parse", "refs/skillci/pr/1/head") == head
    sh(repo, "gc", "--prune=now", "--quiet")
    assert sh(repo, "cat-file", "-t", head) == "commit"
    assert f.get_pr(1).comments[-1].body == "rejected: regression 1/5"
    assert f.find_by_patch("pp")[0].state == PRState.closed


def test_squash_merge_with_head_guard(repo: Path) -> None:
    head = make_branch(repo, "skillci/x", {"b.txt": "two\n"})
    f = forge(repo)
    f.open_pr(title="t", body="b", base="main", head_branch="skillci/x", labels=[])
    with pytest.raises(ConflictError, match="not the expected"):
        f.merge(1, title="T", message="M", expected_head_sha="0" * 40)
    pr = f.merge(1, title="skill: add rule", message="body", expected_head_sha=head)
    assert pr.state == PRState.merged
    # main is checked out and clean: worktree follows
    assert (repo / "b.txt").read_text() == "two\n"
    assert sh(repo, "log", "-1", "--format=%s") == "skill: add rule"
    assert sh(repo, "rev-list", "--count", "main") == "2"  # squash: one new commit


def test_merge_when_base_moved(repo: Path) -> None:
    head = make_branch(repo, "skillci/x", {"b.txt": "two\n"})
    (repo / "c.txt").write_text("three\n")
    sh(repo, "add", ".")
    sh(repo, "commit", "-qm", "base moved")
    f = forge(repo)
    f.open_pr(title="t", body="b", base="main", head_branch="skillci/x", labels=[])
    f.merge(1, title="T", message="", expected_head_sha=head)
    assert (repo / "b.txt").exists() and (repo / "c.txt").exists()


def _open(args: tuple[str, int]) -> int:
    repo, i = args
    f = LocalForge(Git(repo))
    try:
        return f.open_pr(
            title=f"t{i}",
            body="b",
            base="main",
            head_branch="skillci/x",
            labels=[],
            patch_id="same",
        ).number
    except ConflictError:
        return f.wait_for_patch_pr("same").number


def test_concurrent_open_of_same_patch_gives_one_pr(repo: Path) -> None:
    make_branch(repo, "skillci/x", {"b.txt": "two\n"})
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        numbers = pool.map(_open, [(str(repo), i) for i in range(4)])
    assert set(numbers) == {1}
    assert forge(repo).numbers() == [1]


def _label(args: tuple[str, int]) -> None:
    repo, i = args
    LocalForge(Git(repo)).add_labels(1, [f"l{i}"])


def test_concurrent_writers_lose_no_event(repo: Path) -> None:
    make_branch(repo, "skillci/x", {"b.txt": "two\n"})
    forge(repo).open_pr(title="t", body="b", base="main", head_branch="skillci/x", labels=[])
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(4) as pool:
        pool.map(_label, [(str(repo), i) for i in range(6)])
    pr = forge(repo).get_pr(1)
    assert sorted(pr.labels) == [f"l{i}" for i in range(6)]
    assert len(forge(repo).log(1)) == 7


def test_dry_run_prints_commands_and_changes_nothing(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    g = Git(repo, dry_run=True)
    before = sh(repo, "for-each-ref")
    g.update_ref("refs/heads/new", "a" * 40, None)
    g.tag_annotated("s@1.0.0", "HEAD", "msg")
    out = capsys.readouterr().out
    assert "[dry-run] git update-ref -m skillci refs/heads/new" in out
    assert "[dry-run] git tag -a s@1.0.0 HEAD -m msg" in out
    assert sh(repo, "for-each-ref") == before


def test_candidate_commit_with_trailers_is_idempotent(repo: Path) -> None:
    from skillci.vcs.candidate import candidate_branch, commit_candidate, parse_trailers

    g = Git(repo)
    br = candidate_branch(
        "repo-debugger", "reported_success_without_verification", "abcdef0123456789"
    )
    assert br == "skillci/repo-debugger/reported-success-without-verification-abcdef01"
    kw = dict(
        base="main",
        branch=br,
        skill_dir="skills/rd",
        changes={"skillci/rules/x.yaml": b"id: x\n"},
        subject="skill(rd): add x",
        trailers={"Skill-Patch-Id": "abcdef0123456789", "Compiler": "template"},
    )
    c1 = commit_candidate(g, **kw)  # type: ignore[arg-type]
    c2 = commit_candidate(g, **kw)  # type: ignore[arg-type]
    assert c1.created and not c2.created and c1.sha == c2.sha
    msg = sh(repo, "log", "-1", "--format=%B", br)
    assert parse_trailers(msg) == {"Skill-Patch-Id": "abcdef0123456789", "Compiler": "template"}
    assert sh(repo, "show", f"{br}:skills/rd/skillci/rules/x.yaml") == "id: x"
    assert sh(repo, "status", "--porcelain") == ""


def test_candidate_commit_race_with_the_same_change_reuses_the_winner(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two proposers build the same candidate at once: the one that loses the ref's
    compare-and-swap finds the winner's commit holds its change and reuses it."""
    from skillci.vcs.candidate import commit_candidate

    kw = dict(
        base="main",
        branch="skillci/rd/x-abcdef01",
        skill_dir="skills/rd",
        changes={"skillci/rules/x.yaml": b"id: x\n"},
        subject="skill(rd): add x",
    )
    loser, winner = Git(repo), Git(repo)
    real = Git.commit_tree
    state = {"raced": False}

    def commit_then_lose_the_race(self: Git, *a: object, **k: object) -> str:
        sha = real(self, *a, **k)  # type: ignore[arg-type]
        if self is loser and not state["raced"]:
            state["raced"] = True  # the other process creates the branch right now
            state["winner"] = commit_candidate(winner, **kw).sha  # type: ignore[arg-type]
        return sha

    monkeypatch.setattr(Git, "commit_tree", commit_then_lose_the_race)
    c = commit_candidate(loser, **kw)  # type: ignore[arg-type]
    assert state["raced"] and not c.created and c.sha == state["winner"]
    assert sh(repo, "rev-parse", "skillci/rd/x-abcdef01") == state["winner"]


def test_candidate_commit_race_with_another_change_rebuilds_on_top(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A concurrent writer with a different change loses to the CAS retry: the branch ends
    with our change (candidate branches belong to skillci; the last proposal wins)."""
    from skillci.vcs.candidate import commit_candidate

    br = "skillci/rd/x-abcdef01"
    mine = dict(base="main", branch=br, skill_dir="skills/rd", subject="s")
    loser, other = Git(repo), Git(repo)
    real = Git.commit_tree
    raced: list[str] = []

    def commit_then_lose_the_race(self: Git, *a: object, **k: object) -> str:
        sha = real(self, *a, **k)  # type: ignore[arg-type]
        if self is loser and not raced:
            raced.append(
                commit_candidate(
                    other, changes={"skillci/rules/x.yaml": b"id: other\n"}, **mine
                ).sha  # type: ignore[arg-type]
            )
        return sha

    monkeypatch.setattr(Git, "commit_tree", commit_then_lose_the_race)
    c = commit_candidate(loser, changes={"skillci/rules/x.yaml": b"id: x\n"}, **mine)  # type: ignore[arg-type]
    assert raced and c.created and c.sha != raced[0]
    assert sh(repo, "show", f"{br}:skills/rd/skillci/rules/x.yaml") == "id: x"


def test_a_path_outside_any_repository_is_invalid_input(tmp_path: Path) -> None:
    from skillci.errors import ExitCode, InvalidInputError

    with pytest.raises(InvalidInputError, match="is not inside a git repository") as ei:
        Git(tmp_path)
    assert ei.value.exit_code == ExitCode.INVALID_INPUT
    with pytest.raises(InvalidInputError, match="is not a directory"):
        Git(tmp_path / "missing")
