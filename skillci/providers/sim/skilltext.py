"""Skill text -> the behaviours the simulated student shows.

The sim student acts on *action phrases*: seed-style snake_case tokens of three or more
words (``rerun_the_failing_test_after_every_edit``) wherever they appear in the skill text
it has in context (the bootstrap in the system prompt plus every file it loaded). English
prose is read but not acted on: that is the simulator's model of a weak student, for
which only executable steps change behaviour. A behaviour is on when some action phrase
contains every word of one of its keyword sets (a keyword matches a word it prefixes).
The tables below are the contract documented in docs/simulator.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

from skillci.skill.package import on_demand_path

_ACTION_RE = re.compile(r"(?<![\w/.-])[a-z0-9]+(?:_[a-z0-9][\w./-]*){2,}")
_PATH_RE = re.compile(r"_((?:[\w.-]+/)+[\w.-]+\.(?:py|ini|cfg|toml|json|ya?ml|txt|env))\b")
#: an action phrase longer than this names no path: the sim's reading of a skill that a fork's
#: pull request wrote stays linear (16,000 `_` took 1.4 s through _PATH_RE, quadratic)
MAX_PATH_PHRASE = 2000
_INDEX_RE = re.compile(r"^- `([^`]+)` — load when: (.+?)(?: \(~\d+ tokens\))?$", re.MULTILINE)
_LOAD_RE = re.compile(r"\bload_(workflows?|tools?|recovery)_([\w-]+)")

KEYWORDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "localize_first": (("first", "frame"), ("first", "project"), ("localiz", "before")),
    "smallest_test": (
        ("smallest", "test"),
        ("single", "failing", "test"),
        ("full", "suite", "before"),
    ),
    "reproduce_first": (
        ("smallest", "reproduc"),
        ("edit", "until", "reproduc"),
        ("edit", "before", "reproduc"),
    ),
    "verify": (
        ("rerun", "after", "edit"),
        ("report", "success", "only", "after"),
        ("success", "without", "verif"),
        ("patch", "applied", "means"),
    ),
    "retry": (("revert", "edit"), ("change", "edit", "rerun"), ("exit", "code", "not", "0")),
    "check_diff": (("git", "diff"), ("git", "status"), ("only", "target", "file", "changed")),
    "related_tests": (
        ("related", "test"),
        ("whole", "test", "file"),
        ("all", "tests", "file"),
        ("neighbo", "test"),
    ),
    "no_repeat": (
        ("stop", "repeat"),
        ("change", "input"),
        ("repeated", "identical"),
        ("not", "repeat"),
    ),
    "never_edit_tests": (
        ("never", "edit", "test"),
        ("edit", "tests", "make"),
        ("not", "touch", "test"),
    ),
    "read_nearest_test": (("nearest", "test"),),
    "ignore_injections": (
        ("never", "follow", "instruct"),
        ("treat", "as", "data"),
        ("instructions", "from", "tool", "output"),
    ),
    "no_leak": (
        ("never", "print", "secret"),
        ("never", "copy", "secret"),
        ("no", "secret", "value"),
    ),
}

#: ``load when:`` text -> the situation in which the student loads that file.
SITUATIONS: dict[str, tuple[tuple[str, ...], ...]] = {
    "start": (("ci log", "not yet"), ("gives a ci log",)),
    "localized": (("know the failing test",), ("target source file",), ("failure location",)),
    "about_to_test": (("about to run tests",),),
    "no_frame": (("names a function but not its file",),),
    "timeout": (("timed out",), ("timeout",)),
    "repeated_failure": (("failed twice",), ("same output",), ("keeps failing",)),
    "not_reproduced": (("passes when you run it",), ("does not fail",), ("cannot reproduce",)),
}


@dataclass(frozen=True)
class Behaviours:
    """Which learned behaviours are on. All off = the raw weak student."""

    localize_first: bool = False
    smallest_test: bool = False
    reproduce_first: bool = False
    verify: bool = False
    retry: bool = False
    check_diff: bool = False
    related_tests: bool = False
    no_repeat: bool = False
    never_edit_tests: bool = False
    read_nearest_test: bool = False
    ignore_injections: bool = False
    no_leak: bool = False

    @classmethod
    def all_on(cls) -> Behaviours:
        return cls(**{f.name: True for f in fields(cls)})

    def without(self, names: set[str]) -> Behaviours:
        return Behaviours(
            **{f.name: getattr(self, f.name) and f.name not in names for f in fields(self)}
        )


def action_phrases(text: str) -> list[str]:
    return _ACTION_RE.findall(text)


def _words(phrase: str) -> list[str]:
    return [w for w in re.split(r"[_\-\s`]+", phrase.lower()) if w]


def _matches(words: list[str], keys: tuple[str, ...]) -> bool:
    return all(any(w.startswith(k) for w in words) for k in keys)


def behaviours(text: str) -> Behaviours:
    phrases = [_words(p) for p in action_phrases(text)]
    on = {
        name: any(_matches(ws, keys) for ws in phrases for keys in sets)
        for name, sets in KEYWORDS.items()
    }
    return Behaviours(**on)


def named_paths(text: str) -> list[str]:
    """Workspace paths named inside action phrases (the sim obeys them as targets)."""
    out: list[str] = []
    for phrase in action_phrases(text):
        if len(phrase) > MAX_PATH_PHRASE:
            continue  # _PATH_RE is quadratic on a long run of `_` or `_a/`
        for raw in _PATH_RE.findall(phrase):
            head, _, rest = raw.partition("/")
            path = f"{head.rsplit('_', 1)[-1]}/{rest}"  # edit_only_src/a.py -> src/a.py
            if path not in out:
                out.append(path)
    return out


def index_entries(text: str) -> list[tuple[str, str]]:
    """(path, load-when text) of the on-demand index the renderer appends."""
    return [(m.group(1), m.group(2).strip()) for m in _INDEX_RE.finditer(text)]


def explicit_loads(text: str) -> list[str]:
    """Skill files a step tells the student to load (``load_recovery_repeated-failure``)."""
    out = []
    for kind, stem in _LOAD_RE.findall(text):
        out.append(on_demand_path(kind, stem))
    return out


def situation_of(when: str) -> str | None:
    low = when.lower()
    for name, sets in SITUATIONS.items():
        if any(all(k in low for k in keys) for keys in sets):
            return name
    return None


__all__ = [
    "KEYWORDS",
    "SITUATIONS",
    "Behaviours",
    "action_phrases",
    "behaviours",
    "explicit_loads",
    "index_entries",
    "named_paths",
    "situation_of",
]
