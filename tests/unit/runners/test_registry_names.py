"""The runner registry is the only place that lists runner and sandbox names: no code
outside it compares a ``runner``/``sandbox`` value with one (the if-chains design 391
removed), and the CLI's choices are the registry's."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

from skillci.cli import choices
from skillci.runners.registry import modes, runner_names, runners, sandboxes

SKILLCI = Path(__file__).resolve().parents[3] / "skillci"
#: What a name *means*, not a list of names: ``auto`` resolves to bwrap or none (design 233),
#: ``none`` is the unconfined local sandbox (its capabilities), Harbor's local environment.
ALLOWED = {"auto"}
SEMANTIC_FILES = {"runners/registry.py", "runners/capabilities.py", "cli/demo.py"}


def _named(node: ast.expr) -> bool:
    name = node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")
    return name in ("sandbox", "runner", "mode")


def _literals(node: ast.expr) -> set[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return {node.value}
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return {e.value for e in node.elts if isinstance(e, ast.Constant)}
    return set()


def test_no_code_outside_the_registry_dispatches_on_a_runner_or_sandbox_name() -> None:
    names = (set(runners()) | set(sandboxes())) - ALLOWED
    found = []
    for path in sorted(SKILLCI.rglob("*.py")):
        rel = path.relative_to(SKILLCI).as_posix()
        if rel in SEMANTIC_FILES:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Compare):
                sides = [node.left, *node.comparators]
                if any(_named(s) for s in sides):
                    hit = set().union(*(_literals(s) for s in sides)) & names
                    if hit:
                        found.append(f"{rel}:{node.lineno} {sorted(hit)}")
    assert found == []


def test_the_cli_choices_are_the_registrys() -> None:
    sandbox: Any = choices.Sandbox
    raw: Any = choices.RawRunner
    assert [m.value for m in raw] == runner_names()
    assert [m.value for m in sandbox] == list(dict.fromkeys(["required", "auto", "none", *modes()]))
    # a runner that isolates its own trials is a mode of its own name; harness runners are not
    assert "docker" in modes() and not {"local", "benchflow", "harbor"} & set(modes())
