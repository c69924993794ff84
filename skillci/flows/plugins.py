"""The plug-in registries as the command line reads them: the names it offers as choices and
the ``--help`` text of each option that names a plug-in (``--forge``, ``--runner``,
``--sandbox``, ``--env``, ``--agent``), built from the registries (``forge/registry.py``,
``runners/registry.py``, ``agents/registry.py``, Harbor's environments), entry points
included. A runner, a forge or an agent registered from outside skillci shows up here with
no edit to the CLI (docs/design/420). ``use_policy`` sets the sandbox policy a
``--sandbox`` names (design 310)."""

from __future__ import annotations

import skillci.agents.registry as agents
import skillci.forge.registry as forges
import skillci.runners.registry as runners
from skillci.runners.policy import POLICIES, use_policy

__all__ = [
    "POLICIES",
    "agent_help",
    "agent_names",
    "bench_agent_help",
    "env_help",
    "eval_agent_help",
    "forge_help",
    "forge_names",
    "raw_runner_help",
    "real_agent_names",
    "runner_names",
    "sandbox_choices",
    "sandbox_help",
    "trial_runner_help",
    "trigger_agent_help",
    "use_policy",
]


def forge_names() -> list[str]:
    """``--forge`` values: every registered forge."""
    return forges.names()


def forge_help() -> str:
    """``--forge``'s help: each forge and what it is."""
    return forges.help_text()


def runner_names() -> list[str]:
    """``eval raw-task --runner`` values: every registered runner."""
    return runners.runner_names()


def raw_runner_help() -> str:
    """``eval raw-task --runner``'s help: each runner of the registry and what it is."""
    listed = "; ".join(f"{e.name}: {e.summary}" for e in runners.runners().values())
    return f"Where attempts run. {listed}."


def trial_runner_help() -> str:
    """``--runner``'s help on the trial commands (``eval run``, ``gate``, ``review``,
    ``propose``): this machine, then each runner of the registry that runs them remotely."""
    remote = [e for e in runners.runners().values() if e.remote]
    listed = "; ".join(f"{e.name}: {e.summary}, on its --env" for e in remote)
    return (
        f"Where trials run: {runners.LOCAL} (default: this machine, through the scheduler)"
        + (f"; {listed}" if listed else "")
        + ". Remote results come back through the harness's importer into the same trial "
        "cache and trace store."
    )


def env_help() -> str:
    """``--env``'s help: each remote runner's environments, from its environment class."""
    parts = []
    for name, entry in runners.remote_runners().items():
        if not entry.environment:  # a plug-in without an environment class: its own docs
            parts.append(f"--runner {name}: see its documentation")
            continue
        table = entry.environment_class().environments
        cloud = [n for n, creds in table.items() if creds]
        need = f" ({', '.join(cloud)} need their credentials in the environment)" if cloud else ""
        only = " (the default: its only one)" if len(table) == 1 else ""
        parts.append(f"--runner {name}: {', '.join(table)}{only}{need}")
    return "Where a remote runner's trials run. " + "; ".join(parts) + "."


def sandbox_choices() -> list[str]:
    """``eval run --sandbox`` values: a policy, or a trial mode of the runner registry."""
    return list(dict.fromkeys([*POLICIES, *runners.modes()]))


def sandbox_help() -> str:
    """``eval run --sandbox``'s help: the policies, then each other trial mode of the runner
    registry (bwrap, docker, plug-ins) and what it is."""
    others = "; ".join(f"{n} ({what})" for n, what in runners.modes().items() if n not in POLICIES)
    return (
        "required: sandboxed or not at all; auto: bubblewrap if it works, else only the "
        f"bundled tasks (unsandboxed); none: no sandbox, you accept the risk; {others}. "
        "Default: $SKILLCI_SANDBOX, else required under CI, else auto."
    )


def agent_names() -> list[str]:
    """``--agent`` values: every registered agent."""
    return agents.names()


def real_agent_names() -> list[str]:
    """The real agents (run through their headless CLI), in registry order."""
    return agents.real_names()


def agent_help() -> str:
    """``--agent``'s help on the trial commands: the built-in loop or a real agent."""
    return (
        "The student's agent on --model: builtin (skillci's loop) or a real agent "
        f"through the gateway: {', '.join(real_agent_names())} (skillci agents ls). Default: "
        "the skill's target_runtime.agent on the base branch, else builtin."
    )


def eval_agent_help() -> str:
    """``eval run --agent``'s help: every agent of the registry, the real ones by name."""
    own = "; ".join(f"{e.name}: {e.summary}" for e in agents.registry().values() if not e.real)
    return (
        f"{own}; or a real agent on --model through the gateway: "
        f"{', '.join(real_agent_names())} (skillci agents ls)."
    )


def bench_agent_help() -> str:
    """``bench --agent``'s help: the student arms' agent; the real ones by name."""
    return (
        "The student's agent in every student arm: builtin (skillci's loop on --student) or "
        f"a real agent through the gateway ({', '.join(real_agent_names())}; skillci agents "
        "ls); oracle/noop in the reference arms only. The teacher runs builtin."
    )


def trigger_agent_help() -> str:
    """``triggers eval --agent``'s help: the real agents that can decide by loading skills."""
    return (
        f"A real agent decides by loading skills: {', '.join(real_agent_names())} (skillci "
        "agents ls), run headless on --model through the gateway. Default: the catalogue "
        "question to --model."
    )
