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


def test_only_agents_on_litellm_routes_make_a_command_import_litellm() -> None:
    """The scheduler warms litellm up (seconds) only when a trial will call through it; an
    OpenAI-compatible server is called directly (design 282)."""
    from skillci.providers.routes import ModelRoute
    from skillci.runners.base import AgentSpec
    from skillci.runners.scheduler import needs_litellm

    server = ModelRoute(model="openai/qwen", api_base="http://127.0.0.1:8000/v1")
    direct = builtin_agent("local/qwen", route=server)
    oracle = AgentSpec(kind="oracle", role="oracle")
    assert not needs_litellm([direct, oracle])
    assert not needs_litellm([])
    assert needs_litellm([direct, builtin_agent("sim/student")])  # sim is a litellm provider
    via = builtin_agent("local/qwen", route=server.model_copy(update={"client": "litellm"}))
    assert needs_litellm([via])
