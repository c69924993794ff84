"""GITHUB_OUTPUT, GITHUB_STEP_SUMMARY and GITHUB_EVENT_PATH as skillci writes/reads them,
and the git credentials skillci hands to git for GitHub."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.errors import InvalidInputError
from skillci.forge.actions import add_summary, read_event, set_output
from skillci.forge.github_env import git_auth_env
from tests.integration.workflows.actions_runner import parse_outputs


def test_outputs_round_trip_including_multiline(tmp_path: Path) -> None:
    out = tmp_path / "out"
    env = {"GITHUB_OUTPUT": str(out)}
    assert set_output("matrix", '{"include":[]}', env)
    assert set_output("body", "line 1\nline 2", env)
    assert parse_outputs(out.read_text()) == {"matrix": '{"include":[]}', "body": "line 1\nline 2"}
    assert not set_output("x", "y", {})  # outside Actions: nothing to write


def test_summary_appends(tmp_path: Path) -> None:
    env = {"GITHUB_STEP_SUMMARY": str(tmp_path / "s.md")}
    add_summary("# one", env)
    add_summary("two\n", env)
    assert (tmp_path / "s.md").read_text() == "# one\ntwo\n"


def test_event_payload(tmp_path: Path) -> None:
    p = tmp_path / "event.json"
    p.write_text('{"workflow_run": {"head_sha": "abc"}}')
    assert read_event({"GITHUB_EVENT_PATH": str(p)}) == {"workflow_run": {"head_sha": "abc"}}
    assert read_event({}) is None
    p.write_text("[1]")
    with pytest.raises(InvalidInputError, match="not a JSON object"):
        read_event({"GITHUB_EVENT_PATH": str(p)})


def test_git_auth_goes_through_config_env_not_the_command_line() -> None:
    env = git_auth_env({"GITHUB_TOKEN": "tok", "GITHUB_SERVER_URL": "https://ghe.example"})
    assert env["GIT_CONFIG_COUNT"] == "1"
    assert env["GIT_CONFIG_KEY_0"] == "http.https://ghe.example/.extraheader"
    assert env["GIT_CONFIG_VALUE_0"] == "AUTHORIZATION: basic eC1hY2Nlc3MtdG9rZW46dG9r"
    assert git_auth_env({}) == {}
    more = git_auth_env({"GITHUB_TOKEN": "t", "GIT_CONFIG_COUNT": "2"})
    assert more["GIT_CONFIG_COUNT"] == "3" and "GIT_CONFIG_KEY_2" in more
