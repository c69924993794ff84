"""The built-in harness version (part of every trial key), importable without the model
client: reading it is all a cached trial needs of the agent."""

from __future__ import annotations

from skillci.agents.prompt import PROMPT_VERSION
from skillci.agents.tools import TOOL_SCHEMA_VERSION

HARNESS_VERSION = f"1+{PROMPT_VERSION}+{TOOL_SCHEMA_VERSION}"

__all__ = ["HARNESS_VERSION"]
