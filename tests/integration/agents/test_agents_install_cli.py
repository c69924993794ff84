"""``skillci agents install --for-skill``: the agent a skill's gate runs, read from the
skill's ``target_runtime`` at a commit (what the reusable gate workflow installs). Dry
runs only: the npm command is checked, nothing is installed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillci.cli.main import main
from tests.integration.loop.conftest import git, make_scratch


def target(repo: Path, agent: str, version: str) -> None:
    manifest = repo / "skills" / "repo-debugger" / "skillci.yaml"
    pin = f"  agent: {agent}\n  agent_version: '{version}'\n  tokenizer:"
    manifest.write_text(manifest.read_text().replace("  tokenizer:", pin, 1))
    git(repo, "commit", "-qam", f"target {agent}")


def install(repo: Path, ref: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    argv = ["agents", "install", "--for-skill", "repo-debugger", "--ref", ref]
    code = main([*argv, "--repo", str(repo), "--dry-run", "--json"])
    return code, capsys.readouterr().out


def test_the_agent_of_the_skills_target_runtime_at_a_ref_is_installed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(tmp_path / "agents"))
    repo = make_scratch(tmp_path / "repo", drop_rule_file=None)
    code, out = install(repo, "main", capsys)  # the bundled skill targets the built-in loop
    assert code == 0 and json.loads(out)["agent"] == "builtin"
    assert main(["agents", "install", "--for-skill", "repo-debugger", "--repo", str(repo)]) == 0
    assert "targets the built-in agent at HEAD: nothing to install" in capsys.readouterr().out

    target(repo, "codex", "0.171.0")
    target(repo, "claude-code", "2.1.197")  # a later commit (a PR's head, say)
    code, out = install(repo, "main~1", capsys)  # the base: what the gate runs
    res = json.loads(out)
    assert code == 0 and (res["name"], res["version"]) == ("codex", "0.171.0")
    assert res["command"][-1] == "@openai/codex@0.171.0" and res["dry_run"] is True
    assert res["path"] == str(tmp_path / "agents" / "codex-0.171.0")
    code, out = install(repo, "main", capsys)
    assert json.loads(out)["command"][-1] == "@anthropic-ai/claude-code@2.1.197"
    assert not (tmp_path / "agents").exists()  # a dry run installs nothing


def test_an_agent_and_for_skill_together_or_neither_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["agents", "install", "codex", "--for-skill", "s"]) == 2
    assert main(["agents", "install"]) == 2
    assert "give an agent (NAME[@VERSION]) or --for-skill SKILL" in capsys.readouterr().err


def test_opencode_over_acp_is_listed_with_its_interface_and_installs_as_opencode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(tmp_path / "agents"))
    bin_dir = tmp_path / "agents" / "opencode-1.2.3" / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "opencode").write_text("#!/bin/sh\n")
    assert main(["agents", "ls", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert (rows["opencode-acp"]["interface"], rows["opencode"]["interface"]) == ("acp", "headless")
    # one install serves both interfaces
    assert rows["opencode-acp"]["versions"] == rows["opencode"]["versions"] == ["1.2.3"]
    assert main(["agents", "install", "opencode-acp@1.2.4", "--dry-run", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["command"][-1] == "opencode-ai@1.2.4"
    assert res["path"] == str(tmp_path / "agents" / "opencode-1.2.4")


@pytest.mark.parametrize(
    "want",
    [
        # Zed's adapters are installs of their own
        ("claude-code-acp@0.23.1", "@zed-industries/claude-agent-acp@0.23.1", "claude-code-acp"),
        ("codex-acp@0.16.0", "@zed-industries/codex-acp@0.16.0", "codex-acp"),
        # Gemini CLI's ACP server is the gemini install
        ("gemini-acp@0.61.0", "@google/gemini-cli@0.61.0", "gemini"),
    ],
)
def test_the_other_acp_agents_install_pinned_into_the_cache(
    want: tuple[str, str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    spec, package, dest = want
    monkeypatch.setenv("SKILLCI_AGENTS_DIR", str(tmp_path / "agents"))
    assert main(["agents", "install", spec, "--dry-run", "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    version = spec.partition("@")[2]
    assert res["command"][-1] == package
    assert res["path"] == str(tmp_path / "agents" / f"{dest}-{version}")
    assert main(["agents", "ls", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)}
    assert rows[spec.partition("@")[0]]["interface"] == "acp"
    assert not (tmp_path / "agents").exists()  # a dry run installs nothing
