"""Rendering helpers shared by CLI commands: JSON for machines, rich for people."""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel
from rich.console import Console


@dataclass
class _State:
    verbose: bool = False


STATE = _State()

console = Console(highlight=False, soft_wrap=True)
err_console = Console(stderr=True, highlight=False, soft_wrap=True)


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json", by_alias=True, exclude_none=False)
    if isinstance(obj, list | tuple):
        return [to_jsonable(o) for o in obj]
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    return obj


def emit_json(obj: Any) -> None:
    """Print ``obj`` as JSON on stdout (one document, stable key order as given)."""
    sys.stdout.write(json.dumps(to_jsonable(obj), indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()
