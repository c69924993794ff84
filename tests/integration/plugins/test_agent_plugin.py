"""An agent from a package outside skillci: one module (a ``HeadlessAdapter`` subclass) plus
one ``skillci.agents`` entry point, and its executable in the agents cache, make ``eval run
--agent toyagent`` run a trial in it — the skill installed where it looks, its model calls
through skillci's gateway, its own stream turned into the record — with no edit to
skillci's files (docs/architecture.md: an agent is 1 + registration)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.integration.plugins.conftest import install_plugin, run_skillci

ROOT = Path(__file__).resolve().parents[3]

TOY_ADAPTER = '''
from skillci.agents.real.claude_code import ClaudeCode


class ToyAgent(ClaudeCode):
    """A toy CLI speaking Claude Code's stream-json, its model at $TOY_BASE_URL (chat)."""

    name = "toyagent"
    package = "toy-agent"
    binary = "toy"
    skills_dir = ".toy/skills"
    wire_api = "chat"

    def environment(self, home, gateway, model):
        return {"TOY_BASE_URL": gateway.base_url + "/v1", "TOY_TOKEN": gateway.token}

    def command(self, exe, prompt, model, cwd):
        return [exe, "--model", model, prompt]
'''

# The agent itself: lists its skills, loads the first (a `Skill` tool call), asks the model
# once with the skill's text, and reports the answer. It changes no file.
TOY_CLI = """#!/usr/bin/env python3
import glob, json, os, sys, urllib.request

model, prompt = sys.argv[2], sys.argv[3]
skills = sorted(glob.glob(".toy/skills/*/SKILL.md"))
out = lambda rec: print(json.dumps(rec), flush=True)
out({"type": "system", "subtype": "init", "skills": [p.split("/")[2] for p in skills]})
body = ""
if skills:
    name = skills[0].split("/")[2]
    out({"type": "assistant", "message": {"content": [
        {"type": "tool_use", "id": "toy_1", "name": "Skill", "input": {"skill": name}}]}})
    body = open(skills[0]).read()
    out({"type": "user", "message": {"content": [
        {"type": "tool_result", "tool_use_id": "toy_1", "content": body[:200]}]}})
req = urllib.request.Request(
    os.environ["TOY_BASE_URL"] + "/chat/completions",
    data=json.dumps({"model": model, "messages": [
        {"role": "system", "content": body}, {"role": "user", "content": prompt}]}).encode(),
    headers={"Authorization": "Bearer " + os.environ["TOY_TOKEN"],
             "Content-Type": "application/json"},
)
answer = json.load(urllib.request.urlopen(req, timeout=60))
text = answer["choices"][0]["message"].get("content") or "(tool calls only)"
out({"type": "assistant", "message": {"content": [{"type": "text", "text": text}]}})
out({"type": "result", "result": text, "num_turns": 1})
"""


def _install_toy_cli(agents: Path) -> Path:
    exe = agents / "toyagent-0.1.0" / "node_modules" / ".bin" / "toy"
    exe.parent.mkdir(parents=True)
    exe.write_text(TOY_CLI, encoding="utf-8")
    exe.chmod(0o755)
    return exe


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap (the trial sandbox)")
def test_an_agent_plugin_runs_a_trial_with_its_own_skill_load_and_model_calls(
    tmp_path: Path,
) -> None:
    site = install_plugin(
        tmp_path / "site",
        "toy_agent",
        {"toy_agent": TOY_ADAPTER},
        "[skillci.agents]\ntoyagent = toy_agent:ToyAgent\n",
    )
    agents = tmp_path / "agents"
    _install_toy_cli(agents)
    env = {"SKILLCI_AGENTS_DIR": str(agents), "COLUMNS": "200"}

    listed = run_skillci(site, "agents", "ls", "--json", env=env)
    assert listed.returncode == 0, listed.stderr
    assert "toyagent" in listed.stdout and "0.1.0" in listed.stdout

    argv = ["eval", "run", "--root", str(ROOT), "--home", str(tmp_path / "home"), "--task"]
    argv += ["py-window-end", "--skill", str(ROOT / "skills" / "repo-debugger")]
    argv += ["--agent", "toyagent", "--model", "sim/student", "--json"]
    done = run_skillci(site, *argv, "--sandbox", "bwrap", env=env)
    # it answers but fixes nothing: a measured failure (exit 0, a failed trial), not an error
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    (trial,) = out["trials"]
    assert (trial["state"], trial["error"], trial["model_calls"]) == ("failed", None, 1)
    record = json.loads((Path(trial["trial_dir"]) / "record.json").read_text())
    assert (record["runtime"]["harness"], record["runtime"]["harness_version"]) == (
        "toyagent",
        "0.1.0",
    )
    assert record["runtime"]["skill"] is not None
    events = record["events"]
    # from the toy's own Skill call in its stream: a tool call and the skill-load event
    assert any(e["kind"] == "tool_call" and e.get("tool") == "Skill" for e in events), events
    assert any(e["kind"] == "skill_load" for e in events), events
    # its one model call went through skillci's gateway, which logged it
    calls = (Path(trial["trial_dir"]) / "logs" / "agent" / "gateway.jsonl").read_text()
    assert len(calls.splitlines()) == record["cost"]["model_calls"] == 1
