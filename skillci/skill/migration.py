"""Move an old-layout package (``manifest.yaml``, ``rules/`` … at the top) to the current one.

The old layout kept skillci's parts beside the skill's own files, so a skill with its own
``examples/`` or ``evals/`` folder could not be a package. The current layout (see
``skillci.skill.package`` and docs/design/140) keeps them in ``skillci.yaml`` plus
``skillci/``. Migration is pure: it maps {path: bytes} to {path: bytes}, moving exactly the
files the old layout read as skillci's own and rewriting, in Markdown and the manifest, the
references to moved paths (entry points, links and code spans naming a moved file).
Every other byte stays as it was.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from skillci.errors import SkillFormatError
from skillci.skill.package import (
    CHANGELOG,
    COMPATIBILITY,
    EVALS_DIR,
    EXAMPLES_DIR,
    LEGACY_MANIFEST,
    MANIFEST,
    RECOVERY_DIR,
    RULES_DIR,
    SKILLCI_DIR,
    TOOLS_DIR,
    WORKFLOWS_DIR,
)

#: Old top-level folder -> new folder, and whether only its .md files were skillci's.
_LEGACY_DIRS: dict[str, tuple[str, bool]] = {
    "rules": (RULES_DIR, False),
    "examples": (EXAMPLES_DIR, False),
    "evals": (EVALS_DIR, False),
    "workflows": (WORKFLOWS_DIR, True),
    "tools": (TOOLS_DIR, True),
    "recovery": (RECOVERY_DIR, True),
}
_ENTRY_RE = re.compile(
    r"^(?P<key>\s+(?:workflows|tools|recovery):[ \t]*)(?P<q>['\"]?)"
    r"(?P<dir>workflows|tools|recovery)(?P<slash>/?)(?P=q)[ \t]*$",
    re.MULTILINE,
)


@dataclass(frozen=True)
class Migration:
    """What migrating one package does."""

    moves: dict[str, str]  # old path -> new path
    rewritten: list[str]  # new paths whose text had references rewritten
    files: dict[str, bytes] = field(repr=False)  # the migrated package's files

    @property
    def changed(self) -> bool:
        return bool(self.moves or self.rewritten)


def legacy_target(rel: str) -> str | None:
    """Where the old layout's skillci-owned file ``rel`` goes (None: the skill's own)."""
    if rel == LEGACY_MANIFEST:
        return MANIFEST
    if rel == "CHANGELOG.md":
        return CHANGELOG
    if rel == "COMPATIBILITY.md":
        return COMPATIBILITY
    top, _, rest = rel.partition("/")
    if top in _LEGACY_DIRS and rest:
        new_dir, md_only = _LEGACY_DIRS[top]
        if not md_only or rel.endswith(".md"):
            return f"{new_dir}/{rest}"
    return None


def migrate_files(files: Mapping[str, bytes], where: str) -> Migration:
    """The current-layout package for an old-layout one (see module docstring)."""
    if MANIFEST in files:
        return Migration({}, [], dict(files))  # already current: nothing to do
    if LEGACY_MANIFEST not in files:
        raise SkillFormatError(
            f"no {LEGACY_MANIFEST}: not an old-layout skillci package",
            file=where,
            hint=f"import a plain skill with `skillci skill import {where}`",
        )
    clash = sorted(r for r in files if r == SKILLCI_DIR or r.startswith(SKILLCI_DIR + "/"))
    if clash:
        raise SkillFormatError(
            f"the skill already has its own {SKILLCI_DIR}/ folder ({clash[0]})",
            file=f"{where}/{clash[0]}",
            hint=f"rename {SKILLCI_DIR}/ in the skill, then migrate",
        )
    moves = {rel: new for rel in sorted(files) if (new := legacy_target(rel)) is not None}
    out = {moves.get(rel, rel): data for rel, data in files.items()}
    rewritten: list[str] = []
    md_moves = {old: new for old, new in moves.items() if old.endswith(".md")}
    for rel in sorted(out):
        if rel != MANIFEST and not rel.endswith(".md"):
            continue
        try:
            text = out[rel].decode("utf-8")
        except UnicodeDecodeError:
            continue  # not ours to rewrite; the file moves unchanged
        new_text = _rewrite_manifest(text) if rel == MANIFEST else _rewrite_refs(text, md_moves)
        if new_text != text:
            out[rel] = new_text.encode("utf-8")
            rewritten.append(rel)
    return Migration(moves, rewritten, out)


def _rewrite_manifest(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        new_dir = _LEGACY_DIRS[m["dir"]][0]
        return f"{m['key']}{m['q']}{new_dir}{m['slash']}{m['q']}"

    return _ENTRY_RE.sub(repl, text)


def _rewrite_refs(text: str, moves: Mapping[str, str]) -> str:
    """Rewrite ``](old)``, ``](./old)`` and `` `old` `` references to moved files."""
    for old, new in moves.items():
        pat = re.compile(r"(?P<pre>\]\((?:\./)?|`)" + re.escape(old) + r"(?P<post>[)#`])")
        text = pat.sub(r"\g<pre>" + new.replace("\\", "\\\\") + r"\g<post>", text)
    return text
