"""A patch as a unified diff over the package files, checked by parsing it back.

``render_diff`` writes a git-style unified diff (``a/`` and ``b/`` prefixes, ``/dev/null``
for added and removed files, ``\\ No newline at end of file`` markers). ``verify_diff``
parses that text with ``unidiff`` and checks that the files it touches are exactly the
files whose bytes changed and that every one of them was declared by an op: a mismatch
means apply and its bookkeeping disagree, which is an internal error.
"""

from __future__ import annotations

import difflib

from unidiff.patch import PatchSet

from skillci.errors import InternalError
from skillci.patch.apply import Applied
from skillci.skill.package import SkillPackage

NO_NEWLINE = "\\ No newline at end of file\n"


def _lines(data: bytes | None) -> list[str]:
    if data is None:
        return []
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        raise InternalError("binary files cannot be part of a patch diff") from None


def _file_diff(rel: str, old: bytes | None, new: bytes | None, context: int) -> str:
    a, b = _lines(old), _lines(new)
    src = "/dev/null" if old is None else f"a/{rel}"
    dst = "/dev/null" if new is None else f"b/{rel}"
    out = [f"diff --git a/{rel} b/{rel}\n"]
    if old is None:
        out.append("new file mode 100644\n")
    elif new is None:
        out.append("deleted file mode 100644\n")
    body = list(difflib.unified_diff(a, b, src, dst, n=context))
    if not body:
        return ""
    out += body[:2]
    for line in body[2:]:
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + NO_NEWLINE)
    return "".join(out)


def render_diff(before: SkillPackage, after: SkillPackage, context: int = 3) -> str:
    """Unified diff of every file whose bytes differ, in path order."""
    b, a = before.files, after.files
    return "".join(
        _file_diff(rel, b.get(rel), a.get(rel), context)
        for rel in sorted(set(b) | set(a))
        if b.get(rel) != a.get(rel)
    )


def touched_by_diff(diff_text: str) -> set[str]:
    """Package-relative paths a unified diff touches (parsed with unidiff)."""
    out: set[str] = set()
    for pf in PatchSet(diff_text):
        for name in (pf.source_file, pf.target_file):
            if name and name != "/dev/null":
                out.add(name[2:] if name.startswith(("a/", "b/")) else name)
    return out


def diff_applied(applied: Applied, context: int = 3) -> str:
    """The diff of an applied patch, verified against the files its ops declare."""
    text = render_diff(applied.before, applied.after, context)
    verify_diff(text, applied)
    return text


def verify_diff(diff_text: str, applied: Applied) -> None:
    touched = touched_by_diff(diff_text)
    changed = set(applied.changed_files)
    undeclared = touched - applied.declared_files
    if touched != changed or undeclared:
        raise InternalError(
            "the patch diff does not match its ops: "
            f"diff touches {sorted(touched)}, bytes changed in {sorted(changed)}, "
            f"undeclared {sorted(undeclared)}"
        )
