"""The built-in agent's system prompt. Its sha256 is recorded in every run record.

The skill bootstrap (rendered SKILL.md, with the always-on rules and the on-demand index)
is embedded between ``<skill>`` tags; on-demand files are loaded with ``load_skill_file``.
The harness text itself gives no procedural advice: that is the skill's job.
"""

from __future__ import annotations

import hashlib

from skillci.agents.workspace import WORKSPACE_MOUNT
from skillci.skill.render import RenderedSkill

PROMPT_VERSION = "skillci-prompt-1"

_HARNESS = f"""You are a software agent working on one task in a repository at {WORKSPACE_MOUNT} \
(your working directory). Use the tools to read and change files and to run commands; \
paths are relative to {WORKSPACE_MOUNT}. The sandbox has no network access.
When you are finished, reply with your final answer and call no tool."""
#: The sentence that replaces "no network access" when the task's allow_internet opened it.
NETWORK_OPEN = "The sandbox has network access (the task allows it)."


def system_prompt(
    skill: RenderedSkill | None, *, network: bool = False, workdir: str = WORKSPACE_MOUNT
) -> str:
    """The system prompt; ``network`` says the shell reaches the network (allow_internet),
    ``workdir`` where the shell sees the workspace (the default text is unchanged)."""
    harness = (
        _HARNESS.replace("The sandbox has no network access.", NETWORK_OPEN)
        if network
        else _HARNESS
    )
    if workdir != WORKSPACE_MOUNT:
        harness = harness.replace(f" {WORKSPACE_MOUNT} ", f" {workdir} ").replace(
            f" {WORKSPACE_MOUNT}.", f" {workdir}."
        )
    if skill is None:
        return harness + "\n"
    boot = skill.file("SKILL.md")
    text = boot.content.decode("utf-8") if boot else ""
    return (
        f"{harness}\n\nYou have one skill installed. Follow it.\n"
        f'<skill name="{skill.name}" version="{skill.version}">\n{text.rstrip()}\n</skill>\n'
        "Load the skill's on-demand files with the load_skill_file tool when the skill says so.\n"
    )


def prompt_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


__all__ = ["NETWORK_OPEN", "PROMPT_VERSION", "prompt_hash", "system_prompt"]
