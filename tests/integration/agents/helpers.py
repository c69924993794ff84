"""Shared set-up of the real-agent tests: a ``scripted`` route on a loopback model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import services

#: The route's key: the gateway holds it; an agent's environment must never show it.
ROUTE_KEY = "route-key-not-for-agents-5d1c"


def use_route(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base_url: str, *, model: str = "scripted"
) -> None:
    """Route ``scripted`` -> the OpenAI-compatible server at ``base_url`` (key
    :data:`ROUTE_KEY`), and the agents cache of the test cache."""
    route = {"model": f"openai/{model}", "api_base": base_url, "api_key_env": "SKILLCI_TK"}
    route |= {"timeout": 20, "input_cost_per_token": 0.0, "output_cost_per_token": 0.0}
    path = tmp_path / "provider_routes.json"
    path.write_text(json.dumps({"schema_version": 1, "routes": {"scripted": route}}))
    monkeypatch.setenv("SKILLCI_PROVIDER_ROUTES", str(path))
    monkeypatch.setenv("SKILLCI_TK", ROUTE_KEY)
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(services.agents_dir()))
