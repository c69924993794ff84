"""The ``--help`` of every option that names a plug-in is built from its registry: a runner
registered as a row of the runner registry is a ``--runner`` of the trial commands, an agent
from an entry point is named by ``--agent`` (trial commands and ``eval triggers``), and
``--env`` lists Harbor's environment table — no name typed into the CLI by hand."""

from __future__ import annotations

import re
from pathlib import Path

from skillci.agents.registry import real_names
from skillci.runners.harbor_remote import ENVIRONMENTS
from tests.integration.plugins.conftest import ROOT, install_plugin, run_python, run_skillci

#: A runner registered as a row of the registry (``runners/registry.py:BUILTIN_RUNNERS``,
#: the documented registration for a remote runner), then the real CLI's help.
REGISTER_AND_HELP = """
import sys
import skillci.runners.registry as registry
registry.BUILTIN_RUNNERS += (
    registry.RunnerEntry("toyremote", "a toy cloud of trials", "toy:Runner", remote=True),
)
from skillci.cli.main import main
sys.exit(main(sys.argv[1:]))
"""


def _flat(text: str) -> str:
    """The help's words on one line; a name the terminal wrapped at its hyphen
    ("codex-\n  acp") is one word again."""
    return " ".join(re.sub(r"(\w)-\n\s*", r"\1-", text.replace("│", " ")).split())


def _help_with_toy_runner(*args: str) -> str:
    site = ROOT / "no-such-site"
    done = run_python(site, "-c", REGISTER_AND_HELP, *args, "--help", env={"COLUMNS": "200"})
    assert done.returncode == 0, done.stderr
    return _flat(done.stdout)


def test_a_runner_in_the_registry_is_in_the_trial_commands_runner_help() -> None:
    for command in (["eval", "run"], ["gate"]):
        helped = _help_with_toy_runner(*command)
        assert "toyremote: a toy cloud of trials, on its --env" in helped, helped
        assert "harbor: Harbor's harbor CLI and its agents, on its --env" in helped
    plain = run_skillci(ROOT / "no-such-site", "eval", "run", "--help", env={"COLUMNS": "200"})
    assert plain.returncode == 0, plain.stderr
    assert "toyremote" not in plain.stdout  # the help follows the registry, nothing else


def test_env_help_lists_harbors_environment_table() -> None:
    helped = run_skillci(ROOT / "no-such-site", "gate", "--help", env={"COLUMNS": "200"})
    assert helped.returncode == 0, helped.stderr
    assert f"--runner harbor: {', '.join(ENVIRONMENTS)} (" in _flat(helped.stdout)


def test_an_agent_plugin_is_named_by_every_agent_help(tmp_path: Path) -> None:
    site = install_plugin(
        tmp_path / "site", "toy_agent", {}, "[skillci.agents]\ntoyagent = toy_agent:Toy\n"
    )
    env = {"COLUMNS": "200"}
    for command in (["gate"], ["eval", "run"], ["eval", "triggers"]):
        helped = run_skillci(site, *command, "--help", env=env)
        assert helped.returncode == 0, helped.stderr
        assert f"{', '.join(sorted([*real_names(), 'toyagent']))} (skillci agents ls)" in _flat(
            helped.stdout
        ), command
    bench = run_skillci(site, "bench", "--help", env=env)
    assert bench.returncode == 0, bench.stderr
    assert f"({', '.join(sorted([*real_names(), 'toyagent']))}; skillci agents ls)" in _flat(
        bench.stdout
    )
