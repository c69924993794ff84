"""Keying a trial of the built-in agent (all a cached trial needs of it) loads neither the
model client nor litellm nor the tokenizer: an unchanged re-gate stays light (design 267)."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("litellm", "tiktoken", "tenacity", "skillci.providers.client", "skillci.agents.loop")

SCRIPT = f"""
import json, sys
from skillci.agents.version import HARNESS_VERSION
from skillci.runners.base import builtin_agent
ident = builtin_agent("sim/student").identity()
print(json.dumps({{"harness": ident["harness"], "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""


def test_the_agent_identity_does_not_import_the_model_client() -> None:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True
    ).stdout
    got = json.loads(out)
    assert got["loaded"] == []
    from skillci.agents.loop import HARNESS_VERSION

    assert got["harness"] == HARNESS_VERSION  # the loop records the version the key holds
