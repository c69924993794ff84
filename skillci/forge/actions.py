"""GitHub Actions' files: the event payload, step outputs and the job summary.

Outside Actions (the variables unset) writing is a no-op, so the same ``skillci`` command
runs in a shell and in a workflow step. The event payload is data about the event (PR
titles, branch names come from whoever opened it): it is parsed, never executed.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from skillci.errors import InvalidInputError


def _env(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def read_event(env: Mapping[str, str] | None = None) -> dict[str, Any] | None:
    """The JSON payload at ``$GITHUB_EVENT_PATH``, or None when it is not set."""
    path = _env(env).get("GITHUB_EVENT_PATH")
    if not path:
        return None
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError) as exc:
        raise InvalidInputError(f"cannot read the event payload {path}: {exc}") from None
    if not isinstance(data, dict):
        raise InvalidInputError(f"the event payload {path} is not a JSON object")
    return data


def _append(var: str, text: str, env: Mapping[str, str] | None) -> bool:
    path = _env(env).get(var)
    if not path:
        return False
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)
    return True


def set_output(name: str, value: str, env: Mapping[str, str] | None = None) -> bool:
    """Append ``name=value`` to ``$GITHUB_OUTPUT`` (heredoc form for multi-line values)."""
    if "\n" in value:
        delim = f"skillci_{secrets.token_hex(8)}"
        return _append("GITHUB_OUTPUT", f"{name}<<{delim}\n{value}\n{delim}\n", env)
    return _append("GITHUB_OUTPUT", f"{name}={value}\n", env)


def add_summary(markdown: str, env: Mapping[str, str] | None = None) -> bool:
    """Append markdown to the job summary (``$GITHUB_STEP_SUMMARY``)."""
    return _append("GITHUB_STEP_SUMMARY", markdown.rstrip("\n") + "\n", env)
