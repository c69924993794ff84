"""Closed sets of option values, as ``Literal`` types typer turns into choices: a typo is a
usage error (exit 2) that lists them, and ``--help`` shows them. Each mirrors the domain type
it feeds (named in its comment); tests/integration/test_cli_options.py checks they agree.
Sets a plug-in can extend are not copied here: they are enums built from their registry,
read through :mod:`skillci.flows.plugins` (``Forge``: the forge registry; ``Sandbox`` and
``RawRunner``: the runner registry; entry points included)."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Literal

import skillci.flows.plugins as plugins

SandboxPolicy = Literal["required", "auto", "none"]  # runners.policy.SandboxPolicy
Role = Literal["student", "teacher"]  # EvalRequest.role
Rerun = Literal["errors", "all"]  # runners.scheduler.RerunMode
GateRerun = Literal["errors", "base", "all"]  # flows.gate.GateRerun
Channel = Literal["stable", "canary"]  # release.models.Channel
Harness = Literal["folder", "builtin"]  # skill.render.HARNESSES
StaticMode = Literal["deterministic", "hybrid"]  # compile static / pipeline modes
Scorer = Literal["rubric", "model"]  # compile deep scorers
ImportFormat = Literal[
    "benchflow", "harbor", "claude-code", "codex", "opencode"
]  # skillci.trace.importers.<name>
TriggerSplit = Literal["all", "train", "held_out"]  # flows.triggers.TriggerEvalRequest.split
AgentSandbox = Literal["auto", "bwrap", "none"]  # flows.triggers.TriggerEvalRequest.sandbox
ProposeTarget = Literal["tasks", "description"]  # cli/propose.py --target
TriggerMode = Literal["auto", "always", "never"]  # flows.triggers.TriggerMode

if TYPE_CHECKING:
    Forge = str
    Sandbox = str
    RawRunner = str
else:  # the registries' names (plug-ins included)
    Forge = enum.StrEnum("Forge", {n: n for n in plugins.forge_names()})
    # --sandbox: a policy (required, auto, none) or a trial mode (bwrap, docker, plug-ins)
    Sandbox = enum.StrEnum("Sandbox", {n: n for n in plugins.sandbox_choices()})
    RawRunner = enum.StrEnum("RawRunner", {n: n for n in plugins.runner_names()})  # raw-task
