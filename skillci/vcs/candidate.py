"""Candidate branches: one commit per patch, with trailers that say where it came from."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from skillci.vcs.git import Git

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
    branch: str
    sha: str
    base_sha: str
    created: bool  # False when the branch already held exactly this change


def commit_candidate(
    git: Git,
    *,
    base: str,
    branch: str,
    skill_dir: str,
    changes: Mapping[str, bytes | None],
    executable: frozenset[str] = frozenset(),
    subject: str,
    body: str = "",
    trailers: Mapping[str, str] | None = None,
) -> CandidateCommit:
    """Commit ``changes`` (paths relative to ``skill_dir``) on ``branch`` from ``base``.

    Idempotent: if ``branch`` already exists and its tree equals the new tree, nothing is
    written. The working tree and index are never touched.
    """
    base_sha = git.rev(base)
    if base_sha is None:
        from skillci.errors import GitError

        raise GitError(f"base {base!r} does not exist", hint="pass --base with an existing branch")
    prefix = skill_dir.strip("/") + "/" if skill_dir.strip("/") else ""
    full = {prefix + rel: data for rel, data in changes.items()}
    exe = frozenset(prefix + rel for rel in executable)
    tree = git.tree_with(base_sha, full, executable=exe)
    existing = git.rev(f"refs/heads/{branch}")
    if existing is not None and not git.dry_run and git.tree_of(existing) == tree:
        return CandidateCommit(branch, existing, base_sha, created=False)
    sha = git.commit_tree(tree, [base_sha], commit_message(subject, body, trailers or {}))
    git.update_ref(f"refs/heads/{branch}", sha, existing, reason=f"skillci: candidate {branch}")
    return CandidateCommit(branch, sha, base_sha, created=True)
