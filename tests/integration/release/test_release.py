"""`skillci release --pr N` on scratch repos: refusals, the release itself, rejected PRs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.errors import ReleaseRefused
from skillci.flows.context import RepoContext
from skillci.flows.release import release_pr, stamped
from skillci.forge.base import PRState
from skillci.present.mdsafe import md_text
from skillci.release.channels import ChannelStore
from skillci.release.tags import tag_message
from skillci.skill.models import Lifecycle
from skillci.skill.package import SkillPackage
from skillci.vcs.git import Git
from tests.integration.release.conftest import (
    FINISH_RULE,
    ROOT_CHANGELOG,
    SKILL_DIR,
    git,
    make_report,
    open_candidate_pr,
)

ENTRY = """\
repo-debugger 0.7.0 -> 0.7.1
Added:    finish.report-success — reason: reported_success_without_verification (reported success without a passing run of the target test after the last edit); gate repaired 6/6 task(s) failing on base
Modified: test.run-smallest-first — steps changed
Validation: pass rate 25.0% -> 100.0% (95% CI of the difference [+37.5%, +100.0%]), paired test: head won 6 of 6 discordant pair(s), 8 independent pair(s), repair 100.0%, regression 0.0%, tool calls 12.0 -> 10.0, bootstrap tokens unchanged
Compatibility: verified sim/student int8 / skillci-builtin-v1; not yet verified: repo-agent-v4
"""


def test_an_inconclusive_gate_is_refused_and_the_pr_stays_open(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pr = open_candidate_pr(repo)
    ctx = RepoContext.open(repo)
    main_before = git(repo, "rev-parse", "main")
    make_report(repo, pr, inconclusive=True)
    with pytest.raises(ReleaseRefused, match=r"inconclusive — improvement: .*no discordant"):
        release_pr(ctx, pr.number)
    assert main(["release", "--pr", "1", "--repo", str(repo)]) == 2
    assert "inconclusive" in capsys.readouterr().err
    # no verdict, no consequence: the PR is open, nothing merged, tagged or made verified
    assert ctx.forge.get_pr(1).state == PRState.open
    assert git(repo, "rev-parse", "main") == main_before and git(repo, "tag") == ""
    # main did not move, so its manifest still verifies no runtime (no score recorded)
    assert "score:" not in git(repo, "show", f"main:{SKILL_DIR}/skillci.yaml")


def test_release_refuses_without_an_accepting_gate_on_the_current_head(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pr = open_candidate_pr(repo)
    ctx = RepoContext.open(repo)
    main_before = git(repo, "rev-parse", "main")

    with pytest.raises(ReleaseRefused, match=r"no gate run for its head"):
        release_pr(ctx, pr.number)

    make_report(repo, pr)  # accepted, but for this head only
    g = Git(repo)
    tree = g.tree_with(pr.head_sha, {f"{SKILL_DIR}/skillci/examples/more.jsonl": b"{}\n"})
    newer = g.commit_tree(tree, [pr.head_sha], "another commit\n")
    g.update_ref(f"refs/heads/{pr.head_branch}", newer, pr.head_sha)
    with pytest.raises(ReleaseRefused, match=r"gate ran on an older head .*gate-0000000000000001"):
        release_pr(ctx, pr.number)
    # the CLI says the same, exit 2 (invalid input: a precondition is missing)
    assert main(["release", "--pr", "1", "--repo", str(repo)]) == 2
    assert "older head" in capsys.readouterr().err

    # nothing moved: main, tags, PR state
    assert git(repo, "rev-parse", "main") == main_before
    assert git(repo, "tag") == ""
    assert ctx.forge.get_pr(1).state == PRState.open


def test_release_changelog_compatibility_promotion_merge_and_tag(repo: Path) -> None:
    pr = open_candidate_pr(repo)
    report = make_report(repo, pr)
    ctx = RepoContext.open(repo)
    main_before = git(repo, "rev-parse", "main")

    dry = release_pr(RepoContext.open(repo, dry_run=True), pr.number)
    assert dry.dry_run and dry.entry == ENTRY and dry.version == "0.7.1"
    assert git(repo, "rev-parse", "main") == main_before and git(repo, "tag") == ""

    res = release_pr(ctx, pr.number)
    assert res.action == "released" and res.entry == ENTRY
    assert (res.from_version, res.version, res.bump) == ("0.7.0", "0.7.1", "patch")
    assert res.promoted == ["finish.report-success"]

    # one squash commit on main, whose tree is the release commit's tree
    merged = ctx.forge.get_pr(pr.number)
    assert merged.state == PRState.merged and merged.merge_sha == res.merge_sha
    assert git(repo, "rev-parse", "main") == res.merge_sha
    assert git(repo, "rev-parse", f"{res.merge_sha}^") == main_before
    assert git(repo, "rev-parse", f"{res.merge_sha}^{{tree}}") == git(
        repo, "rev-parse", f"{res.release_commit}^{{tree}}"
    )
    # the release commit sits on the PR's head branch, on top of the gated head
    assert git(repo, "rev-parse", f"{res.release_commit}^") == pr.head_sha
    assert git(repo, "rev-parse", pr.head_branch) == res.release_commit

    # annotated tag on the merge commit, message = the entry, then the gate stamp
    assert git(repo, "cat-file", "-t", "repo-debugger@0.7.1") == "tag"
    assert git(repo, "rev-parse", "repo-debugger@0.7.1^{commit}") == res.merge_sha
    assert tag_message(Git(repo), "repo-debugger@0.7.1") == stamped(ENTRY, report)

    # the skill's changelog: the entry first, in a fenced block, after the preamble
    log = (repo / SKILL_DIR / "skillci" / "CHANGELOG.md").read_text()
    day = re.search(r"· (\d{4}-\d\d-\d\d)\n", log)
    assert day is not None
    assert log.startswith(
        "# repo-debugger changelog\n\n"
        "Entries are generated by `skillci release` from the patch's change list and its "
        "gate report.\n\n## 0.7.1\n\n```text\n"
        + ENTRY
        + f"```\n\nPR #1 · gate `gate-0000000000000001` · {day.group(1)}\n\n## 0.7.0\n"
    )
    # the project's own changelog is not touched
    assert (repo / "CHANGELOG.md").read_text() == ROOT_CHANGELOG
    assert "CHANGELOG.md" not in git(repo, "diff", "--name-only", main_before, "main").split()

    # manifest: version bumped and compatibility row added, comments and other keys kept
    pkg = SkillPackage.from_dir(repo / SKILL_DIR)
    m = pkg.manifest
    assert m.version == "0.7.1"
    row = m.compatibility.verified[0]
    assert (row.model, row.quantization, row.harness) == (
        "sim/student",
        "int8",
        "skillci-builtin-v1",
    )
    assert (row.score, row.eval_id, row.version) == (1.0, report.gate_id, "0.7.1")
    before_text = git(repo, "show", f"{main_before}:{SKILL_DIR}/skillci.yaml")
    after_text = (repo / SKILL_DIR / "skillci.yaml").read_text()
    assert after_text.splitlines()[:2] == before_text.splitlines()[:2]  # the comments
    assert after_text.split("compatibility:")[0] == before_text.split("compatibility:")[0].replace(
        "version: 0.7.0", "version: 0.7.1"
    )
    compat_md = (repo / SKILL_DIR / "skillci" / "COMPATIBILITY.md").read_text()
    assert (
        "| sim/student | int8 | skillci-builtin-v1 | verified | 100.0% | gate-0000000000000001 (0.7.1) |"
        in compat_md
    )
    assert (
        "| any | any | legacy-react-agent | incompatible | | missing_structured_tool_results |"
        in compat_md
    )

    # the candidate rule is now active and stamped with the gate; its provenance is kept
    rule = pkg.rule("finish.report-success")
    assert rule is not None and rule.rule.status is Lifecycle.active
    prov = rule.rule.provenance
    assert prov is not None and prov.last_verified_on == report.gate_id
    assert (
        prov.supporting_runs == ["run-a", "run-b"]
        and prov.introduced_by == "patch-0123456789abcdef"
    )
    assert "status: candidate" in FINISH_RULE

    # the channel log: the replaced version became stable (tagged), then the release
    events = ChannelStore(Git(repo)).log("repo-debugger")
    assert [(e.type, e.version, e.gate_id, e.actor) for e in events] == [
        ("init", "0.7.0", None, "alice"),
        ("released", "0.7.1", report.gate_id, "alice"),
    ]
    assert events[1].moves == [] and events[0].moves[0].to_commit == main_before
    assert git(repo, "rev-parse", "repo-debugger@0.7.0^{commit}") == main_before
    # the user's worktree followed main (it was checked out and clean) and is still clean
    assert git(repo, "status", "--porcelain") == ""

    # releasing again is refused: the PR is merged and tagged
    with pytest.raises(ReleaseRefused, match=r"already released as repo-debugger@0\.7\.1"):
        release_pr(ctx, pr.number)


def test_rejected_pr_is_closed_with_its_evidence(repo: Path) -> None:
    pr = open_candidate_pr(repo)
    report = make_report(repo, pr, accept=False)
    main_before = git(repo, "rev-parse", "main")

    assert main(["release", "--pr", "1", "--repo", str(repo), "--dry-run"]) == 1
    assert RepoContext.open(repo).forge.get_pr(1).state == PRState.open

    assert main(["release", "--pr", "1", "--repo", str(repo)]) == 1  # a verdict, exit 1
    ctx = RepoContext.open(repo)
    closed = ctx.forge.get_pr(1)
    assert closed.state == PRState.closed
    final = closed.comments[-1].body
    assert final.startswith("Closed by `skillci release`: the gate rejected head")
    assert "skillci gate: **REJECT**" in final and md_text(report.reasons[0]) in final
    # branch gone; record and pinned head stay
    assert Git(repo).rev(f"refs/heads/{pr.head_branch}") is None
    assert git(repo, "rev-parse", "refs/skillci/pr/1/head") == pr.head_sha
    assert [e["type"] for e in ctx.forge.log(1)][-2:] == ["comment", "closed"]
    # nothing released
    assert git(repo, "rev-parse", "main") == main_before and git(repo, "tag") == ""
    with pytest.raises(ReleaseRefused, match="is closed"):
        release_pr(ctx, 1)


def test_release_resumes_after_an_interruption(repo: Path) -> None:
    """A crash after the release commit (before merge) or after the merge (before the tag)."""
    pr = open_candidate_pr(repo)
    report = make_report(repo, pr)
    ctx = RepoContext.open(repo)
    # interrupted between merge and tag: simulate by releasing, then deleting the tag
    res = release_pr(ctx, pr.number)
    git(repo, "tag", "-d", "repo-debugger@0.7.1")
    again = release_pr(ctx, pr.number)
    assert again.action == "tagged" and again.entry == ENTRY
    assert git(repo, "rev-parse", "repo-debugger@0.7.1^{commit}") == res.merge_sha
    assert tag_message(Git(repo), "repo-debugger@0.7.1") == stamped(ENTRY, report)


def test_release_resumes_a_pushed_release_commit(repo: Path) -> None:
    pr = open_candidate_pr(repo)
    make_report(repo, pr)
    ctx = RepoContext.open(repo)
    # run the release up to the release commit only, as a crash before the merge would leave it
    from skillci.flows import release as flow

    calls: list[int] = []

    def boom(*a: object, **k: object) -> None:
        calls.append(1)
        raise KeyboardInterrupt

    mp = pytest.MonkeyPatch()
    mp.setattr(type(ctx.forge), "merge", boom)
    with pytest.raises(KeyboardInterrupt):
        flow.release_pr(ctx, pr.number)
    mp.undo()
    assert calls == [1]
    head = ctx.forge.get_pr(1).head_sha
    assert head != pr.head_sha and "Skillci-Release: 0.7.1" in git(
        repo, "log", "-1", "--format=%B", head
    )
    res = flow.release_pr(ctx, pr.number)
    assert res.action == "released" and res.release_commit == head and res.entry == ENTRY
    assert git(repo, "rev-parse", "repo-debugger@0.7.1^{commit}") == res.merge_sha


def test_release_refuses_when_the_base_changed_the_skill_since_the_gate(repo: Path) -> None:
    first = open_candidate_pr(repo)
    make_report(repo, first)
    second = open_candidate_pr(repo, "skillci/repo-debugger/fix-2", "patch-2")
    make_report(repo, second, gate_id="gate-0000000000000002")
    ctx = RepoContext.open(repo)
    assert release_pr(ctx, first.number).version == "0.7.1"
    with pytest.raises(ReleaseRefused, match=r"main changed skills/repo-debugger since gate"):
        release_pr(ctx, second.number)
    assert ctx.forge.get_pr(second.number).state == PRState.open


def test_a_base_that_moved_outside_the_skill_keeps_the_verdict(repo: Path) -> None:
    pr = open_candidate_pr(repo)
    make_report(repo, pr)
    g = Git(repo)
    tip = g.rev("main")
    assert tip is not None
    docs = g.commit_tree(g.tree_with(tip, {"docs/notes.md": b"notes\n"}), [tip], "docs\n")
    g.advance_branch("main", docs, tip)
    res = release_pr(RepoContext.open(repo), pr.number)
    assert res.entry == ENTRY
    assert git(repo, "rev-parse", "main^") == docs  # squashed on top of the moved base
    assert (repo / "docs" / "notes.md").read_text() == "notes\n"
