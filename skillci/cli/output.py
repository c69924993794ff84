"""Rendering helpers shared by CLI commands: JSON for machines, rich for people.

``console`` and ``err_console`` are made on first use (rich is not imported by
``skillci --help``).
"""

from __future__ import annotations

import sys

TYPE_CHECKING = False  # typing is not imported at run time (CLI start-up, design 260)

if TYPE_CHECKING:
    from typing import Any

    from rich.console import Console

    console: Console
    err_console: Console


class _State:
    verbose: bool = False


STATE = _State()

_CONSOLES: dict[str, Any] = {}


def __getattr__(name: str) -> Any:
    if name in ("console", "err_console"):
        if name not in _CONSOLES:
            from rich.console import Console

            _CONSOLES[name] = Console(stderr=name == "err_console", highlight=False, soft_wrap=True)
        return _CONSOLES[name]
    raise AttributeError(name)


def to_jsonable(obj: Any) -> Any:
    from pydantic import BaseModel

    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=False)
    if isinstance(obj, list | tuple):
        return [to_jsonable(o) for o in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    return obj


def emit_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (one document, stable key order as given)."""
    import json

    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()
