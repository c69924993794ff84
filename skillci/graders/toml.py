"""A :class:`GradersFile` as ``tests/graders.toml`` text (what ``tasks import`` writes).

Strings are written as JSON strings, which are valid TOML basic strings; a test checks
that :func:`~skillci.graders.load.parse_graders` reads back what this writes.
"""

from __future__ import annotations

import json
from typing import Any

from skillci.graders.models import GradersFile


def _value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int | float):
        return repr(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    if isinstance(v, list):
        if all(isinstance(x, str) for x in v) and v:
            return "[\n" + "".join(f"  {_value(x)},\n" for x in v) + "]"
        return "[" + ", ".join(_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{json.dumps(k)} = {_value(x)}" for k, x in v.items()) + " }"
    raise TypeError(f"cannot write {type(v).__name__} as TOML")


def _table(header: str, data: dict[str, Any]) -> str:
    lines = [header]
    lines += [f"{k} = {_value(v)}" for k, v in data.items() if v is not None]
    return "\n".join(lines) + "\n"


def graders_toml(g: GradersFile, *, comment: str | None = None) -> str:
    """The text of ``g`` (defaults left out)."""
    parts = [f"# {line}\n" for line in (comment or "").splitlines()]
    parts.append(f"schema_version = {g.schema_version}\n\n")
    parts.append(_table("[reward]", g.reward.model_dump(exclude_defaults=True)) + "\n")
    for a in g.assertion:
        parts.append(
            _table("[[assertion]]", a.model_dump(by_alias=True, exclude_defaults=True)) + "\n"
        )
    for r in g.rubric:
        parts.append(_table("[[rubric]]", r.model_dump(exclude_defaults=True)) + "\n")
    return "".join(parts).rstrip("\n") + "\n"


__all__ = ["graders_toml"]
