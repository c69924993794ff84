"""YAML and frontmatter parsing that keeps line numbers for every error.

PyYAML's composed node tree carries a start mark for every key and value; a pydantic
validation error's ``loc`` is walked down that tree to name the exact line and column of
the offending field. Anything that cannot be parsed raises :class:`SkillFormatError` with
file and line — never a bare ``yaml.YAMLError`` or ``UnicodeDecodeError``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from skillci.errors import SkillFormatError
from skillci.frontmatter import Frontmatter as Frontmatter
from skillci.frontmatter import split_frontmatter as split_frontmatter

# the C loader is ~10x faster; fall back to pure Python where libyaml is missing
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

M = TypeVar("M", bound=BaseModel)


@dataclass(frozen=True)
class FieldProblem:
    """One schema problem: a message and where it is (1-based line/col)."""

    message: str
    line: int
    col: int
    field: str


def decode(data: bytes, file: str) -> str:
    """Decode UTF-8 (with or without BOM), naming the line of the first bad byte."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SkillFormatError(
            f"not valid UTF-8 (byte 0x{data[exc.start]:02x})",
            file=file,
            line=line,
            col=col,
            hint="save the file as UTF-8",
        ) from None


def error_mark(exc: yaml.MarkedYAMLError) -> yaml.Mark | None:
    """Where the broken construct is. PyYAML's problem mark is where the parser *noticed*:
    for an unclosed bracket or quote, or a key without its colon, that is the start of a
    later line (or the end of the file). The context mark ("while scanning a quoted scalar")
    is the construct itself, so an earlier context line wins."""
    problem, context = exc.problem_mark, exc.context_mark
    if problem is not None and context is not None and context.line < problem.line:
        return context
    return problem or context


def compose(text: str, file: str, *, line_offset: int = 0) -> yaml.Node | None:
    """Parse ``text`` into a node tree (None for an empty document)."""
    try:
        return yaml.compose(text, Loader=_Loader)
    except yaml.MarkedYAMLError as exc:
        mark = error_mark(exc)
        line = (mark.line + 1 + line_offset) if mark else None
        col = (mark.column + 1) if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        noticed = exc.problem_mark
        if noticed is not None and mark is not noticed:
            problem += f" (noticed at line {noticed.line + 1 + line_offset})"
        raise SkillFormatError(
            f"invalid YAML: {problem}",
            file=file,
            line=line,
            col=col,
            hint="fix the YAML syntax at that position",
        ) from None
    except yaml.YAMLError as exc:
        raise SkillFormatError(f"invalid YAML: {exc}", file=file, line=1 + line_offset) from None
    except RecursionError:
        raise SkillFormatError(
            "YAML nesting is too deep", file=file, line=1 + line_offset
        ) from None


def construct(node: yaml.Node | None, file: str, *, line_offset: int = 0) -> Any:
    if node is None:
        return None
    loader = _Loader("")
    try:
        return loader.construct_document(node)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        raise SkillFormatError(
            f"invalid YAML value: {exc.problem or exc.context}",
            file=file,
            line=(mark.line + 1 + line_offset) if mark else None,
            col=(mark.column + 1) if mark else None,
        ) from None
    except (yaml.YAMLError, ValueError, TypeError, OverflowError) as exc:
        line = node.start_mark.line + 1 + line_offset
        raise SkillFormatError(f"invalid YAML value: {exc}", file=file, line=line) from None
    except RecursionError:
        raise SkillFormatError(
            "YAML nesting is too deep", file=file, line=1 + line_offset
        ) from None
    finally:
        loader.dispose()


def load(text: str, file: str, *, line_offset: int = 0) -> tuple[Any, yaml.Node | None]:
    """Parse YAML text into (python data, node tree)."""
    node = compose(text, file, line_offset=line_offset)
    return construct(node, file, line_offset=line_offset), node


def locate(node: yaml.Node | None, loc: Sequence[int | str]) -> tuple[int, int]:
    """0-based (line, col) of the deepest node along ``loc`` that exists."""
    if node is None:
        return (0, 0)
    best = node.start_mark
    cur: yaml.Node | None = node
    for part in loc:
        if isinstance(cur, yaml.MappingNode):
            nxt = None
            for k, v in cur.value:
                if isinstance(k, yaml.ScalarNode) and k.value == str(part):
                    best = k.start_mark
                    nxt = v
                    break
            if nxt is None:
                break
            cur = nxt
        elif isinstance(cur, yaml.SequenceNode) and isinstance(part, int):
            if 0 <= part < len(cur.value):
                cur = cur.value[part]
                best = cur.start_mark
            else:
                break
        else:
            break
    return (best.line, best.column)


def problems(
    exc: ValidationError,
    node: yaml.Node | None,
    *,
    line_offset: int = 0,
    strip_prefix: Sequence[int | str] = (),
) -> list[FieldProblem]:
    """Turn a pydantic ValidationError into located problems.

    ``strip_prefix`` drops a leading part of each error location that does not exist in
    the YAML (e.g. ``("rules", 0)`` when a rules file holds a single rule mapping).
    """
    out: list[FieldProblem] = []
    n = len(strip_prefix)
    for err in exc.errors(include_url=False):
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-"))]
        if n and tuple(loc[:n]) == tuple(strip_prefix):
            loc = loc[n:]
        yloc = list(loc)
        line, col = locate(node, yloc)
        field = ".".join(str(p) for p in loc) or "(document)"
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, ") :]
        out.append(FieldProblem(f"{field}: {msg}", line + 1 + line_offset, col + 1, field))
    return out


def validate(
    model: type[M],
    data: Any,
    node: yaml.Node | None,
    file: str,
    *,
    line_offset: int = 0,
    strip_prefix: Sequence[int | str] = (),
) -> M:
    """Validate ``data`` against ``model``; raise the first problem with its line."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        first = problems(exc, node, line_offset=line_offset, strip_prefix=strip_prefix)[0]
        more = len(exc.errors()) - 1
        suffix = f" (+{more} more; run `skillci skill lint`)" if more else ""
        raise SkillFormatError(
            f"{first.message}{suffix}", file=file, line=first.line, col=first.col
        ) from None
