"""The Skill package: its files, byte for byte, plus parsed views of them.

A :class:`SkillPackage` *is* its files (relative POSIX path -> bytes). Parsed views
(manifest, frontmatter, rules, on-demand docs) are computed from those bytes on demand, so
load -> save of an untouched package cannot change a byte, and an edit (a patch op) is an
explicit replacement of one file's bytes.

Layout (docs/design/140): an Agent Skills folder is used as-is, and skillci's own parts
never collide with the skill's names — one manifest file plus one namespaced folder:

    skillci.yaml                     the manifest
    SKILL.md                         the skill's own bootstrap (and everything else the
                                     skill ships: scripts/, references/, assets/, examples/, …)
    skillci/rules/*.yaml             executable rules
    skillci/{workflows,tools,recovery}/*.md   on-demand docs
    skillci/examples/*.jsonl  skillci/evals/{smoke,regression,security}.yaml
    skillci/evals/triggers.yaml      the trigger suite (skillci.skill.triggers)
    skillci/CHANGELOG.md  skillci/COMPATIBILITY.md

Anything outside ``skillci.yaml`` and ``skillci/`` (other than SKILL.md) is a *bundled*
file: carried along unchanged. The pre-0.x layout (``manifest.yaml`` with ``rules/`` …
at the top) is refused with a hint to run ``skillci skill migrate`` (see ``migration``).
Every other module names these paths through the constants and helpers below.
"""

from __future__ import annotations

import functools
import os
import stat
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NoReturn

import yaml

import skillci.skill.yamlio as yamlio
from skillci.errors import SkillFormatError
from skillci.fsutil import tree_hash
from skillci.skill.models import (
    EVAL_LIST_FILES,
    EvalList,
    Manifest,
    Rule,
    RuleFile,
    SkillFrontmatter,
)
from skillci.skill.tokens import DEFAULT_ENCODING, count_tokens

MANIFEST = "skillci.yaml"
SKILL_MD = "SKILL.md"
SKILLCI_DIR = "skillci"
CHANGELOG = f"{SKILLCI_DIR}/CHANGELOG.md"
COMPATIBILITY = f"{SKILLCI_DIR}/COMPATIBILITY.md"
RULES_DIR = f"{SKILLCI_DIR}/rules"
EXAMPLES_DIR = f"{SKILLCI_DIR}/examples"
EVALS_DIR = f"{SKILLCI_DIR}/evals"
#: The skill's trigger suite: queries that should and should not load it (design 210).
TRIGGERS = f"{EVALS_DIR}/triggers.yaml"
WORKFLOWS_DIR = f"{SKILLCI_DIR}/workflows"
TOOLS_DIR = f"{SKILLCI_DIR}/tools"
RECOVERY_DIR = f"{SKILLCI_DIR}/recovery"
ON_DEMAND_DIRS = (WORKFLOWS_DIR, TOOLS_DIR, RECOVERY_DIR)
#: Top-level names that are skillci's own (a plain skill may not use them).
SKILLCI_ONLY = (MANIFEST, SKILLCI_DIR)
#: The manifest of the old layout (manifest.yaml + rules/ … at the package root).
LEGACY_MANIFEST = "manifest.yaml"
#: Suffixes of the skill's own documents an agent reads on demand (references, guides).
DOC_SUFFIXES = (".md", ".markdown", ".mdx", ".txt", ".rst")
_NOT_LOADED = ("license", "licence", "notice", "copying", "third_party", "changelog")
IGNORED_DIRS = frozenset({".git", "__pycache__", ".skillci", ".mypy_cache", ".pytest_cache"})
MAX_FILE_BYTES = 5 * 1024 * 1024


@dataclass(frozen=True)
class LocatedRule:
    """A rule with the file and 1-based line where it is defined."""

    rule: Rule
    file: str
    line: int
    index: int  # position within its file


@dataclass(frozen=True, eq=False)
class SkillPackage:
    """An immutable skill package. ``files`` maps relative POSIX paths to bytes."""

    files: Mapping[str, bytes]
    root: str = field(default="<memory>")
    executable: frozenset[str] = field(default=frozenset(), compare=False)
    _parsed: dict[str, tuple[Any, yaml.Node | None]] = field(
        default_factory=dict, repr=False, compare=False
    )

    # ------------------------------------------------------------------ construction

    @classmethod
    def from_dir(cls, path: str | Path) -> SkillPackage:
        """Read every file under ``path`` (byte-exact). Requires a manifest.yaml."""
        p = Path(path)
        if not p.is_dir():
            raise SkillFormatError(
                "not a directory", file=str(p), hint="pass the skill package directory"
            )
        pkg = cls(read_tree(p), root=str(p), executable=read_executables(p))
        require_package(pkg.files, str(p))
        return pkg

    def with_files(self, changes: Mapping[str, bytes | None]) -> SkillPackage:
        """A new package with files replaced (bytes) or removed (None)."""
        files = dict(self.files)
        for rel, data in changes.items():
            check_relpath(rel)
            if data is None:
                files.pop(rel, None)
            else:
                files[rel] = data
        return SkillPackage(files, root=self.root, executable=self.executable & set(files))

    def to_dir(self, path: str | Path) -> list[str]:
        """Write the package to ``path``: changed files atomically, removed files deleted.

        Returns the relative paths that were written or removed. Untouched files are not
        rewritten. (For an all-or-nothing update of several files use
        ``skillci.patch.transaction``.)
        """
        from skillci.fsutil import atomic_write_bytes

        root = Path(path)
        existing = read_tree(root) if root.is_dir() else {}
        changed: list[str] = []
        for rel, data in sorted(self.files.items()):
            if existing.get(rel) != data:
                atomic_write_bytes(root / rel, data)
                changed.append(rel)
            set_executable(root / rel, rel in self.executable)
        for rel in sorted(set(existing) - set(self.files)):
            (root / rel).unlink()
            changed.append(rel)
        return changed

    # ------------------------------------------------------------------ identity

    @functools.cached_property
    def content_hash(self) -> str:
        return tree_hash(self.files.items())

    def text(self, rel: str) -> str:
        if rel not in self.files:
            raise SkillFormatError("file is missing", file=self._path(rel))
        return yamlio.decode(self.files[rel], self._path(rel))

    def _path(self, rel: str) -> str:
        return rel if self.root == "<memory>" else os.path.join(self.root, rel)

    def display_path(self, rel: str) -> str:
        return self._path(rel)

    # ------------------------------------------------------------------ parsed views

    def yaml_doc(self, rel: str) -> tuple[Any, yaml.Node | None]:
        """(data, node tree) of a YAML file, parsed once per package instance."""
        if rel not in self._parsed:
            self._parsed[rel] = yamlio.load(self.text(rel), self._path(rel))
        return self._parsed[rel]

    @functools.cached_property
    def manifest(self) -> Manifest:
        data, node = self.yaml_doc(MANIFEST)
        return yamlio.validate(Manifest, data, node, self._path(MANIFEST))

    @functools.cached_property
    def skill_md(self) -> yamlio.Frontmatter:
        return yamlio.split_frontmatter(self.text(SKILL_MD))

    @functools.cached_property
    def frontmatter(self) -> SkillFrontmatter:
        fm = self.skill_md
        path = self._path(SKILL_MD)
        if not fm.present:
            raise SkillFormatError(
                "SKILL.md has no YAML frontmatter",
                file=path,
                line=1,
                hint="start SKILL.md with ---, name: and description:, then ---",
            )
        data, node = yamlio.load(fm.yaml_text, path, line_offset=1)
        return yamlio.validate(SkillFrontmatter, data, node, path, line_offset=1)

    @property
    def body(self) -> str:
        return self.skill_md.body

    @property
    def encoding(self) -> str:
        try:
            return self.manifest.target_runtime.tokenizer or DEFAULT_ENCODING
        except SkillFormatError:
            return DEFAULT_ENCODING

    def tokens(self, text: str) -> int:
        return count_tokens(text, self.encoding)

    # ------------------------------------------------------------------ file groups

    def rule_files(self) -> list[str]:
        return sorted(
            r for r in self.files if under(r, RULES_DIR) and r.endswith((".yaml", ".yml"))
        )

    def on_demand_files(self) -> list[str]:
        return sorted(r for r in self.files if is_on_demand_file(r))

    def example_files(self) -> list[str]:
        return sorted(r for r in self.files if under(r, EXAMPLES_DIR) and r.endswith(".jsonl"))

    def bundled_files(self) -> list[str]:
        """The skill's own files other than SKILL.md: everything outside skillci's parts."""
        return sorted(r for r in self.files if r != SKILL_MD and not is_skillci_owned(r))

    def iter_rules(self) -> Iterator[LocatedRule]:
        """Every rule in rules/*.yaml (raises on the first invalid one)."""
        for rel in self.rule_files():
            yield from self.rules_in(rel)

    def rules_in(self, rel: str) -> list[LocatedRule]:
        data, node = self.yaml_doc(rel)
        path = self._path(rel)
        rf = yamlio.validate(RuleFile, data, node, path, strip_prefix=single_rule_prefix(data))
        out = []
        for i, rule in enumerate(rf.rules):
            loc: list[int | str] = ["rules", i, "id"] if not single_rule_prefix(data) else ["id"]
            line, _ = yamlio.locate(node, loc)
            out.append(LocatedRule(rule, rel, line + 1, i))
        return out

    @functools.cached_property
    def rules(self) -> list[LocatedRule]:
        return list(self.iter_rules())

    def rule(self, rule_id: str) -> LocatedRule | None:
        for lr in self.rules:
            if lr.rule.id == rule_id:
                return lr
        return None

    def eval_list(self, name: str) -> EvalList:
        if name not in EVAL_LIST_FILES:
            raise SkillFormatError(f"unknown eval list {name!r}", hint=", ".join(EVAL_LIST_FILES))
        rel = eval_list_path(name)
        if rel not in self.files:
            return EvalList()
        data, node = self.yaml_doc(rel)
        return yamlio.validate(EvalList, data or {}, node, self._path(rel))


def single_rule_prefix(data: Any) -> tuple[str, int] | tuple[()]:
    """Error-location prefix that a one-rule file does not have in its YAML."""
    return ("rules", 0) if isinstance(data, dict) and "rules" not in data else ()


def under(rel: str, part: str) -> bool:
    """Whether ``rel`` lies anywhere inside the package folder ``part``."""
    return rel.startswith(part + "/")


def in_part(rel: str, part: str) -> bool:
    """Whether ``rel`` is a file directly inside the package folder ``part``."""
    return under(rel, part) and "/" not in rel[len(part) + 1 :]


def is_skillci_owned(rel: str) -> bool:
    """The manifest and everything under ``skillci/``: skillci's parts, not the skill's."""
    return rel == MANIFEST or under(rel, SKILLCI_DIR)


def is_rule_file(rel: str) -> bool:
    return in_part(rel, RULES_DIR) and rel.endswith((".yaml", ".yml"))


def is_example_file(rel: str) -> bool:
    return in_part(rel, EXAMPLES_DIR) and rel.endswith(".jsonl")


def is_on_demand_file(rel: str) -> bool:
    return any(under(rel, d) for d in ON_DEMAND_DIRS) and rel.endswith(".md")


def is_loadable_doc(rel: str) -> bool:
    """A document of the skill's own that an agent loads on demand (not licence text)."""
    name = rel.rsplit("/", 1)[-1].lower()
    return (
        rel != SKILL_MD
        and not is_skillci_owned(rel)
        and name.endswith(DOC_SUFFIXES)
        and not name.startswith(_NOT_LOADED)
    )


def loadable_docs(files: Mapping[str, bytes]) -> list[str]:
    """The skill's own on-demand documents among ``files`` (text that decodes as UTF-8)."""
    out = []
    for rel in sorted(files):
        if is_loadable_doc(rel):
            try:
                files[rel].decode("utf-8")
            except UnicodeDecodeError:
                continue
            out.append(rel)
    return out


def rule_file_path(rule_id: str) -> str:
    """Default home of a new rule: skillci/rules/<id with dots as dashes>.yaml."""
    return f"{RULES_DIR}/{rule_id.replace('.', '-')}.yaml"


def eval_list_path(name: str) -> str:
    return f"{EVALS_DIR}/{name}.yaml"


def on_demand_path(kind: str, stem: str) -> str:
    """``skillci/<workflows|tools|recovery>/<stem>.md`` for a kind in singular or plural."""
    folder = {"workflow": WORKFLOWS_DIR, "tool": TOOLS_DIR}.get(kind, f"{SKILLCI_DIR}/{kind}")
    return f"{folder}/{stem}.md"


def require_package(files: Mapping[str, bytes], where: str) -> None:
    """Raise unless ``files`` are a skillci package in the current layout."""
    if MANIFEST in files:
        return
    if LEGACY_MANIFEST in files:
        raise SkillFormatError(
            f"old package layout ({LEGACY_MANIFEST} + rules/ … at the top): not loaded",
            file=where,
            hint=f"run `skillci skill migrate {where}` (see docs/design/140)",
        )
    hint = (
        f"this looks like a plain skill: run `skillci skill import {where}`"
        if SKILL_MD in files
        else f"a package needs {MANIFEST} and {SKILL_MD}"
    )
    raise SkillFormatError(f"no {MANIFEST}: not a skillci package", file=where, hint=hint)


def check_relpath(rel: str) -> None:
    p = PurePosixPath(rel)
    if p.is_absolute() or ".." in p.parts or not rel or rel != p.as_posix():
        raise SkillFormatError(
            f"unsafe package path {rel!r}", hint="use a relative path inside the package"
        )


def read_executables(root: Path) -> frozenset[str]:
    """Relative paths of files under ``root`` with the owner-executable bit set."""
    return frozenset(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file()
        and not (set(p.relative_to(root).parts) & IGNORED_DIRS)
        and p.stat().st_mode & 0o100
    )


def set_executable(path: Path, executable: bool) -> None:
    mode = path.stat().st_mode
    new = (mode | 0o111) if executable else (mode & ~0o111)
    if new != mode:
        path.chmod(new)


def read_tree(root: Path, notes: list[str] | None = None) -> dict[str, bytes]:
    """All files under ``root`` as {relative posix path: bytes}, byte-exact.

    What a package cannot represent is refused with the file named (exit 2), never read:
    a file name that is not UTF-8, a FIFO, a device or socket, a symlinked directory, a
    symlink that leaves the folder or dangles, a file over ``MAX_FILE_BYTES``. A symlink to
    a file inside the folder is read as that file's bytes, with a note in ``notes``.
    """
    out: dict[str, bytes] = {}
    real_root = root.resolve()
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        for d in sorted(dirnames):
            if (here / d).is_symlink():
                _refuse(
                    here / d,
                    "is a symlinked directory, which a package cannot hold",
                    "replace the link with the folder",
                )
            _check_name(here / d)
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        for name in sorted(filenames):
            full = here / name
            _check_name(full)
            rel = full.relative_to(root).as_posix()
            st = full.lstat()
            if stat.S_ISLNK(st.st_mode):
                target = full.resolve()
                if not target.is_relative_to(real_root) or not target.is_file():
                    _refuse(
                        full,
                        "symlink leaves the skill folder or dangles",
                        "replace the link with the file it points to",
                    )
                if notes is not None:
                    notes.append(
                        f"{full}: symlink to {target.relative_to(real_root)} read as a copy"
                    )
                st = target.stat()
            elif not stat.S_ISREG(st.st_mode):
                _refuse(full, "is not a regular file (FIFO, device or socket)", "remove it")
            if st.st_size > MAX_FILE_BYTES:
                _refuse(
                    full,
                    f"file is {st.st_size} bytes; the limit is {MAX_FILE_BYTES}",
                    "keep large data out of skills",
                )
            if st.st_mode & 0o7000 and notes is not None:
                notes.append(
                    f"{_shown(full)}: mode {st.st_mode & 0o7777:o}: only the executable bit is kept"
                )
            try:
                out[rel] = full.read_bytes()
            except OSError as exc:
                _refuse(full, f"file cannot be read ({exc.strerror})", "make it readable")
    return out


def _refuse(path: Path, problem: str, hint: str) -> NoReturn:
    raise SkillFormatError(f"this {problem}", file=_shown(path), hint=hint)


def _shown(path: Path) -> str:
    """A path that prints on one line whatever bytes its name holds."""
    raw = os.fsdecode(path).encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", "backslashreplace").replace("\n", "\\n").replace("\r", "\\r")


def _check_name(path: Path) -> None:
    try:
        path.name.encode("utf-8")
    except UnicodeEncodeError:
        _refuse(path, "file name is not UTF-8", "rename it to a UTF-8 name")
    if any(ch in path.name for ch in "\n\r"):
        _refuse(path, "file name has a line break", "rename it")
