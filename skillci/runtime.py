"""The deployment API: which skill version should this request load?

    from skillci.runtime import resolve, materialize

    r = resolve("/srv/skills-repo", "repo-debugger", request_id=req.id)
    skill_dir = materialize("/srv/skills-repo", r, "/var/cache/skills")  # files at r.commit
    # ... run the agent with skill_dir; record RunRecord.runtime.skill.version = r.version

Deliberately light: git plumbing reads and pydantic, nothing else from skillci (no model
clients, no runners). The answer comes from the channel log
(``refs/skillci/channel-log/<skill>``, see docs/release.md): with a running canary of weight
``w``, requests whose ``bucket(request_id)`` (sha256, see :mod:`skillci.release.routing`)
is below ``w`` get the canary, every other request — and any request without an id — gets
stable. ``channel="canary"`` with no running canary resolves to stable.
"""

from __future__ import annotations

from pathlib import Path

from skillci.errors import InvalidInputError
from skillci.release.channels import ChannelStore
from skillci.release.models import Channel, Resolution
from skillci.release.routing import bucket, pick
from skillci.skill.package import MANIFEST
from skillci.vcs.git import Git

__all__ = ["Resolution", "bucket", "materialize", "resolve"]


def resolve(
    repo: str | Path,
    skill: str,
    request_id: str | None = None,
    channel: Channel | None = None,
) -> Resolution:
    """The version, commit and package path ``skill`` should be loaded from."""
    git = Git(repo)
    state = ChannelStore(git).state(skill)
    if state is None or state.stable is None:
        raise InvalidInputError(
            f"{skill} has no stable release in {repo}",
            hint=f"run `skillci channel init {skill}` or release a version first",
        )
    canary = state.canary
    if channel is None:
        chosen: Channel = pick(canary.weight or 0, request_id) if canary else "stable"
    else:
        chosen = channel if (channel == "stable" or canary is not None) else "stable"
    p = state.canary if chosen == "canary" and state.canary else state.stable
    return Resolution(
        skill=skill,
        channel=chosen,
        version=p.version,
        commit=p.commit,
        tag=p.tag,
        path=state.path,
        bucket=bucket(request_id) if request_id is not None else None,
        weight=canary.weight if canary else None,
    )


def materialize(repo: str | Path, resolution: Resolution, dest: str | Path) -> Path:
    """Write the skill package at ``resolution.commit`` to ``dest/<skill>@<version>`` (once;
    an existing directory is reused) and return that directory."""
    import shutil
    import tempfile

    out = Path(dest) / f"{resolution.skill}@{resolution.version}"
    if (out / MANIFEST).is_file():
        return out
    files = Git(repo).files_at(resolution.commit, resolution.path)
    if not files:
        raise InvalidInputError(f"{resolution.path} is empty at {resolution.commit[:12]}")
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
    try:
        for rel, data in files.items():
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
        tmp.replace(out)  # atomic; fails when another process got there first
    except OSError:
        if not (out / MANIFEST).is_file():
            raise
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return out
