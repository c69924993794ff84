"""runners.base.builtin_agent: the one way to build the built-in agent from a model route."""

from __future__ import annotations

from skillci.providers.budget import Budget
from skillci.providers.routes import resolve_route
from skillci.runners.base import DEFAULT_MAX_STEPS, builtin_agent


def test_resolves_the_route_and_uses_the_roles_step_budget() -> None:
    student = builtin_agent("sim/student")
    assert (student.kind, student.role, student.route_name) == ("builtin", "student", "sim/student")
    assert student.route == resolve_route("sim/student")
    assert student.max_steps == DEFAULT_MAX_STEPS["student"]
    teacher = builtin_agent("sim/teacher", role="teacher")
    assert teacher.max_steps == DEFAULT_MAX_STEPS["teacher"] != student.max_steps


def test_explicit_values_win_and_the_identity_follows_them() -> None:
    route = resolve_route("sim/student")
    a = builtin_agent("sim/student", route=route, max_steps=7, budget=Budget(max_usd=0.5))
    assert (a.max_steps, a.budget.max_usd) == (7, 0.5)
    assert a.identity() != builtin_agent("sim/student").identity()
    assert builtin_agent("sim/student").identity() == builtin_agent("sim/student").identity()
