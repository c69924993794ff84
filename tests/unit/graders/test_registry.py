"""The assertion-kind registry is the only place that lists kind names: the built-ins load
to their classes, no code outside the registry dispatches on a kind's name, and the saved
schema does not freeze the set of kinds (design 403)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from skillci.errors import ConfigError
from skillci.graders import assertions
from skillci.graders.kinds import AssertionKind
from skillci.graders.models import GradersFile
from skillci.graders.registry import (
    BUILTIN,
    GraderKindEntry,
    assertion_kind,
    builtin_names,
    check_kind,
    plugin_identities,
)

SKILLCI = Path(__file__).resolve().parents[3] / "skillci"
#: Where kinds are defined and registered; everywhere else a kind is an opaque name.
OWNERS = {"graders/registry.py", "graders/assertions.py"}


def test_the_builtin_kinds_load_to_their_classes() -> None:
    assert builtin_names() == [
        "exact",
        "contains",
        "regex",
        "json-schema",
        "file-exists",
        "command-exit",
    ]
    loaded = {e.name: type(assertion_kind(e.name)) for e in BUILTIN}
    assert loaded["json-schema"] is assertions.JsonSchema
    assert loaded["command-exit"] is assertions.CommandExit
    assert all(issubclass(c, AssertionKind) for c in loaded.values())
    assert assertion_kind("regex") is assertion_kind("regex")  # one instance per process
    assert plugin_identities(builtin_names()) == {}  # built-in keys stay as they were


def test_unknown_and_wrong_kinds_are_clear_errors() -> None:
    with pytest.raises(ValueError, match=r"unknown assertion kind 'nope'; registered: exact, "):
        check_kind("nope")
    with pytest.raises(ConfigError, match=r"cannot load skillci\.graders\.nowhere:X"):
        GraderKindEntry("x", "", "skillci.graders.nowhere:X").load()
    wrong = GraderKindEntry("x", "", "skillci.graders.assertions:MAX_READ")
    with pytest.raises(ConfigError, match=r"made a int, not an AssertionKind"):
        wrong.load()
    raising = GraderKindEntry("x", "", "skillci.graders.models:GradersFile")
    with pytest.raises(ConfigError, match=r"failed to build: ValidationError: "):
        raising.load()


def test_no_code_outside_the_registry_dispatches_on_a_kind_name() -> None:
    names = set(builtin_names())
    found = []
    for path in sorted(SKILLCI.rglob("*.py")):
        rel = path.relative_to(SKILLCI).as_posix()
        if rel in OWNERS:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.Compare):
                continue
            sides = [node.left, *node.comparators]
            if not any(isinstance(s, ast.Attribute) and s.attr == "kind" for s in sides):
                continue
            hit = {str(s.value) for s in sides if isinstance(s, ast.Constant)} & names
            if hit:
                found.append(f"{rel}:{node.lineno} {sorted(hit)}")
    assert found == []


def test_the_saved_schema_does_not_freeze_the_kinds() -> None:
    schema = GradersFile.model_json_schema()
    kind = schema["$defs"]["Assertion"]["properties"]["kind"]
    assert kind["type"] == "string" and "enum" not in kind
