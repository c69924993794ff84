"""``tests/graders.toml`` -> :class:`GradersFile`, with errors located to file:line."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

from pydantic import ValidationError

from skillci.errors import ConfigError, TaskFormatError
from skillci.graders.kinds import InvalidAssertion
from skillci.graders.models import GradersFile

_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")
HINT = "see 'Graders' in docs/tasks.md for the keys of tests/graders.toml"


def _line(text: str, loc: Sequence[int | str]) -> int | None:
    """Best-effort line of a pydantic ``loc`` in the TOML text: the i-th ``[[assertion]]``
    or ``[[rubric]]`` table is counted, then the key looked up inside it."""
    if not loc:
        return None
    table = str(loc[0]) if len(loc) > 1 or loc[0] in ("reward", "assertion", "rubric") else ""
    index = loc[1] if len(loc) > 1 and isinstance(loc[1], int) else 0
    rest = [str(p) for p in loc[1:] if not isinstance(p, int)] if table else [str(loc[0])]
    key = rest[0] if rest else None
    current, seen, header_line = "", -1, None
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        m = re.match(r"^(\[\[?)\s*([^\]]+?)\s*\]\]?", line)
        if m:
            current = m.group(2)
            if current == table:
                seen += 1
                if seen == index:
                    header_line = i
            continue
        in_place = current == table and (not table or seen == index)
        if in_place and key is not None and re.match(rf"^{re.escape(key)}\s*=", line):
            return i
    return header_line


def parse_graders(text: str, path: Path) -> GradersFile:
    """Parse the text of a graders file (``path`` names it in errors)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_POS.search(str(exc))
        raise TaskFormatError(
            f"invalid TOML: {_TOML_POS.sub('', str(exc)).strip()}",
            file=path,
            line=int(m.group(1)) if m else None,
            col=int(m.group(2)) if m else None,
            hint=HINT,
        ) from None
    try:
        return GradersFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        cause = err.get("ctx", {}).get("error")
        loc = tuple(err["loc"])
        if isinstance(cause, InvalidAssertion) and cause.field:
            loc = (*loc, cause.field)  # the key at fault, for its line
        more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        msg = str(err["msg"]).removeprefix("Value error, ")
        raise TaskFormatError(
            f"graders.toml field {'.'.join(str(p) for p in loc) or '(root)'!r}: {msg}{more}",
            file=path,
            line=_line(text, loc),
            hint=HINT,
        ) from None
    except ConfigError as exc:  # a plug-in kind that does not load
        raise TaskFormatError(f"graders.toml: {exc.message}", file=path, hint=exc.hint) from None


def load_graders(path: Path) -> GradersFile:
    """Read and parse ``path``."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFormatError(f"cannot read: {exc}", file=path, hint=HINT) from None
    return parse_graders(text, path)


__all__ = ["load_graders", "parse_graders"]
