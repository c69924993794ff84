"""Release tags: annotated ``<skill>@<version>`` on the merge commit of a release."""

from __future__ import annotations

import semver

from skillci.vcs.git import Git


def tag_name(skill: str, version: str) -> str:
    return f"{skill}@{version}"


def release_tags(git: Git, skill: str) -> dict[str, str]:
    """{version: commit} of every release tag of ``skill``, oldest version first."""
    prefix = f"refs/tags/{skill}@"
    out = git.read("for-each-ref", "--format=%(refname) %(objectname) %(*objectname)", "refs/tags/")
    found: dict[str, str] = {}
    for line in out.splitlines():
        parts = line.split(" ")
        if not parts[0].startswith(prefix):
            continue
        version = parts[0][len(prefix) :]
        try:
            semver.Version.parse(version)
        except ValueError:
            continue
        peeled = parts[2] if len(parts) > 2 and parts[2] else parts[1]
        found[version] = peeled
    return dict(sorted(found.items(), key=lambda kv: semver.Version.parse(kv[0])))


def tag_message(git: Git, tag: str) -> str | None:
    """The message of annotated tag ``tag`` (None when absent or lightweight)."""
    target = git.ref_target(f"refs/tags/{tag}")
    if target is None or git.read("cat-file", "-t", target) != "tag":
        return None
    raw = git._run(["cat-file", "tag", target]).stdout.decode(errors="replace")
    _headers, _sep, body = raw.partition("\n\n")
    return body
