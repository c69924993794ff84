"""Candidate branches: one commit per patch, with trailers that say where it came from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from skillci.errors import ConflictError
from skillci.vcs.git import Git

CAS_RETRIES = 5

TRAILER_KEYS = (
    "Skill-Patch-Id",
    "Failure-Class",
    "Supporting-Runs",
    "Diagnosis-Confidence",
    "Compiler",
)


def candidate_branch(skill: str, failure_class: str, patch_id: str) -> str:
    """``skillci/<skill>/<failure-class>-<patch-hash8>``."""
    fc = re.sub(r"[^a-z0-9-]+", "-", failure_class.lower().replace("_", "-")).strip("-") or "patch"
    return f"skillci/{skill}/{fc}-{patch_id.removeprefix('patch-')[:8]}"


def commit_message(subject: str, body: str, trailers: Mapping[str, str]) -> str:
    lines = [subject.strip(), ""]
    if body.strip():
        lines += [body.strip(), ""]
    lines += [f"{k}: {v}" for k, v in trailers.items() if v]
    return "\n".join(lines) + "\n"


def parse_trailers(message: str) -> dict[str, str]:
    out = {}
    for line in message.strip().splitlines()[::-1]:
        m = re.match(r"^([A-Za-z-]+): (.*)$", line)
        if not m:
            break
        out[m.group(1)] = m.group(2)
    return out


@dataclass(frozen=True)
class CandidateCommit:
    branch: str | None
    sha: str
    base_sha: str
    created: bool  # False when the branch already held exactly this change


def commit_candidate(
    git: Git,
    *,
    base: str,
    branch: str | None,
    skill_dir: str,
    changes: Mapping[str, bytes | None],
    executable: frozenset[str] = frozenset(),
    subject: str,
    body: str = "",
    trailers: Mapping[str, str] | None = None,
) -> CandidateCommit:
    """Commit ``changes`` (paths relative to ``skill_dir``) on ``branch`` from ``base``.

    Idempotent: if ``branch`` already exists and its tree equals the new tree, nothing is
    written; that holds when a concurrent process creates the same change between our read
    and our compare-and-swap. ``branch=None`` writes the commit without a ref (a stack's
    intermediate commit). The working tree and index are never touched.
    """
    base_sha = git.rev(base)
    if base_sha is None:
        from skillci.errors import GitError

        raise GitError(f"base {base!r} does not exist", hint="pass --base with an existing branch")
    prefix = skill_dir.strip("/") + "/" if skill_dir.strip("/") else ""
    full = {prefix + rel: data for rel, data in changes.items()}
    exe = frozenset(prefix + rel for rel in executable)
    tree = git.tree_with(base_sha, full, executable=exe)
    message = commit_message(subject, body, trailers or {})
    if branch is None:  # an intermediate commit of a stack: reachable from the stack's tip
        return CandidateCommit(None, git.commit_tree(tree, [base_sha], message), base_sha, True)
    ref = f"refs/heads/{branch}"
    existing = git.rev(ref)
    sha: str | None = None
    for _ in range(CAS_RETRIES):
        if existing is not None and not git.dry_run and git.tree_of(existing) == tree:
            return CandidateCommit(branch, existing, base_sha, created=False)
        sha = sha or git.commit_tree(tree, [base_sha], message)
        try:
            git.update_ref(ref, sha, existing, reason=f"skillci: candidate {branch}")
            return CandidateCommit(branch, sha, base_sha, created=True)
        except ConflictError:
            # another process wrote this branch between our read and our write: if it
            # holds the same change, it is ours too; otherwise the candidate is rebuilt
            existing = git.rev(ref)
    raise ConflictError(f"{ref} changed concurrently {CAS_RETRIES} times; gave up")
