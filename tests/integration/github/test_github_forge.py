"""GitHubForge behaviour that only GitHub has: API pushes, check runs, tags and releases,
retries, permission errors, pagination, configuration from the Actions environment."""

from __future__ import annotations

import logging
import os
import subprocess
import time
from pathlib import Path

import pytest

from skillci.errors import ConfigError, ConflictError, ForgeError, InvalidInputError
from skillci.forge.base import PRState
from skillci.forge.github import GitHubForge
from skillci.forge.github_retry import RetryPolicy
from skillci.vcs.git import Git
from tests.fakes.github_api import ALL_PERMISSIONS, FakeGitHub
from tests.fakes.openapi import Contract
from tests.integration.github.conftest import (
    _FORGES,
    Sleeps,
    commit_on,
    make_forge,
    push,
    push_branch,
    sh,
)

BRANCH = "skillci/demo/missing-validation-abcdef01"
STICKY = "<!-- skillci:gate-report -->"


def _open(forge: GitHubForge, branch: str = BRANCH, patch_id: str | None = "abcdef0123") -> int:
    return forge.open_pr(
        title="skill(demo): add rule",
        body="why",
        base="main",
        head_branch=branch,
        labels=[],
        patch_id=patch_id,
        skill="demo",
    ).number


# --------------------------------------------------------------------------- PRs


def test_patch_pr_gets_bot_label_and_hidden_markers(
    forge: GitHubForge, fake: FakeGitHub, work: Path
) -> None:
    push_branch(work, BRANCH, {"b.txt": "two\n"})
    n = _open(forge)
    stored = fake.pulls[n].body or ""
    assert "<!-- skillci:patch-id=abcdef0123 -->" in stored
    assert "<!-- skillci:skill=demo -->" in stored
    assert fake.pulls[n].labels == ["skillci"]
    pr = forge.update_body(n, "new text")
    assert (pr.body, pr.patch_id, pr.skill) == ("new text", "abcdef0123", "demo")
    assert "<!-- skillci:patch-id=abcdef0123 -->" in (fake.pulls[n].body or "")


def test_second_pr_for_the_same_branch_is_a_conflict(forge: GitHubForge, work: Path) -> None:
    push_branch(work, BRANCH, {"b.txt": "two\n"})
    _open(forge)
    with pytest.raises(ConflictError, match="already exists"):
        _open(forge)


def test_pr_from_a_branch_github_lacks_says_push_first(forge: GitHubForge) -> None:
    with pytest.raises(InvalidInputError, match="does not exist on GitHub") as exc:
        _open(forge, branch="skillci/never-pushed")
    assert "push" in exc.value.hint


def test_changed_files_and_skills_come_from_git(forge: GitHubForge, work: Path) -> None:
    push_branch(
        work,
        BRANCH,
        {
            "skills/demo/skillci/rules/r.yaml": "id: r\n",
            "skills/other/SKILL.md": "# other\n",
            "evals/suites/x.yaml": "tasks: []\n",
            "a.txt": None,
        },
    )
    n = _open(forge)
    assert forge.changed_files(n) == [
        "a.txt",
        "evals/suites/x.yaml",
        "skills/demo/skillci/rules/r.yaml",
        "skills/other/SKILL.md",
    ]
    assert forge.changed_skills(n) == ["demo", "other"]


def test_list_prs_follows_pages_without_a_request_per_pr(fake: FakeGitHub, work: Path) -> None:
    forge = make_forge(fake, per_page=2)
    for i in range(3):
        push_branch(work, f"skillci/demo/p{i}", {f"f{i}.txt": "x\n"})
        _open(forge, branch=f"skillci/demo/p{i}", patch_id=f"patch{i}")
    before = len(fake.log)
    assert [p.number for p in forge.list_prs()] == [1, 2, 3]
    new = fake.log[before:]
    assert [t for _, t, _ in new] == ["/repos/{owner}/{repo}/pulls"] * 2  # two pages, no GET each


def test_merge_guard_holds_when_the_head_moves_during_the_merge(
    forge: GitHubForge, fake: FakeGitHub, work: Path
) -> None:
    head = push_branch(work, BRANCH, {"b.txt": "two\n"})
    n = _open(forge)
    # someone pushes between skillci's check of the head and GitHub's merge
    moved = commit_on(work, BRANCH, {"b.txt": "three\n"})
    fake.before("pulls/merge", lambda: push(work, BRANCH))
    with pytest.raises(ConflictError, match="no longer the expected"):
        forge.merge(n, title="T", message="M", expected_head_sha=head)
    assert forge.get_pr(n).head_sha == moved
    assert sh(fake.git.path, "rev-list", "--count", "main") == "1"


def test_merge_conflict_is_reported(forge: GitHubForge, fake: FakeGitHub, work: Path) -> None:
    head = push_branch(work, BRANCH, {"a.txt": "candidate\n"})
    n = _open(forge)
    push_branch(work, "main", {"a.txt": "someone else\n"})
    with pytest.raises(ConflictError, match="cannot be merged"):
        forge.merge(n, title="T", message="M", expected_head_sha=head)


def test_merge_when_base_moved_keeps_both_changes(
    forge: GitHubForge, fake: FakeGitHub, work: Path
) -> None:
    head = push_branch(work, BRANCH, {"b.txt": "two\n"})
    push_branch(work, "main", {"c.txt": "three\n"})
    n = _open(forge)
    pr = forge.merge(n, title="T", message="", expected_head_sha=head, delete_branch=True)
    assert pr.merge_sha == sh(fake.git.path, "rev-parse", "main")
    files = sh(fake.git.path, "ls-tree", "--name-only", "main").split()
    assert {"b.txt", "c.txt"} <= set(files)
    assert forge.branch_sha(BRANCH) is None


def test_sticky_comment_left_twice_by_crashed_writers_converges(
    forge: GitHubForge, fake: FakeGitHub, work: Path
) -> None:
    push_branch(work, BRANCH, {"b.txt": "two\n"})
    n = _open(forge)
    issue = forge._repo.get_issue(n)
    first = issue.create_comment("<!-- skillci:gate-report -->\nold 1")
    issue.create_comment("<!-- skillci:gate-report -->\nold 2")
    c = forge.upsert_comment(n, "fresh report")  # the marker is added when missing
    assert c.id == first.id
    bodies = [x.body for x in fake.comments.values()]
    assert bodies == ["<!-- skillci:gate-report -->\nfresh report"]


def test_sticky_comment_race_keeps_the_oldest(
    forge: GitHubForge, fake: FakeGitHub, work: Path
) -> None:
    push_branch(work, BRANCH, {"b.txt": "two\n"})
    n = _open(forge)
    # another writer creates its sticky comment after our look-up, before our create
    fake.before("issues/create-comment", lambda: fake.add_comment(n, f"{STICKY}\ntheirs"))
    c = forge.upsert_comment(n, f"{STICKY}\nours")
    assert [(x.id, x.body) for x in fake.comments.values()] == [(c.id, f"{STICKY}\nours")]
    assert c.id == min(fake.comments)


# --------------------------------------------------------------------------- statuses


def test_plain_token_writes_commit_statuses(
    forge: GitHubForge, fake: FakeGitHub, work: Path
) -> None:
    head = push_branch(work, BRANCH, {"b.txt": "two\n"})
    n = _open(forge)
    forge.set_status(n, state="pending", description="running")
    forge.set_status(n, state="failure", description="regression 1/5")
    assert not forge.uses_check_runs()
    assert [s["state"] for s in fake.statuses[head]] == ["pending", "failure"]
    assert fake.check_runs == []
    assert fake.requests_for("/installation/repositories") == 1  # detected once
    assert forge.get_pr(n).statuses["skillci/gate"].state == "failure"


def test_app_token_writes_check_runs(bare: Path, contract: Contract, work: Path) -> None:
    with FakeGitHub(bare, contract, app_token=True) as fake:
        forge = make_forge(fake)
        head = push_branch(work, BRANCH, {"b.txt": "two\n"})
        n = _open(forge)
        assert forge.uses_check_runs()
        forge.set_status(n, state="pending", description="running")
        st = forge.get_pr(n).statuses["skillci/gate"]
        assert (st.state, st.description) == ("pending", "running")
        forge.set_status(n, state="error", description="runner crashed")
        st = forge.get_pr(n).statuses["skillci/gate"]
        assert (st.state, st.description, st.sha) == ("error", "runner crashed", head)
        assert [r["status"] for r in fake.check_runs] == ["in_progress", "completed"]
        assert fake.check_runs[0]["pull_requests"][0]["number"] == n
        assert fake.statuses == {}
    assert fake.violations == []


def test_app_token_without_checks_permission_falls_back_to_statuses(
    bare: Path, contract: Contract, work: Path, caplog: pytest.LogCaptureFixture
) -> None:
    perms = frozenset(p for p in ALL_PERMISSIONS if not p.startswith("checks="))
    with FakeGitHub(bare, contract, app_token=True, permissions=perms) as fake:
        forge = make_forge(fake)
        head = push_branch(work, BRANCH, {"b.txt": "two\n"})
        n = _open(forge)
        with caplog.at_level(logging.WARNING):
            forge.set_status(n, state="success", description="ok")
        assert "commit statuses instead" in caplog.text
        assert [s["state"] for s in fake.statuses[head]] == ["success"]
        forge.set_status(n, state="success", description="ok again")
        assert fake.requests_for("/repos/{owner}/{repo}/check-runs") == 1  # not retried
        assert forge.get_pr(n).statuses["skillci/gate"].description == "ok again"
    assert fake.violations == []


def test_missing_permission_is_named(bare: Path, contract: Contract, work: Path) -> None:
    perms = frozenset(p for p in ALL_PERMISSIONS if not p.startswith("statuses="))
    with FakeGitHub(bare, contract, permissions=perms) as fake:
        forge = make_forge(fake)
        push_branch(work, BRANCH, {"b.txt": "two\n"})
        n = _open(forge)
        with pytest.raises(ForgeError) as exc:
            forge.set_status(n, state="success", description="ok")
    text = str(exc.value)
    assert "403" in text and "'statuses: write'" in text and "statuses=write" in text
    assert "permissions" in exc.value.hint


def test_bad_token_is_a_clear_error(fake: FakeGitHub) -> None:
    forge = make_forge(fake, token="wrong")
    with pytest.raises(ForgeError, match="rejected the token"):
        forge.get_pr(1)


def test_unknown_repository_names_access(fake: FakeGitHub) -> None:
    with (
        GitHubForge(
            "someone/else",
            token=fake.token,
            base_url=fake.base_url,
            seconds_between_requests=0,
            seconds_between_writes=0,
        ) as forge,
        pytest.raises(ForgeError, match=r"not found \(404.*cannot see it.*pull-requests: read"),
    ):
        forge.list_prs()


# --------------------------------------------------------------------------- retries


def test_rate_limit_is_waited_out_then_retried(
    fake: FakeGitHub, forge: GitHubForge, sleeps: Sleeps, work: Path
) -> None:
    push_branch(work, BRANCH, {"b.txt": "two\n"})
    n = _open(forge)
    reset = int(time.time()) + 7
    fake.fail_next(
        "POST",
        r"/issues/\d+/comments$",
        403,
        {"message": "API rate limit exceeded for installation ID 1.", "documentation_url": "x"},
        {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(reset)},
    )
    fake.fail_next(
        "GET",
        r"/pulls/\d+$",
        429,
        {"message": "You have exceeded a secondary rate limit.", "documentation_url": "x"},
        {"Retry-After": "3"},
    )
    forge.upsert_comment(n, "report")
    assert forge.get_pr(n).comments[0].body.endswith("report")
    assert len(fake.comments) == 1  # a rate-limited POST was not applied, so it is re-sent
    assert len(sleeps) == 2 and 5 <= sleeps[0] <= 9 and sleeps[1] == 3


def test_rate_limit_too_far_away_fails_without_sleeping(
    fake: FakeGitHub, forge: GitHubForge, sleeps: Sleeps
) -> None:
    fake.fail_next(
        "GET",
        r"/pulls$",
        403,
        {"message": "API rate limit exceeded for user ID 1.", "documentation_url": "x"},
        {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(time.time()) + 3600)},
    )
    with pytest.raises(ForgeError, match=r"rate limit exceeded.*resets around") as exc:
        forge.list_prs()
    assert "App installation token" in exc.value.hint
    assert sleeps == []


def test_server_errors_are_retried_for_reads_only(
    fake: FakeGitHub, forge: GitHubForge, sleeps: Sleeps, work: Path
) -> None:
    push_branch(work, BRANCH, {"b.txt": "two\n"})
    fake.fail_next("POST", r"/pulls$", 502, {"message": "Bad Gateway"})
    with pytest.raises(ForgeError, match="502"):
        _open(forge)
    assert fake.requests_for("/repos/{owner}/{repo}/pulls") == 1  # a create is not repeated
    n = _open(forge)
    fake.fail_next("GET", r"/pulls/\d+$", 503, {"message": "Service Unavailable"}, times=2)
    assert forge.refresh_head(n).number == n
    assert sleeps == [1.0, 2.0]  # exponential backoff


def test_server_errors_give_up_after_the_attempts(
    fake: FakeGitHub, sleeps: Sleeps, work: Path
) -> None:
    forge = make_forge(fake, retry=RetryPolicy(attempts=3, sleep=sleeps))
    fake.fail_next("GET", r"/pulls$", 500, {"message": "boom"}, times=5)
    with pytest.raises(ForgeError, match="GitHub answered 500"):
        forge.list_prs()
    assert len(sleeps) == 2


# --------------------------------------------------------------------------- pushes, tags, releases


def test_push_commit_rebuilds_the_same_commits_through_the_api(
    forge: GitHubForge, fake: FakeGitHub, work: Path
) -> None:
    g = Git(work)
    c1 = commit_on(
        work,
        BRANCH,
        {"skills/demo/skillci/rules/r.yaml": "id: r\n", "a.txt": None, "bin/run.sh": "#!/bin/sh\n"},
    )
    # an executable file and a non-UTC author date survive the trip
    base = g.rev("origin/main")
    assert base
    tree = g.tree_with(
        c1, {"bin/run.sh": b"#!/bin/sh\necho\n"}, executable=frozenset({"bin/run.sh"})
    )
    env = {
        "GIT_AUTHOR_DATE": "2024-05-01T10:00:00+05:30",
        "GIT_COMMITTER_DATE": "2024-05-01T11:00:00-03:00",
    }
    c2 = subprocess.run(
        ["git", "commit-tree", tree, "-p", c1, "-m", "second\n\nwith body"],
        cwd=work,
        env={**os.environ, **env},
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    g.update_ref(f"refs/heads/{BRANCH}", c2, c1)

    res = forge.push_commit(g, c2, BRANCH)
    assert (res.commits, res.blobs, res.identical) == (2, 3, True)
    assert res.remote_sha == c2 == sh(fake.git.path, "rev-parse", f"refs/heads/{BRANCH}")
    assert sh(fake.git.path, "cat-file", "-p", c2) == sh(work, "cat-file", "-p", c2)
    # pushing again is a no-op; a further commit sends only itself
    assert forge.push_commit(g, c2, BRANCH).commits == 0
    c3 = commit_on(work, BRANCH, {"b.txt": "two\n"})
    res = forge.push_commit(g, c3, BRANCH, base=c2)
    assert (res.commits, res.remote_sha) == (1, c3)
    n = _open(forge)
    assert forge.get_pr(n).head_sha == c3


def test_push_commit_refuses_to_rewind_without_force(forge: GitHubForge, work: Path) -> None:
    g = Git(work)
    push_branch(work, BRANCH, {"b.txt": "two\n"})
    other = commit_on(work, "elsewhere", {"c.txt": "x\n"})
    with pytest.raises(ConflictError, match="cannot move"):
        forge.push_commit(g, other, BRANCH)
    assert forge.push_commit(g, other, BRANCH, force=True).remote_sha == other


def test_annotated_tag_is_object_and_ref(forge: GitHubForge, fake: FakeGitHub, work: Path) -> None:
    main = sh(fake.git.path, "rev-parse", "main")
    tag_sha = forge.create_tag("demo@1.0.0", main, "demo 1.0.0\n\nchangelog")
    assert sh(fake.git.path, "cat-file", "-t", "refs/tags/demo@1.0.0") == "tag"
    assert sh(fake.git.path, "rev-parse", "refs/tags/demo@1.0.0") == tag_sha
    assert sh(fake.git.path, "rev-parse", "demo@1.0.0^{commit}") == main
    assert "changelog" in sh(fake.git.path, "cat-file", "-p", tag_sha)
    assert forge.create_tag("demo@1.0.0", main, "again") == tag_sha  # idempotent
    other = push_branch(work, BRANCH, {"b.txt": "two\n"})
    with pytest.raises(ConflictError, match="already exists"):
        forge.create_tag("demo@1.0.0", other, "moved?")


def test_release_is_created_then_updated(forge: GitHubForge, fake: FakeGitHub) -> None:
    main = sh(fake.git.path, "rev-parse", "main")
    forge.create_tag("demo@1.1.0", main, "demo 1.1.0")
    r1 = forge.create_release("demo@1.1.0", name="demo 1.1.0", notes="- rule added")
    r2 = forge.create_release("demo@1.1.0", name="demo 1.1.0", notes="- rule added\n- fixed")
    assert r1.id == r2.id and len(fake.releases) == 1
    assert (r2.tag, r2.body, r2.draft, r2.prerelease) == (
        "demo@1.1.0",
        "- rule added\n- fixed",
        False,
        False,
    )
    assert r2.url.endswith("/releases/tag/demo@1.1.0")


# --------------------------------------------------------------------------- configuration


def test_from_env_uses_the_actions_variables(fake: FakeGitHub, work: Path) -> None:
    env = {
        "GITHUB_TOKEN": fake.token,
        "GITHUB_REPOSITORY": f"{fake.owner}/{fake.name}",
        "GITHUB_API_URL": fake.base_url,
        "GITHUB_SERVER_URL": "https://github.example",
        "GITHUB_RUN_ID": "99",
    }
    forge = GitHubForge.from_env(
        env=env,
        seconds_between_requests=0,
        seconds_between_writes=0,
        retry=RetryPolicy(sleep=Sleeps()),
    )
    _FORGES.append(forge)  # closed after the test
    head = push_branch(work, BRANCH, {"b.txt": "two\n"})
    n = _open(forge)
    forge.set_status(n, state="success", description="ok")
    expected = f"https://github.example/{fake.owner}/{fake.name}/actions/runs/99"
    assert fake.statuses[head][0]["target_url"] == expected
    assert forge.list_prs(state=PRState.open)[0].url == f"{fake.repo_web}/pull/{n}"


def test_from_env_without_token_or_repo_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="GITHUB_TOKEN is not set"):
        GitHubForge.from_env(env={"GITHUB_REPOSITORY": "a/b"})
    with pytest.raises(ConfigError, match="no GitHub repository"):
        GitHubForge.from_env(env={"GITHUB_TOKEN": "t"})
    with pytest.raises(ConfigError, match="not owner/name"):
        GitHubForge("just-a-name", token="t")


# --------------------------------------------------------------------------- lifecycles


def test_propose_review_release_then_reject_and_refuse_to_repropose(
    forge: GitHubForge, fake: FakeGitHub, work: Path
) -> None:
    """The life of two patches, as skillci's commands will drive it."""
    g = Git(work)
    # accepted: candidate pushed through the API, gated, merged on the gated sha, released
    cand = commit_on(work, BRANCH, {"skills/demo/skillci/rules/verify.yaml": "id: verify\n"})
    head = forge.push_commit(g, cand, BRANCH).remote_sha
    n = forge.open_pr(
        title="skill(demo): verify before reporting success",
        body="diagnosis…",
        base="main",
        head_branch=BRANCH,
        labels=["reported_success_without_verification"],
        patch_id="aaaa1111",
        skill="demo",
    ).number
    assert forge.changed_skills(n) == ["demo"]
    forge.set_status(n, state="pending", description="gate running")
    forge.upsert_comment(n, f"{STICKY}\ngate: running")
    forge.upsert_comment(n, f"{STICKY}\ngate: accepted 5/5")
    forge.set_status(n, state="success", description="accepted 5/5")
    merged = forge.merge(
        n, title="skill(demo): 1.1.0", message="changelog entry", expected_head_sha=head
    )
    tag = forge.create_tag("demo@1.1.0", merged.merge_sha or "", "demo 1.1.0")
    rel = forge.create_release("demo@1.1.0", name="demo 1.1.0", notes="changelog entry")
    assert sh(fake.git.path, "rev-parse", "demo@1.1.0^{commit}") == merged.merge_sha
    assert sh(fake.git.path, "rev-parse", "refs/tags/demo@1.1.0") == tag
    assert rel.tag == "demo@1.1.0"
    pr = forge.get_pr(n)
    assert pr.state == PRState.merged and len(pr.comments) == 1
    assert pr.statuses["skillci/gate"].state == "success"

    # rejected: closed with the evidence; the same patch is then known as rejected
    other = "skillci/demo/premature-stop-bbbb2222"
    push_branch(work, other, {"skills/demo/skillci/rules/stop.yaml": "id: stop\n"})
    m = forge.open_pr(
        title="skill(demo): do not stop early",
        body="diagnosis…",
        base="main",
        head_branch=other,
        labels=["premature_stop"],
        patch_id="bbbb2222",
        skill="demo",
    ).number
    forge.set_status(m, state="failure", description="regression on 1/5 tasks")
    forge.close(m, "rejected: regression on task-3 (evidence: run-17)")
    previous = forge.find_by_patch("bbbb2222")
    assert [(p.number, p.state) for p in previous] == [(m, PRState.closed)]
    assert forge.find_by_patch("aaaa1111")[0].state == PRState.merged
    assert [p.number for p in forge.list_prs(state=PRState.closed, label="skillci")] == [m]
    assert [p.number for p in forge.list_prs(state=PRState.merged, label="skillci")] == [n]
    assert forge.branch_sha(other) is None
