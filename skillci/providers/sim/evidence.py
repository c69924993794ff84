"""Reading evidence the way the simulated models do: CI logs, pytest and checker output.

Pure text parsing of what arrived in tool results: failing test ids (``FAILED`` lines),
traceback frames (pytest ``--tb=short`` and classic ``File "..", line N`` forms), the CI
command (``$ cmd`` header lines), checker errors (``path:line: message``) and simple
``assert <actual> == <expected>`` summaries.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SHORT_FRAME = re.compile(r"^([\w./-]+\.py):(\d+): in (\S+)\s*$", re.MULTILINE)
_LONG_FRAME = re.compile(r'^\s*File "([^"]+\.py)", line (\d+), in (\S+)\s*$', re.MULTILINE)
_FAILED = re.compile(r"^FAILED (\S+?)(?: - (.*))?$", re.MULTILINE)
_COMMAND = re.compile(r"^\$ (.+?)\s*$", re.MULTILINE)
_CHECK_ERR = re.compile(
    r"^([\w./-]+\.(?:ini|cfg|toml|json|ya?ml|env|txt)):(\d+): (.+?)\s*$", re.MULTILINE
)
_ASSERT = re.compile(r"^E\s+(?:AssertionError: )?assert (.+?) == (.+?)\s*$", re.MULTILINE)
_LOG_PATH = re.compile(r"`?([\w./-]+\.log)`?")  # read through log_path
_PATH_RUN = re.compile(r"[\w./-]+")
_BACKTICK_CMD = re.compile(r"`((?:python3?|bash|sh|make|pytest|tox)\b[^`]*)`")


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    func: str

    @property
    def in_project(self) -> bool:
        p = self.path
        return not (
            p.startswith(("tests/", "test/", "/usr/", "<"))
            or "site-packages" in p
            or p.rsplit("/", 1)[-1].startswith("test_")
        )


@dataclass(frozen=True)
class CheckError:
    path: str
    line: int
    message: str


def _rel(path: str) -> str:
    for marker in ("/app/", "/workspace/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return path.lstrip("./") if path.startswith("./") else path


def frames(text: str) -> list[Frame]:
    found = [
        (m.start(), Frame(_rel(m.group(1)), int(m.group(2)), m.group(3)))
        for rx in (_SHORT_FRAME, _LONG_FRAME)
        for m in rx.finditer(text)
    ]
    return [f for _, f in sorted(found, key=lambda t: t[0])]


def first_project_frame(text: str) -> Frame | None:
    return next((f for f in frames(text) if f.in_project), None)


def deepest_project_frame(text: str) -> Frame | None:
    proj = [f for f in frames(text) if f.in_project]
    return proj[-1] if proj else None


def failing_tests(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(1) for m in _FAILED.finditer(text)))


def ci_command(text: str) -> str | None:
    m = _COMMAND.search(text)
    return m.group(1) if m else None


def check_errors(text: str) -> list[CheckError]:
    return [
        CheckError(_rel(m.group(1)), int(m.group(2)), m.group(3)) for m in _CHECK_ERR.finditer(text)
    ]


def assertion(text: str) -> tuple[str, str] | None:
    """(actual, expected) of the first ``assert a == b`` summary line."""
    m = _ASSERT.search(text)
    return (m.group(1), m.group(2)) if m else None


def log_path(instruction: str) -> str | None:
    """``_LOG_PATH.search(instruction).group(1)`` in linear time (the pattern read the rest of a
    run of path characters from each of them): the first run of path characters with ``.log``
    after its first character, up to its last ``.log``."""
    for m in _PATH_RUN.finditer(instruction):
        end = m.group(0).rfind(".log")
        if end >= 1:
            return m.group(0)[: end + 4]
    return None


def instruction_command(instruction: str) -> str | None:
    """A check command the task instruction names in backticks, if any."""
    m = _BACKTICK_CMD.search(instruction)
    return m.group(1).strip() if m else None


__all__ = [
    "CheckError",
    "Frame",
    "assertion",
    "check_errors",
    "ci_command",
    "deepest_project_frame",
    "failing_tests",
    "first_project_frame",
    "frames",
    "instruction_command",
    "log_path",
]
