"""The Skill package: its files, byte for byte, plus parsed views of them.

A :class:`SkillPackage` *is* its files (relative POSIX path -> bytes). Parsed views
(manifest, frontmatter, rules, on-demand docs) are computed from those bytes on demand, so
load -> save of an untouched package cannot change a byte, and an edit (a patch op) is an
explicit replacement of one file's bytes. Layout (the seed essay's):

    manifest.yaml  SKILL.md  rules/*.yaml  workflows/*.md  tools/*.md  recovery/*.md
    examples/*.jsonl  evals/{smoke,regression,security}.yaml  CHANGELOG.md

Anything else (scripts/, references/, assets/ of an imported Anthropic skill) is a
*bundled* file: carried along unchanged.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import yaml

from skillci.errors import SkillFormatError
from skillci.fsutil import tree_hash
from skillci.skill import yamlio
from skillci.skill.models import (
    EVAL_LIST_FILES,
    EvalList,
    Manifest,
    Rule,
    RuleFile,
    SkillFrontmatter,
)
from skillci.skill.tokens import DEFAULT_ENCODING, count_tokens

MANIFEST = "manifest.yaml"
SKILL_MD = "SKILL.md"
CHANGELOG = "CHANGELOG.md"
RULES_DIR = "rules"
EXAMPLES_DIR = "examples"
EVALS_DIR = "evals"
ON_DEMAND_DIRS = ("workflows", "tools", "recovery")
#: Files and dirs that are skillci's own metadata, not part of the rendered skill.
SKILLCI_ONLY = (MANIFEST, CHANGELOG, RULES_DIR, EXAMPLES_DIR, EVALS_DIR)
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
        if MANIFEST not in pkg.files:
            hint = (
                f"this looks like a plain skill: run `skillci skill import {p}`"
                if SKILL_MD in pkg.files
                else "a package needs manifest.yaml and SKILL.md"
            )
            raise SkillFormatError(
                "no manifest.yaml: not a skillci package", file=str(p), hint=hint
            )
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
            r for r in self.files if _top(r) == RULES_DIR and r.endswith((".yaml", ".yml"))
        )

    def on_demand_files(self) -> list[str]:
        return sorted(r for r in self.files if _top(r) in ON_DEMAND_DIRS and r.endswith(".md"))

    def example_files(self) -> list[str]:
        return sorted(r for r in self.files if _top(r) == EXAMPLES_DIR and r.endswith(".jsonl"))

    def bundled_files(self) -> list[str]:
        """Files that are neither skillci metadata nor SKILL.md nor on-demand docs."""
        od = set(self.on_demand_files())
        return sorted(
            r for r in self.files if r != SKILL_MD and _top(r) not in SKILLCI_ONLY and r not in od
        )

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
        rel = f"{EVALS_DIR}/{name}.yaml"
        if rel not in self.files:
            return EvalList()
        data, node = self.yaml_doc(rel)
        return yamlio.validate(EvalList, data or {}, node, self._path(rel))


def single_rule_prefix(data: Any) -> tuple[str, int] | tuple[()]:
    """Error-location prefix that a one-rule file does not have in its YAML."""
    return ("rules", 0) if isinstance(data, dict) and "rules" not in data else ()


def _top(rel: str) -> str:
    return rel.split("/", 1)[0]


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


def read_tree(root: Path) -> dict[str, bytes]:
    """All regular files under ``root`` as {relative posix path: bytes}. Symlinks refused."""
    out: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED_DIRS)
        for name in sorted(filenames):
            full = Path(dirpath) / name
            rel = full.relative_to(root).as_posix()
            if full.is_symlink():
                raise SkillFormatError(
                    "symlinks are not allowed in a skill package",
                    file=str(full),
                    hint="replace the link with the file it points to",
                )
            size = full.stat().st_size
            if size > MAX_FILE_BYTES:
                raise SkillFormatError(
                    f"file is {size} bytes; the limit is {MAX_FILE_BYTES}",
                    file=str(full),
                    hint="keep large data out of skills",
                )
            out[rel] = full.read_bytes()
    return out
