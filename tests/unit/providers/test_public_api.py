"""``__all__`` of the models, agents and runners modules names exactly their public definitions."""

from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = [
    "skillci.providers.routes",
    "skillci.providers.budget",
    "skillci.providers.cache",
    "skillci.providers.client",
    "skillci.providers.types",
    "skillci.providers.sim.transcript",
    "skillci.providers.sim.skilltext",
    "skillci.providers.sim.evidence",
    "skillci.providers.sim.injection",
    "skillci.providers.sim.repair",
    "skillci.providers.sim.policy",
    "skillci.providers.sim.provider",
    "skillci.agents.base",
    "skillci.agents.workspace",
    "skillci.agents.tools",
    "skillci.agents.prompt",
    "skillci.agents.loop",
    "skillci.agents.oracle",
    "skillci.runners.base",
    "skillci.runners.sandbox",
    "skillci.runners.trialdir",
    "skillci.runners.outcome",
    "skillci.runners.scheduler",
    "skillci.flows.evalrun",
]


@pytest.mark.parametrize("name", MODULES)
def test_all_matches_public_definitions(name: str) -> None:
    mod = importlib.import_module(name)
    exported = set(mod.__all__)
    assert all(hasattr(mod, n) for n in exported), exported - set(dir(mod))
    defined = {
        n
        for n, obj in vars(mod).items()
        if not n.startswith("_")
        and (inspect.isclass(obj) or inspect.isfunction(obj))
        and getattr(obj, "__module__", None) == name
    }
    assert defined <= exported, f"public but not in __all__: {sorted(defined - exported)}"


def test_importing_the_cli_path_does_not_import_litellm() -> None:
    import subprocess
    import sys

    code = (
        "import sys, skillci.cli.eval, skillci.flows.evalrun, skillci.runners.local, "
        "skillci.providers.client; print('litellm' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
