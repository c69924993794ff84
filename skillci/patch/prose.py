"""Prose and bundled files as changes: the section-level diff of two package versions (pure).

A person's change to a skill is mostly prose: SKILL.md's body, an on-demand document, a
reference, a script. :func:`skill_diff` says which markdown *sections* changed (a section
is a heading line plus the text up to the next heading of any level, so an edit is named by
the innermost heading above it; text before the first heading is the ``(preamble)``), which
non-markdown files were added, changed or removed, which frontmatter fields changed, and
the tokens before and after of each. skillci's own metadata (manifest, rules, evals,
CHANGELOG) is not prose: rule changes are judged in :mod:`skillci.patch.version`.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import Literal

from pydantic import BaseModel, Field

from skillci.errors import SkillciError
from skillci.patch.markdown import headings
from skillci.skill import yamlio
from skillci.skill.package import SKILL_MD, SkillPackage

SKILL_DIFF_SCHEMA_VERSION = 1
PREAMBLE = "(preamble)"
Change = Literal["added", "changed", "removed", "moved", "renamed"]
#: how alike a removed and an added text must be to count as one moved (git's rename default)
SIMILARITY = 0.5
FileKind = Literal["skill_md", "on_demand", "reference", "script", "asset", "other"]
_KIND_BY_TOP: dict[str, FileKind] = {
    "references": "reference",
    "reference": "reference",
    "docs": "reference",
    "examples": "reference",
    "scripts": "script",
    "bin": "script",
    "assets": "asset",
    "templates": "asset",
}
FRONTMATTER_FIELDS = ("name", "description", "license", "allowed_tools", "metadata")


class SectionChange(BaseModel):
    """One markdown section added, changed or removed."""

    file: str = Field(description="Package-relative markdown file.")
    section: str = Field(description="Heading path, e.g. 'Usage > Forms', or '(preamble)'.")
    change: Change = Field(description="added, changed, removed, or moved (from_file/section).")
    tokens_before: int = Field(description="Tokens of the section before (0 when added).")
    tokens_after: int = Field(description="Tokens of the section after (0 when removed).")
    from_file: str | None = Field(default=None, description="Where a moved section was.")
    from_section: str | None = Field(default=None, description="Its heading path there.")


class FileChange(BaseModel):
    """One prose or bundled file added, changed or removed."""

    path: str = Field(description="Package-relative path.")
    kind: FileKind = Field(description="What the file is to the skill.")
    change: Change = Field(description="added, changed, removed, or renamed (from_path).")
    from_path: str | None = Field(default=None, description="The old path of a renamed file.")
    binary: bool = Field(default=False, description="Not UTF-8 text (no tokens counted).")
    tokens_before: int = Field(default=0, description="Tokens before (text files).")
    tokens_after: int = Field(default=0, description="Tokens after (text files).")
    sections: list[str] = Field(
        default_factory=list, description="Changed sections of a markdown file, in order."
    )


class SkillDiff(BaseModel):
    """What a change does to a skill's prose and files (``skillci skill diff``)."""

    schema_version: int = SKILL_DIFF_SCHEMA_VERSION
    skill: str = Field(description="Skill name (at the head).")
    base_version: str | None = Field(default=None, description="Manifest version at the base.")
    head_version: str | None = Field(default=None, description="Manifest version at the head.")
    frontmatter: list[str] = Field(
        default_factory=list, description="SKILL.md frontmatter fields that changed."
    )
    sections: list[SectionChange] = Field(
        default_factory=list, description="Changed markdown sections (SKILL.md and .md files)."
    )
    files: list[FileChange] = Field(default_factory=list, description="Changed files.")
    skill_md_tokens: tuple[int, int] = Field(
        default=(0, 0), description="Tokens of SKILL.md (frontmatter + body) before and after."
    )

    @property
    def empty(self) -> bool:
        return not (self.frontmatter or self.sections or self.files)


# --------------------------------------------------------------------------- sections


def sections(text: str) -> list[tuple[str, str]]:
    """(heading path, section text) of a markdown text, in order; duplicates get ' #2'."""
    heads = headings(text)
    raw: list[tuple[str, str]] = []
    if not heads or heads[0][0] > 0:
        raw.append((PREAMBLE, text[: heads[0][0] if heads else len(text)]))
    stack: list[tuple[int, str]] = []
    for i, (pos, level, title) in enumerate(heads):
        while stack and stack[-1][0] >= level:
            stack.pop()
        stack.append((level, title))
        end = heads[i + 1][0] if i + 1 < len(heads) else len(text)
        raw.append((" > ".join(t for _, t in stack), text[pos:end]))
    seen: dict[str, int] = {}
    result: list[tuple[str, str]] = []
    for name, body in raw:
        if name == PREAMBLE and not body.strip():
            continue
        seen[name] = seen.get(name, 0) + 1
        result.append((name if seen[name] == 1 else f"{name} #{seen[name]}", body))
    return result


def section_changes(
    file: str, before: str | None, after: str | None, pkg: SkillPackage
) -> list[SectionChange]:
    """Sections of one markdown file that were added, changed or removed (in after-order,
    removed ones last). Whitespace at the ends of a section does not count."""
    b = dict(sections(before or ""))
    a = dict(sections(after or ""))
    out: list[SectionChange] = []
    rows: list[tuple[str, Change, str | None, str | None]] = [
        (name, "added" if name not in b else "changed", b.get(name), text)
        for name, text in a.items()
        if name not in b or b[name].strip() != text.strip()
    ]
    rows += [(name, "removed", text, None) for name, text in b.items() if name not in a]
    for name, change, old, new in rows:
        out.append(
            SectionChange(
                file=file,
                section=name,
                change=change,
                tokens_before=pkg.tokens(old or ""),
                tokens_after=pkg.tokens(new or ""),
            )
        )
    return out


# --------------------------------------------------------------------------- files


def file_kind(pkg: SkillPackage, rel: str) -> FileKind:
    if rel == SKILL_MD:
        return "skill_md"
    if rel in pkg.on_demand_files():
        return "on_demand"
    return _KIND_BY_TOP.get(rel.split("/", 1)[0], "other") if "/" in rel else "other"


def prose_files(pkg: SkillPackage) -> set[str]:
    """The package's prose and bundled files: SKILL.md, on-demand docs, bundled files."""
    return {SKILL_MD, *pkg.on_demand_files(), *pkg.bundled_files()} & set(pkg.files)


def _text(pkg: SkillPackage, rel: str) -> str | None:
    try:
        return pkg.files[rel].decode("utf-8")
    except UnicodeDecodeError:
        return None


def _fm_fields(before: SkillPackage, after: SkillPackage) -> list[str]:
    b = yamlio.split_frontmatter(_text(before, SKILL_MD) or "")
    a = yamlio.split_frontmatter(_text(after, SKILL_MD) or "")
    if b.yaml_text == a.yaml_text:
        return []
    try:
        fb, fa = before.frontmatter, after.frontmatter
    except SkillciError:  # an unparsable side: the frontmatter as a whole changed
        return ["frontmatter"]
    return [f for f in FRONTMATTER_FIELDS if getattr(fb, f, None) != getattr(fa, f, None)] or [
        "frontmatter"
    ]


def _one_file(
    before: SkillPackage, after: SkillPackage, rel: str
) -> tuple[FileChange, list[SectionChange]]:
    pkg = after if rel in after.files else before
    change: Change = (
        "added" if rel not in before.files else "removed" if rel not in after.files else "changed"
    )
    tb, ta = _prose(before, rel), _prose(after, rel)
    if tb is None or ta is None:
        return FileChange(path=rel, kind=file_kind(pkg, rel), change=change, binary=True), []
    fc = FileChange(
        path=rel,
        kind=file_kind(pkg, rel),
        change=change,
        tokens_before=before.tokens(tb),
        tokens_after=after.tokens(ta),
    )
    found = section_changes(rel, tb, ta, pkg) if rel.endswith(".md") else []
    fc.sections = [s.section for s in found]
    return fc, found


def _prose(pkg: SkillPackage, rel: str) -> str | None:
    """The text of ``rel`` ("" when absent; SKILL.md without its frontmatter), None when
    it is not UTF-8."""
    if rel not in pkg.files:
        return ""
    text = _text(pkg, rel)
    if text is not None and rel == SKILL_MD:
        return yamlio.split_frontmatter(text).body
    return text


def skill_diff(before: SkillPackage, after: SkillPackage) -> SkillDiff:
    """The prose/file diff of two versions of one package."""
    paths = sorted(prose_files(before) | prose_files(after))
    files: list[FileChange] = []
    secs: list[SectionChange] = []
    for rel in paths:
        if before.files.get(rel) == after.files.get(rel):
            continue
        fc, found = _one_file(before, after, rel)
        secs += found
        if rel == SKILL_MD and not fc.sections:
            continue  # only the frontmatter changed: reported as fields
        files.append(fc)
    files, secs = _renames(before, after, files, secs)
    secs = _moves(secs, before, after)
    return SkillDiff(
        skill=_name(after) or _name(before) or "?",
        base_version=_version(before),
        head_version=_version(after),
        frontmatter=_fm_fields(before, after) if SKILL_MD in before.files else [],
        sections=secs,
        files=files,
        skill_md_tokens=(_tokens_of(before), _tokens_of(after)),
    )


def similarity(a: str, b: str) -> float:
    """How alike two texts are, by lines (0..1), as git's rename detection measures it."""
    if a == b:
        return 1.0
    la, lb = a.splitlines(), b.splitlines()
    if not la or not lb:
        return 0.0
    m = difflib.SequenceMatcher(None, la, lb, autojunk=False)
    return m.ratio() if m.real_quick_ratio() >= SIMILARITY else 0.0


def _pairs(gone: list[tuple[str, str]], new: list[tuple[str, str]]) -> list[tuple[str, str, float]]:
    """Best one-to-one (old, new, similarity) pairs at or above :data:`SIMILARITY`."""
    scored = sorted(
        ((similarity(ta, tb), a, b) for a, ta in gone for b, tb in new),
        key=lambda t: -t[0],
    )
    used_a: set[str] = set()
    used_b: set[str] = set()
    out: list[tuple[str, str, float]] = []
    for score, a, b in scored:
        if score >= SIMILARITY and a not in used_a and b not in used_b:
            used_a.add(a)
            used_b.add(b)
            out.append((a, b, score))
    return out


def _renames(
    before: SkillPackage,
    after: SkillPackage,
    files: list[FileChange],
    secs: list[SectionChange],
) -> tuple[list[FileChange], list[SectionChange]]:
    """A removed and an added file alike enough are one renamed file; its sections are
    then compared across the two paths (unchanged ones are not reported)."""
    gone = [f.path for f in files if f.change == "removed"]
    new = [f.path for f in files if f.change == "added"]
    if not gone or not new:
        return files, secs

    def text(pkg: SkillPackage, rel: str) -> str:
        t = _prose(pkg, rel)
        return t if t is not None else pkg.files[rel].hex()

    pairs = _pairs([(g, text(before, g)) for g in gone], [(n, text(after, n)) for n in new])
    if not pairs:
        return files, secs
    old_of = {b: a for a, b, _ in pairs}
    moved = set(old_of) | set(old_of.values())
    files = [f for f in files if f.path not in moved]
    secs = [s for s in secs if s.file not in moved]
    for old, rel, _score in pairs:
        tb, ta = _prose(before, old), _prose(after, rel)
        binary = tb is None or ta is None
        found = (
            []
            if binary or not rel.endswith(".md")
            else [s.model_copy(update={"file": rel}) for s in section_changes(rel, tb, ta, after)]
        )
        files.append(
            FileChange(
                path=rel,
                kind=file_kind(after, rel),
                change="renamed",
                from_path=old,
                binary=binary,
                tokens_before=0 if binary else before.tokens(tb or ""),
                tokens_after=0 if binary else after.tokens(ta or ""),
                sections=[s.section for s in found],
            )
        )
        secs += found
    files.sort(key=lambda f: f.path)
    return files, secs


def _moves(
    secs: list[SectionChange], before: SkillPackage, after: SkillPackage
) -> list[SectionChange]:
    """A removed and an added section alike enough are one moved section (within a file or
    across files: a static compile moving a section to an on-demand file)."""
    gone = [s for s in secs if s.change == "removed"]
    new = [s for s in secs if s.change == "added"]
    if not gone or not new:
        return secs

    def body(pkg: SkillPackage, s: SectionChange) -> str:
        text = _prose(pkg, s.file) or ""
        return dict(sections(text)).get(s.section, "")

    def key(s: SectionChange) -> str:
        return f"{s.file}\0{s.section}"

    pairs = _pairs(
        [(key(s), _drop_heading(body(before, s))) for s in gone],
        [(key(s), _drop_heading(body(after, s))) for s in new],
    )
    if not pairs:
        return secs
    by_key = {key(s): s for s in gone + new}
    paired = {a for a, _, _ in pairs} | {b for _, b, _ in pairs}
    out = [s for s in secs if key(s) not in paired]
    for a, b, _score in pairs:
        old, moved = by_key[a], by_key[b]
        out.append(
            moved.model_copy(
                update={
                    "change": "moved",
                    "tokens_before": old.tokens_before,
                    "from_file": old.file,
                    "from_section": old.section,
                }
            )
        )
    return out


def _drop_heading(text: str) -> str:
    """A section's text without its heading line (a moved section may change level)."""
    first, _, rest = text.partition("\n")
    return rest if first.lstrip().startswith("#") else text


def _tokens_of(pkg: SkillPackage) -> int:
    text = _text(pkg, SKILL_MD) if SKILL_MD in pkg.files else ""
    return pkg.tokens(text or "")


def _name(pkg: SkillPackage) -> str | None:
    try:
        return pkg.manifest.name
    except SkillciError:
        try:
            return pkg.frontmatter.name
        except SkillciError:
            return None


def _version(pkg: SkillPackage) -> str | None:
    try:
        return pkg.manifest.version
    except SkillciError:
        return None


def changed_section_names(diff: SkillDiff, files: Iterable[str]) -> list[str]:
    """``file § section`` labels of the diff's changed sections in ``files``."""
    want = set(files)
    return [f"{s.file} § {s.section}" for s in diff.sections if s.file in want]
