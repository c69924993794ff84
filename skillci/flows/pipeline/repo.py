"""The pipeline's publish stage: one candidate branch, a commit per compile stage, a PR.

The skill must already be a package in the repository (``skills/<name>`` on the base
branch) holding the task's skill: each commit carries exactly one stage's change
(input -> static -> Fast -> Deep) on top of the base, so reviewers read three small
diffs and ``skillci gate`` compares base and head like for any other PR. When the repo
has no such package, or its files differ from the task's skill where a stage changed
them, nothing is written and the stage is ``skipped`` with the reason (the deliverable
in the run dir is unaffected). Idempotent: a branch that already holds the same final
tree is left alone; an open PR for the same final package gets its body updated.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from pathlib import Path

from skillci.errors import GitError
from skillci.flows.context import RepoContext
from skillci.flows.pipeline.manifest import RunManifest
from skillci.flows.pipeline.reports import stats_table
from skillci.skill.package import MANIFEST, SkillPackage
from skillci.vcs.candidate import candidate_branch, commit_candidate, commit_message

SKIPPED = "skipped: "


@dataclass(frozen=True)
class CandidateRun:
    """What the publish stage needs from a pipeline run (plain data, no back-reference)."""

    root: Path
    manifest: RunManifest
    skill_name: str
    skill_source: str
    task_id: str
    model: str
    external_model: str
    stages: tuple[Path, Path, Path, Path]
    """The skill dirs of input, static, Fast and Deep (S_final), in order."""
    fast_report: Path


def _changes(a: SkillPackage, b: SkillPackage) -> dict[str, bytes | None]:
    return {
        rel: b.files.get(rel)
        for rel in sorted(set(a.files) | set(b.files))
        if a.files.get(rel) != b.files.get(rel)
    }


def pr_body(m: RunManifest, final: SkillPackage) -> str:
    rows = [
        (label, m.stage(stage).stats)  # type: ignore[arg-type]
        for label, stage in (
            ("raw", "raw_eval"),
            ("static", "static_eval"),
            ("fast", "fast_eval"),
            ("final (S_final)", "final_eval"),
        )
    ]
    notes = [f"- **{s.name}**: {'; '.join(s.notes)}" for s in m.stages if s.notes]
    return (
        f"<!-- skillci:pipeline={final.content_hash[:16]} -->\n"
        f"## skillci compile pipeline for `{m.identity.task}`\n\n"
        f"Student `{m.identity.student.route}`, compiler `{m.identity.compiler.route}`, "
        f"harness `{m.identity.harness}`; run `{m.run_id}`.\n\n"
        "One commit per stage: static compile, Fast, Deep.\n\n"
        + stats_table(rows)
        + "\n"
        + "\n".join(notes)
        + "\n\nDecide with `skillci gate --skill <skill> --base <base> --head <branch>` "
        "(or `skillci review --pr N`).\n"
    )


def publish_candidate(run: CandidateRun, base: str) -> list[str]:
    """Commit the stages and open (or update) the PR; notes for the manifest."""
    try:
        ctx = RepoContext.open(run.root)
    except GitError:
        return [SKIPPED + "not a git repository (the deliverable is in the run dir)"]
    git = ctx.git
    name = run.skill_name
    skill_dir = f"skills/{name}"
    base_sha = git.rev(base)
    if base_sha is None:
        return [SKIPPED + f"base branch {base!r} does not exist"]
    on_base = git.files_at(base_sha, skill_dir)
    if MANIFEST not in on_base:
        return [
            SKIPPED + f"{skill_dir} is not a package on {base}: import the task's skill "
            f"(`skillci skill import {run.skill_source} --out {skill_dir}`) and "
            "commit it to get a pull request"
        ]
    pkgs = [SkillPackage.from_dir(p) for p in run.stages]
    raw = pkgs[0]
    touched = {rel for a, b in itertools.pairwise(pkgs) for rel in _changes(a, b)}
    differ = sorted(rel for rel in touched if on_base.get(rel) != raw.files.get(rel))
    if differ:
        return [
            SKIPPED + f"{skill_dir} on {base} differs from the task's skill in "
            f"{', '.join(differ[:3])}; re-import it to get a pull request"
        ]
    parent = base_sha
    commits = 0
    notes: list[str] = []
    fast_report = run.fast_report
    fast_pid = None
    if fast_report.is_file():
        from skillci.compile.fast import FastReport

        rep = FastReport.model_validate_json(fast_report.read_bytes())
        fast_pid = rep.patch.pid if rep.patch is not None else None
    for stage, a, b in (
        ("static", pkgs[0], pkgs[1]),
        ("fast", pkgs[1], pkgs[2]),
        ("deep", pkgs[2], pkgs[3]),
    ):
        ch = _changes(a, b)
        if not ch:
            notes.append(f"{stage}: no change, no commit")
            continue
        tree = git.tree_with(
            parent,
            {f"{skill_dir}/{rel}": data for rel, data in ch.items()},
            executable=frozenset(f"{skill_dir}/{rel}" for rel in b.executable),
        )
        trailers = {
            "Skill": skill_dir,
            "Pipeline-Stage": stage,
            "Pipeline-Run": run.manifest.run_id,
            "Compiler": run.external_model,
            "Student": run.model,
            "Skill-Patch-Id": fast_pid if stage == "fast" and fast_pid else "",
        }
        msg = commit_message(
            f"skill({name}): {stage} compile for {run.model}",
            f"{len(ch)} file(s): {', '.join(sorted(ch)[:6])}",
            trailers,
        )
        parent = git.commit_tree(tree, [parent], msg)
        commits += 1
    final = pkgs[3]
    branch = candidate_branch(name, "pipeline", "patch-" + final.content_hash)
    existing = git.rev(f"refs/heads/{branch}")
    if existing is None or git.tree_of(existing) != git.tree_of(parent):
        git.update_ref(f"refs/heads/{branch}", parent, existing, reason="skillci pipeline")
    notes += [f"branch {branch}", f"{commits} commit(s)"]
    if commits == 0:
        return [SKIPPED + "no stage changed the skill: nothing to propose", *notes]
    pid = f"pipeline-{final.content_hash[:16]}"
    body = pr_body(run.manifest, final)
    pr, _ = ctx.forge.upsert_pr(
        patch_id=pid,
        title=f"skill({name}): compiled for {run.model} — {run.task_id}",
        body=body,
        base=base,
        head_branch=branch,
        labels=["skillci", "pipeline"],
        skill=skill_dir,
    )
    notes.append(f"pr #{pr.number}")
    return notes


def propose_static(
    input_dir: Path,
    source: SkillPackage,
    result: SkillPackage,
    body: str,
    *,
    base: str,
    student: str,
    planner: str | None,
) -> list[str]:
    """``compile static`` in a repository: the change as one commit on a candidate branch
    and a PR (opened, or updated when one is open for the same result). The input must be
    a package committed on ``base`` exactly as it is on disk; otherwise nothing is written
    and the note says why."""
    try:
        ctx = RepoContext.open(input_dir)
    except GitError:
        return [SKIPPED + "not in a git repository"]
    git = ctx.git
    try:
        rel = input_dir.resolve().relative_to(ctx.root.resolve()).as_posix()
    except ValueError:
        return [SKIPPED + f"{input_dir} is outside the repository"]
    base_sha = git.rev(base)
    if base_sha is None:
        return [SKIPPED + f"base branch {base!r} does not exist"]
    on_base = git.files_at(base_sha, rel)
    if MANIFEST not in on_base:
        return [SKIPPED + f"{rel} is not a package committed on {base}"]
    if on_base != dict(source.files):
        return [SKIPPED + f"{rel} differs from {base}: commit it first"]
    ch = _changes(source, result)
    if not ch:
        return [SKIPPED + "static compile changed nothing"]
    name = result.manifest.name
    pid = f"static-{result.content_hash[:16]}"
    branch = candidate_branch(name, "static", "patch-" + result.content_hash)
    commit_candidate(
        git,
        base=base_sha,
        branch=branch,
        skill_dir=rel,
        changes=ch,
        executable=result.executable,
        subject=f"skill({name}): static compile for {student}",
        body=f"{len(ch)} file(s): {', '.join(sorted(ch)[:6])}",
        trailers={
            "Skill": rel,
            "Compiler": f"static ({planner or 'deterministic'})",
            "Student": student,
        },
    )
    pr, _ = ctx.forge.upsert_pr(
        patch_id=pid,
        title=f"skill({name}): static compile for {student}",
        body=f"<!-- skillci:static={pid} -->\n" + body,
        base=base,
        head_branch=branch,
        labels=["skillci", "static-compile"],
        skill=rel,
    )
    return [f"branch {branch}", f"pr #{pr.number}"]


__all__ = ["SKIPPED", "CandidateRun", "pr_body", "propose_static", "publish_candidate"]
