"""Every option of every command: help text, a readable metavar, closed sets as choices."""

from __future__ import annotations

from typing import Any, get_args

import pytest

from skillci.cli import choices
from skillci.cli.main import all_commands, main


def _help_lines() -> list[str]:
    problems = []
    for name, cmd in all_commands().items():
        for p in cmd.params:
            if p.param_type_name != "option" or p.name == "help":
                continue
            flag = max(p.opts, key=len)
            if not (getattr(p, "help", None) or "").strip():
                problems.append(f"skillci {name} {flag}: no help")
            metavar = p.metavar or ""
            if "<" in metavar:
                problems.append(f"skillci {name} {flag}: metavar {metavar}")
    return problems


def test_every_option_has_help_and_no_python_type_metavar() -> None:
    assert _help_lines() == []


def test_help_output_shows_no_python_types(capsys: pytest.CaptureFixture[str]) -> None:
    for name in all_commands():
        assert main([*name.split(), "--help"]) == 0, name
        out = capsys.readouterr().out
        for bad in ("<bool>", "<str>", "<int>", "<path>", "<list["):
            assert bad not in out, (name, bad)


@pytest.mark.parametrize(
    ("argv", "option", "choices_shown"),
    [
        (
            ["eval", "run", "--sandbox", "dockr"],
            "--sandbox",
            "'required', 'auto', 'none', 'bwrap', 'docker'",
        ),
        (["eval", "run", "--agent", "foo"], "--agent", "'builtin', 'oracle', 'noop'"),
        (["resolve", "x", "--channel", "beta"], "--channel", "'stable', 'canary'"),
        (["pr", "list", "--forge", "gitlab"], "--forge", "'local', 'github'"),
        (["skill", "render", ".", "--harness", "claude"], "--harness", "'folder', 'builtin'"),
    ],
)
def test_a_typo_in_a_choice_is_exit_2_listing_the_choices(
    argv: list[str], option: str, choices_shown: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert option in err
    assert choices_shown in err
    assert "Traceback" not in err and "ValidationError" not in err


def test_choice_sets_mirror_the_domain_types() -> None:
    from skillci.flows.evalrun import EvalRequest
    from skillci.forge.registry import names as forge_names
    from skillci.release.models import Channel
    from skillci.runners.registry import modes, runner_names
    from skillci.skill.render import HARNESSES

    fields = EvalRequest.model_fields
    from skillci.runners.policy import POLICIES

    sandbox_choice: Any = choices.Sandbox  # an enum built from the runner registry
    assert [m.value for m in sandbox_choice] == ["required", "auto", "none", "bwrap", "docker"]
    assert set(modes()) == {"auto", "bwrap", "none", "docker"}
    assert set(get_args(choices.SandboxPolicy)) == set(POLICIES)
    from skillci.flows.evalrun import agent_names

    assert {"builtin", "oracle", "noop", "claude-code", "codex"} <= set(agent_names())
    assert set(get_args(choices.Role)) == set(get_args(fields["role"].annotation))
    forge_choice: Any = choices.Forge  # an enum built from the forge registry
    assert [m.value for m in forge_choice] == forge_names() == ["local", "github"]
    assert set(get_args(choices.Channel)) == set(get_args(Channel))
    assert set(get_args(choices.Harness)) == set(HARNESSES)
    raw_runner: Any = choices.RawRunner  # an enum built from the runner registry
    assert (
        [m.value for m in raw_runner]
        == runner_names()
        == ["local", "docker", "benchflow", "harbor"]
    )
    from skillci.flows.triggers import TriggerEvalRequest, TriggerMode
    from skillci.skill.catalogue import CATALOGUE_HARNESSES

    assert set(get_args(choices.TriggerMode)) == set(get_args(TriggerMode))
    split = TriggerEvalRequest.model_fields["split"].annotation
    assert set(get_args(choices.TriggerSplit)) == set(get_args(split))
    assert set(CATALOGUE_HARNESSES) == set(HARNESSES)
