"""The Agent Skills specification's frontmatter rules, read the way its reference validator
reads them (``skills-ref``, https://agentskills.io/specification).

Pure. :func:`spec_problems` takes SKILL.md's text and the skill's folder name and returns
every problem ``skills_ref.validate`` reports, each with the frontmatter field, a stable
reason, where it is, and a severity that says who it breaks (docs/design/330):

- ``error``: the spec or a harness refuses or misreads the skill — no frontmatter, YAML
  nothing parses, duplicate keys (parsers keep different ones), a missing or empty
  ``name``/``description``, a name that breaks the name rules or differs from its folder,
  a description over 1,024 or a ``compatibility`` over 500 characters.
- ``warning`` (``error`` under ``strict``): harnesses read it, the spec's validator
  refuses it — a field outside the spec (naming the harnesses that read it), YAML that
  only StrictYAML (the validator's parser) refuses: flow style ``[a, b]``, anchors, tags.

The validator parses with StrictYAML: every scalar is its literal text (``name: 123`` is
the string ``"123"``, ``description: null`` the string ``"null"``). Here PyYAML composes
the node tree and scalars are read as their node text, which is the same thing.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from typing import Any, Literal

import yaml

Severity = Literal["error", "warning"]

MAX_NAME = 64
MAX_DESCRIPTION = 1024
MAX_COMPATIBILITY = 500
SPEC_FIELDS = frozenset(
    {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}
)

# Fields outside the spec that a harness reads, and which harnesses (docs/design/330).
CLAUDE_CODE = "Claude Code"
HARNESS_FIELDS: dict[str, tuple[str, ...]] = {
    "when_to_use": (CLAUDE_CODE,),
    "argument-hint": (CLAUDE_CODE,),
    "disable-model-invocation": (CLAUDE_CODE,),
    "user-invocable": (CLAUDE_CODE,),
    "model": (CLAUDE_CODE,),
    "context": (CLAUDE_CODE,),
    "agent": (CLAUDE_CODE,),
    "hooks": (CLAUDE_CODE,),
}

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class SpecProblem:
    """One way a SKILL.md breaks the Agent Skills spec."""

    field: str  # frontmatter field, or "frontmatter" for the block as a whole
    reason: str  # stable key, e.g. "missing", "folder-mismatch", "unknown-field"
    message: str
    severity: Severity
    hint: str
    line: int = 1  # 1-based, in SKILL.md
    col: int = 1


class _Strict(Exception):
    def __init__(self, what: str, mark: Any) -> None:
        super().__init__(what)
        self.what = what
        self.mark = mark


def _check_strict_events(text: str) -> None:
    """Raise :class:`_Strict` at the first construct StrictYAML refuses and PyYAML reads."""
    for ev in yaml.parse(text, Loader=_Loader):
        if isinstance(ev, yaml.AliasEvent) or getattr(ev, "anchor", None):
            raise _Strict("an anchor or alias (&x / *x)", ev.start_mark)
        if (
            isinstance(ev, yaml.ScalarEvent)
            and ev.tag is not None
            and ev.implicit
            == (
                False,
                False,
            )
        ):
            raise _Strict(f"a tag ({ev.tag})", ev.start_mark)
        if isinstance(ev, yaml.CollectionStartEvent):
            if ev.tag is not None and not ev.implicit:
                raise _Strict(f"a tag ({ev.tag})", ev.start_mark)
            if ev.flow_style:
                raise _Strict("flow style ([a, b] or {a: b})", ev.start_mark)


def _data(node: yaml.Node) -> Any:
    """StrictYAML's view: scalars are their text; raises ValueError on a duplicate key."""
    if isinstance(node, yaml.ScalarNode):
        return node.value
    if isinstance(node, yaml.SequenceNode):
        return [_data(n) for n in node.value]
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for k, v in node.value:
            key = str(_data(k))
            if key in out:
                raise _Duplicate(key, k.start_mark)
            out[key] = _data(v)
        return out
    return None


class _Duplicate(Exception):
    def __init__(self, key: str, mark: Any) -> None:
        super().__init__(key)
        self.key = key
        self.mark = mark


def _key_positions(node: yaml.Node | None, line_offset: int) -> dict[str, tuple[int, int]]:
    if not isinstance(node, yaml.MappingNode):
        return {}
    out: dict[str, tuple[int, int]] = {}
    for k, _v in node.value:
        if isinstance(k, yaml.ScalarNode):
            out.setdefault(k.value, (k.start_mark.line + 1 + line_offset, k.start_mark.column + 1))
    return out


def spec_problems(text: str, folder: str | None, *, strict: bool = False) -> list[SpecProblem]:
    # long: one block per rule of skills_ref.validate, in the reference validator's order (design 330)
    """Every problem ``skills_ref.validate`` finds in a SKILL.md (``folder``: the skill's
    directory name; None when the package is not in a folder)."""
    warn: Severity = "error" if strict else "warning"
    if not text.startswith("---"):
        msg = "SKILL.md must start with YAML frontmatter (---)"
        if text.startswith("\ufeff"):
            msg += "; it starts with a byte-order mark"
        return [
            SpecProblem(
                "frontmatter",
                "no-frontmatter",
                msg,
                "error",
                "start SKILL.md with ---, name:, description:, --- (and save it without a BOM)",
            )
        ]
    parts = text.split("---", 2)
    if len(parts) < 3:
        return [
            SpecProblem(
                "frontmatter",
                "unclosed",
                "SKILL.md frontmatter is not closed with ---",
                "error",
                "end the frontmatter with a line ---",
            )
        ]
    yaml_text = parts[1]
    # parts[1] starts right after the opening ---; line 1 of it is the rest of line 1
    offset = 0
    out: list[SpecProblem] = []
    try:
        node = yaml.compose(yaml_text, Loader=_Loader)
    except (yaml.YAMLError, RecursionError) as exc:
        mark = getattr(exc, "problem_mark", None)
        line = (mark.line + 1 + offset) if mark is not None else 1
        col = (mark.column + 1) if mark is not None else 1
        problem = getattr(exc, "problem", None) or "invalid YAML"
        return [
            SpecProblem(
                "frontmatter",
                "yaml-syntax",
                f"frontmatter YAML does not parse: {problem}",
                "error",
                "fix the YAML syntax at that position (quote values that contain ': ')",
                line,
                col,
            )
        ]
    try:
        _check_strict_events(yaml_text)
    except _Strict as exc:
        m = exc.mark
        out.append(
            SpecProblem(
                "frontmatter",
                "yaml-strict",
                f"frontmatter uses {exc.what}, which the spec's validator (StrictYAML) "
                "refuses; harnesses read it",
                warn,
                "write lists as '- item' lines, or as one space-separated string "
                "(allowed-tools: Bash Read)",
                (m.line + 1 + offset) if m else 1,
                (m.column + 1) if m else 1,
            )
        )
        # the validator stops here; harnesses go on reading, and so does lint
    try:
        data = _data(node) if node is not None else ""
    except _Duplicate as exc:
        return [
            SpecProblem(
                exc.key,
                "duplicate-key",
                f"frontmatter field {exc.key!r} is given twice; parsers keep different ones",
                "error",
                "keep one",
                exc.mark.line + 1 + offset,
                exc.mark.column + 1,
            )
        ]
    if not isinstance(data, dict):
        return [
            SpecProblem(
                "frontmatter",
                "not-mapping",
                "SKILL.md frontmatter is not a YAML mapping",
                "error",
                "write the frontmatter as name: ... and description: ... lines",
            )
        ]
    at = _key_positions(node, offset)
    extra = sorted(set(data) - SPEC_FIELDS)
    for key in extra:
        harnesses = HARNESS_FIELDS.get(key, ())
        who = f"read by {', '.join(harnesses)}" if harnesses else "read by no harness skillci knows"
        hint = (
            "keep it for those harnesses, or move it under metadata: for the spec"
            if harnesses
            else f"move it under metadata: ({key}: ...) or drop it"
        )
        out.append(
            SpecProblem(
                key,
                "unknown-field",
                f"frontmatter field {key!r} is not in the Agent Skills spec ({who})",
                warn,
                hint,
                *at.get(key, (1, 1)),
            )
        )
    out += _name(data, folder, at)
    out += _description(data, at)
    if "compatibility" in data:
        value = data["compatibility"]
        where = at.get("compatibility", (1, 1))
        if not isinstance(value, str):
            out.append(
                SpecProblem(
                    "compatibility",
                    "not-string",
                    "frontmatter compatibility is not a string",
                    "error",
                    "write compatibility as one line of text",
                    *where,
                )
            )
        elif len(value) > MAX_COMPATIBILITY:
            out.append(
                SpecProblem(
                    "compatibility",
                    "too-long",
                    f"frontmatter compatibility is {len(value)} characters; the spec allows "
                    f"{MAX_COMPATIBILITY}",
                    "error",
                    "shorten it; put details in the body",
                    *where,
                )
            )
    return out


def _name(
    data: dict[str, Any], folder: str | None, at: dict[str, tuple[int, int]]
) -> list[SpecProblem]:
    where = at.get("name", (1, 1))
    if "name" not in data:
        return [
            SpecProblem(
                "name",
                "missing",
                "frontmatter name is missing (required by the spec)",
                "error",
                "add name: <lowercase-hyphenated>, equal to the folder name",
            )
        ]
    raw = data["name"]
    if not isinstance(raw, str) or not raw.strip():
        return [
            SpecProblem(
                "name",
                "empty",
                "frontmatter name is empty",
                "error",
                "give the skill a name",
                *where,
            )
        ]
    name = unicodedata.normalize("NFKC", raw.strip())
    out: list[SpecProblem] = []

    def bad(reason: str, what: str, hint: str) -> None:
        out.append(SpecProblem("name", reason, f"frontmatter name {what}", "error", hint, *where))

    rename = "use lowercase letters, digits and single hyphens, e.g. pdf-tools"
    if len(name) > MAX_NAME:
        bad("too-long", f"is {len(name)} characters; the spec allows {MAX_NAME}", "shorten it")
    if name != name.lower():
        bad("uppercase", f"{name!r} has capitals; the spec wants lowercase", rename)
    if name.startswith("-") or name.endswith("-"):
        bad("hyphen-edge", f"{name!r} starts or ends with a hyphen", rename)
    if "--" in name:
        bad("double-hyphen", f"{name!r} has consecutive hyphens", rename)
    if not all(c.isalnum() or c == "-" for c in name):
        bad("invalid-chars", f"{name!r} has characters other than letters, digits, -", rename)
    if folder is not None and unicodedata.normalize("NFKC", folder) != name:
        bad(
            "folder-mismatch",
            f"{name!r} differs from its folder {folder!r}; harnesses find skills by folder",
            f"rename the folder to {name}, or set name: {folder}",
        )
    return out


def _description(data: dict[str, Any], at: dict[str, tuple[int, int]]) -> list[SpecProblem]:
    where = at.get("description", (1, 1))
    if "description" not in data:
        return [
            SpecProblem(
                "description",
                "missing",
                "frontmatter description is missing (required: agents choose skills by it)",
                "error",
                "add description: what the skill does and when to use it",
            )
        ]
    value = data["description"]
    if not isinstance(value, str) or not value.strip():
        return [
            SpecProblem(
                "description",
                "empty",
                "frontmatter description is empty",
                "error",
                "say what the skill does and when to use it",
                *where,
            )
        ]
    if len(value) > MAX_DESCRIPTION:
        return [
            SpecProblem(
                "description",
                "too-long",
                f"frontmatter description is {len(value)} characters; the spec allows "
                f"{MAX_DESCRIPTION}",
                "error",
                "shorten it; move details into the body",
                *where,
            )
        ]
    return []
