"""Real agents' registry, configuration and stream parsing (no agent process here; the
processes run in tests/integration/agents/test_real_agents.py)."""

from __future__ import annotations

import time
import tomllib
from pathlib import Path

import pytest

from skillci.agents.base import EventLog
from skillci.agents.headless import StreamState, install_skills, remove_skills, skill_loads
from skillci.agents.real.claude_code import ClaudeCode
from skillci.agents.real.codex import Codex, config_toml
from skillci.agents.real.gemini_cli import GeminiCli
from skillci.agents.real.opencode import OpenCode
from skillci.agents.registry import adapter, names, real_names
from skillci.errors import UsageError
from skillci.skill.render import RenderedFile, RenderedSkill
from skillci.trace.models import Event


def skill(name: str = "fixer") -> RenderedSkill:
    files = [
        RenderedFile(path="SKILL.md", content=b"# fixer\n", kind="bootstrap", tokens=3),
        RenderedFile(path="references/api.md", content=b"api\n", kind="on_demand", tokens=1),
    ]
    return RenderedSkill(
        name=name, version="1.0.0", harness="folder", package_hash="h", files=files
    )


def test_registry_names_real_agents_and_refuses_others() -> None:
    assert names()[:3] == ["builtin", "oracle", "noop"]
    assert {"claude-code", "codex", "opencode"} <= set(real_names())
    assert adapter("codex").skills_dir == ".agents/skills"
    with pytest.raises(UsageError, match="unknown real agent 'builtin'"):
        adapter("builtin")


def test_codex_config_names_only_the_gateway_and_turns_off_outside_traffic() -> None:
    cfg = tomllib.loads(config_toml("http://127.0.0.1:5", 'we"ird'))
    assert cfg["model"] == 'we"ird' and cfg["model_provider"] == "skillci"
    provider = cfg["model_providers"]["skillci"]
    assert provider["base_url"] == "http://127.0.0.1:5/v1" and provider["wire_api"] == "responses"
    assert not any(cfg["features"].values()) and cfg["analytics"]["enabled"] is False


def test_skills_install_where_the_agent_looks_and_leave_no_trace(tmp_path: Path) -> None:
    created = install_skills(tmp_path, ".claude/skills", [skill(), skill("other")])
    assert (tmp_path / ".claude/skills/fixer/references/api.md").read_bytes() == b"api\n"
    remove_skills(created)
    assert not (tmp_path / ".claude").exists()


def test_skills_in_a_dir_the_task_already_has_leave_only_what_the_task_made(
    tmp_path: Path,
) -> None:
    """Copilot's skills dir is ``.github/skills``: a task with ``.github/workflows`` keeps
    it, and the ``skills`` dir the install made is removed with the skills."""
    (tmp_path / ".github" / "workflows").mkdir(parents=True)
    created = install_skills(tmp_path, ".github/skills", [skill()])
    assert (tmp_path / ".github/skills/fixer/SKILL.md").is_file()
    remove_skills(created)
    assert sorted(p.name for p in (tmp_path / ".github").iterdir()) == ["workflows"]


def test_a_read_of_an_installed_skill_file_is_found_by_path() -> None:
    hits = skill_loads(
        "cat /app/.agents/skills/fixer/references/api.md", [skill()], ".agents/skills"
    )
    assert [p for _, p in hits] == ["references/api.md"]
    assert skill_loads("cat fixer/SKILL.md", [skill()], ".agents/skills") == []


def parse(
    agent: ClaudeCode | Codex | OpenCode | GeminiCli, lines: list[dict[str, object]]
) -> tuple[list[Event], StreamState]:
    events: list[Event] = []
    log, state = EventLog(events, time.monotonic()), StreamState()
    for line in lines:
        agent.parse(line, log, state)
    return events, state


def test_claude_stream_gives_tool_calls_results_and_final_text() -> None:
    events, state = parse(
        ClaudeCode(),
        [
            {"type": "system", "subtype": "init", "skills": ["fixer"]},
            {
                "type": "assistant",
                "message": {
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "u1",
                            "name": "Skill",
                            "input": {"skill": "fixer"},
                        }
                    ]
                },
            },
            {
                "type": "user",
                "message": {
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "u1",
                            "content": "Launching skill: fixer",
                        }
                    ]
                },
            },
            {"type": "assistant", "message": {"content": [{"type": "text", "text": "done"}]}},
            {"type": "result", "subtype": "success", "result": "done", "num_turns": 2},
        ],
    )
    assert [e.kind for e in events] == ["tool_call", "tool_result", "message"]
    assert events[0].tool == "Skill" and events[0].arguments == {"skill": "fixer"}  # type: ignore[union-attr]
    assert events[1].tool == "Skill"  # type: ignore[union-attr]
    assert state.final_output == "done" and state.turns == 2


def test_codex_stream_gives_commands_with_exit_codes() -> None:
    item = {"id": "i1", "type": "command_execution", "command": "bash -lc ls"}
    events, state = parse(
        Codex(),
        [
            {"type": "item.completed", "item": {"id": "e", "type": "error", "message": "metadata"}},
            {"type": "item.started", "item": {**item, "status": "in_progress"}},
            {
                "type": "item.completed",
                "item": {
                    **item,
                    "aggregated_output": "a.py\n",
                    "exit_code": 0,
                    "status": "completed",
                },
            },
            {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "ok"}},
            {"type": "turn.completed", "usage": {"input_tokens": 5}},
        ],
    )
    assert [e.kind for e in events] == ["tool_call", "tool_result", "message"]
    assert events[1].exit_code == 0 and events[1].output == "a.py\n"  # type: ignore[union-attr]
    assert state.final_output == "ok"


def test_opencode_stream_gives_tool_use_with_error_status() -> None:
    events, state = parse(
        OpenCode(),
        [
            {
                "type": "tool_use",
                "part": {
                    "callID": "c",
                    "tool": "bash",
                    "state": {"status": "error", "input": {"command": "x"}, "error": "boom"},
                },
            },
            {"type": "text", "part": {"text": "gave up"}},
        ],
    )
    assert events[1].error == "boom"  # type: ignore[union-attr]
    assert state.final_output == "gave up"


def test_gemini_stream_gives_tool_calls_results_one_message_per_answer_and_errors() -> None:
    """Records as Gemini CLI 0.61.0 writes them (``--output-format stream-json``)."""
    use = {"type": "tool_use", "tool_name": "activate_skill", "tool_id": "activate_skill__c1"}
    shell = {"type": "tool_use", "tool_name": "run_shell_command", "tool_id": "sh__c2"}
    events, state = parse(
        GeminiCli(),
        [
            {"type": "init", "session_id": "s", "model": "scripted"},
            {"type": "message", "role": "user", "content": "fix it"},
            {"type": "message", "role": "assistant", "content": "Let me ", "delta": True},
            {"type": "message", "role": "assistant", "content": "look.", "delta": True},
            {**use, "parameters": {"name": "fixer"}},
            {"type": "tool_result", "tool_id": "activate_skill__c1", "status": "success"}
            | {"output": "Skill **fixer** activated."},
            {**shell, "parameters": {"command": "false"}},
            {"type": "tool_result", "tool_id": "sh__c2", "status": "error"}
            | {"error": {"type": "TOOL_EXECUTION_ERROR", "message": "exit 1"}},
            {"type": "error", "severity": "warning", "message": "Loop detected"},
            {"type": "message", "role": "assistant", "content": "Done", "delta": True},
            {"type": "message", "role": "assistant", "content": ".", "delta": True},
            {"type": "result", "status": "success", "stats": {"tool_calls": 2}},
        ],
    )
    kinds = [e.kind for e in events]
    calls = ["tool_call", "tool_result", "tool_call", "tool_result"]
    assert kinds == ["message", *calls, "error", "message"]
    assert events[0].content == "Let me look."  # type: ignore[union-attr]
    assert events[1].tool == "activate_skill" and events[1].arguments == {"name": "fixer"}  # type: ignore[union-attr]
    assert events[2].tool == "activate_skill" and events[2].error is None  # type: ignore[union-attr]
    assert events[4].error == "exit 1" and events[4].output == "exit 1"  # type: ignore[union-attr]
    assert state.final_output == "Done." and state.reported_error is None
    _, state = parse(
        GeminiCli(),
        [{"type": "result", "status": "error", "error": {"type": "Error", "message": "[API 400]"}}],
    )
    assert state.final_output is None and state.reported_error == "[API 400]"


def test_gemini_loads_a_skill_with_activate_skill_and_its_config_keeps_it_on_loopback(
    tmp_path: Path,
) -> None:
    import json

    from skillci.agents.headless import skill_hits
    from skillci.providers.client import ModelClient
    from skillci.providers.gateway import Gateway
    from skillci.providers.routes import ModelRoute

    gemini = GeminiCli()
    hits = skill_hits("activate_skill", {"name": "fixer"}, "", [skill()], gemini)
    assert [(s.name, p) for s, p in hits] == [("fixer", "SKILL.md")]
    assert skill_hits("activate_skill", {"name": "nope"}, "", [skill()], gemini) == []
    assert skill_hits("skill", {"name": "fixer"}, "", [skill()], gemini) == []  # not its tool
    route = ModelRoute(model="openai/none", api_base="http://127.0.0.1:9/v1", timeout=1)
    with Gateway(ModelClient("none", route)) as gw:
        env = gemini.environment(tmp_path, gw, "scripted")
        assert env["GOOGLE_GEMINI_BASE_URL"] == gw.base_url
        assert env["GEMINI_API_KEY"] == gw.token
    settings = json.loads((tmp_path / ".gemini" / "settings.json").read_text())
    assert settings["security"]["auth"]["selectedType"] == "gemini-api-key"
    # without these it sends usage statistics to play.googleapis.com (docs/agents/gemini.md)
    assert settings["privacy"]["usageStatisticsEnabled"] is False
    assert settings["telemetry"]["enabled"] is False
    assert settings["general"]["enableAutoUpdate"] is False
    argv = gemini.command("gemini", "fix it", "scripted", "/app")
    assert argv[argv.index("--output-format") + 1] == "stream-json" and "--yolo" in argv


def test_trigger_choice_is_what_the_agent_loaded_never_what_it_said() -> None:
    from skillci.agents.base import AgentResult
    from skillci.flows.agent_triggers import choice_of, loaded_skills

    res = AgentResult()
    log, state = EventLog(res.events, time.monotonic()), StreamState()
    said = {"type": "text", "text": "I will use the fixer skill (loaded fixer)."}
    for record in (
        {"type": "assistant", "message": {"content": [said]}},
        {
            "type": "assistant",
            "message": {
                "content": [
                    {"type": "tool_use", "id": "1", "name": "Skill", "input": {"skill": "other"}}
                ]
            },
        },
    ):
        ClaudeCode().parse(record, log, state)
    skills = [skill(), skill("other")]
    assert loaded_skills(res, ClaudeCode(), skills) == ["other"]  # the prose named fixer
    assert choice_of("fixer", ["other"]) == "other" and choice_of("fixer", []) is None
    read = {"type": "tool_use", "id": "2", "name": "Read"}
    read["input"] = {"file_path": "/app/.claude/skills/fixer/SKILL.md"}
    ClaudeCode().parse({"type": "assistant", "message": {"content": [read]}}, log, state)
    assert loaded_skills(res, ClaudeCode(), skills) == ["other", "fixer"]
    assert choice_of("fixer", ["other", "fixer"]) == "fixer"  # loaded at all: triggered


def test_the_load_watch_sees_a_load_in_the_growing_stream_line_by_line(tmp_path: Path) -> None:
    import json

    from skillci.agents.headless import _LoadWatch

    stream = tmp_path / "codex.jsonl"
    stream.write_text("")
    watch = _LoadWatch(Codex(), stream, skill())
    item = {"id": "i1", "type": "command_execution", "command": "cat .agents/skills/other/SKILL.md"}
    line = json.dumps({"type": "item.started", "item": item})
    stream.write_text(line + "\n")
    assert not watch.loaded()  # another skill's file
    item = {"id": "i2", "type": "command_execution", "command": "cat .agents/skills/fixer/SKILL.md"}
    line = json.dumps({"type": "item.started", "item": item})
    with stream.open("a") as f:
        f.write(line[:20])
    assert not watch.loaded()  # half a line is not read yet
    with stream.open("a") as f:
        f.write(line[20:] + "\n")
    assert watch.loaded()


def test_the_exit_watch_wakes_when_the_agent_exits_not_at_its_timeout() -> None:
    import subprocess

    from skillci.agents.headless import _ExitWatch

    proc = subprocess.Popen(["sleep", "0.3"])
    with _ExitWatch(proc) as exited:
        assert not exited(timeout=0.05)  # still running
        start = time.monotonic()
        assert exited(timeout=5.0)
        assert time.monotonic() - start < 1.0  # woke at the exit (~0.25 s), not after 5 s
    assert proc.wait() == 0


def test_copilot_stream_gives_tool_requests_results_and_its_session_error() -> None:
    """Records as GitHub Copilot CLI 1.0.102 writes them (``--output-format json``);
    ``ephemeral`` progress records are not the run."""
    from skillci.agents.real.copilot import Copilot

    ask = {"toolCallId": "call_1_0", "name": "skill", "arguments": {"skill": "fixer"}}
    sh = {"toolCallId": "call_2_0", "name": "bash", "arguments": {"command": "false"}}
    events, state = parse(
        Copilot(),
        [
            {"type": "session.skills_loaded", "ephemeral": True, "data": {"skills": []}},
            {"type": "user.message", "data": {"content": "fix it"}},
            {"type": "assistant.message", "data": {"content": "Loading.", "toolRequests": [ask]}},
            {"type": "tool.execution_start", "data": {"toolCallId": "call_1_0"}},
            {"type": "tool.execution_complete"}
            | {"data": {"toolCallId": "call_1_0", "success": True, "result": {"content": "ok"}}},
            {"type": "assistant.message", "data": {"content": "", "toolRequests": [sh]}},
            {"type": "tool.execution_complete"}
            | {
                "data": {"toolCallId": "call_2_0", "success": False, "error": {"message": "exit 1"}}
            },
            {"type": "assistant.message", "data": {"content": "Done.", "toolRequests": []}},
            {"type": "result", "exitCode": 0},
        ],
    )
    assert [e.kind for e in events] == ["message", *["tool_call", "tool_result"] * 2, "message"]
    assert events[1].tool == "skill" and events[1].arguments == {"skill": "fixer"}  # type: ignore[union-attr]
    assert events[2].output == "ok" and events[2].tool == "skill"  # type: ignore[union-attr]
    assert events[4].error == "exit 1"  # type: ignore[union-attr]
    assert state.final_output == "Done." and state.reported_error is None
    said = "Could not connect to local model provider at http://127.0.0.1:9/v1."
    _, state = parse(
        Copilot(),
        [
            {"type": "session.error", "data": {"errorType": "query", "message": said}},
            {"type": "result", "exitCode": 1},
        ],
    )
    assert state.final_output is None and state.reported_error == said


def test_copilot_is_offline_on_the_gateway_and_reuses_its_unpacked_package(
    tmp_path: Path,
) -> None:
    from skillci.agents.real.copilot import COMPILE_CACHE, PKG_CACHE, Copilot
    from skillci.providers.client import ModelClient
    from skillci.providers.gateway import Gateway
    from skillci.providers.routes import ModelRoute

    copilot = Copilot()
    exe = tmp_path / "copilot-1.0.102" / "node_modules" / ".bin" / "copilot"
    assert copilot.install_env(exe) == {}  # not unpacked: the trial unpacks it in its HOME
    (tmp_path / "copilot-1.0.102" / PKG_CACHE / "pkg").mkdir(parents=True)
    cache = str(tmp_path / "copilot-1.0.102" / PKG_CACHE)
    assert copilot.install_env(exe) == {"COPILOT_PKG_CACHE_HOME": cache}
    (tmp_path / "copilot-1.0.102" / COMPILE_CACHE).mkdir()  # warmed at install
    compiled = str(tmp_path / "copilot-1.0.102" / COMPILE_CACHE)
    assert copilot.install_env(exe) == {
        "COPILOT_PKG_CACHE_HOME": cache,
        "NODE_COMPILE_CACHE": compiled,
    }
    route = ModelRoute(model="openai/none", api_base="http://127.0.0.1:9/v1", timeout=1)
    with Gateway(ModelClient("none", route)) as gw:
        env = copilot.environment(tmp_path / "home", gw, "scripted")
        assert env["COPILOT_PROVIDER_BASE_URL"] == gw.base_url + "/v1"
        assert env["COPILOT_PROVIDER_API_KEY"] == gw.token
    assert env["COPILOT_OFFLINE"] == "true" and env["COPILOT_AUTO_UPDATE"] == "false"
    assert env["COPILOT_HOME"] == str(tmp_path / "home" / ".copilot")
    argv = copilot.command("copilot", "fix it", "scripted", "/app")
    assert argv[argv.index("--output-format") + 1] == "json" and "--allow-all-tools" in argv


def _acp_events(agent: str, messages: list[tuple[str, dict[str, object]]]) -> list[Event]:
    """The events an ACP session's messages become: ("update"|"permission", params)."""
    from skillci.agents.acp import AcpAdapter, Trajectory

    a = adapter(agent)
    assert isinstance(a, AcpAdapter)
    trajectory = Trajectory()
    for kind, params in messages:
        trajectory.update(params) if kind == "update" else trajectory.permission(params)
    log = EventLog([], time.monotonic())
    trajectory.events(log, a, [skill("repo-debugger")], under_test=True)
    return log.events


def _up(**fields: object) -> tuple[str, dict[str, object]]:
    return "update", {"sessionId": "s", "update": fields}


def test_gemini_over_acp_names_calls_by_their_id_and_a_permission_announces_a_call() -> None:
    """Shapes Gemini CLI 0.61 sends: no tool name, no rawInput; a call needing permission
    appears first in ``session/request_permission``."""
    title = '"repo-debugger": Fix a failing test.'
    events = _acp_events(
        "gemini-acp",
        [
            ("permission", {"toolCall": {"toolCallId": "activate_skill__c1", "title": title}}),
            _up(
                sessionUpdate="tool_call_update",
                toolCallId="activate_skill__c1",
                status="completed",
            ),
            _up(
                sessionUpdate="tool_call",
                toolCallId="read_file__c2",
                status="in_progress",
                title=".gemini/.../fixer/SKILL.md",
                locations=[{"path": "/app/.gemini/skills/repo-debugger/references/api.md"}],
            ),
            _up(
                sessionUpdate="tool_call_update",
                toolCallId="read_file__c2",
                status="completed",
                content=[{"type": "content", "content": {"type": "text", "text": "api"}}],
            ),
        ],
    )
    calls = [e for e in events if e.kind == "tool_call"]
    assert [(c.tool, c.arguments) for c in calls] == [
        ("activate_skill", {"name": "repo-debugger"}),
        (
            "read_file",
            {
                "title": ".gemini/.../fixer/SKILL.md",
                "paths": ["/app/.gemini/skills/repo-debugger/references/api.md"],
            },
        ),
    ]
    assert [e.path for e in events if e.kind == "skill_load"] == ["SKILL.md", "references/api.md"]
    assert [e.output for e in events if e.kind == "tool_result"] == ["", "api"]


def test_claude_code_and_codex_over_acp_keep_their_own_tool_names_and_outputs() -> None:
    claude = _acp_events(
        "claude-code-acp",
        [
            _up(
                sessionUpdate="tool_call",
                toolCallId="t1",
                title="Terminal",
                rawInput={},
                _meta={"claudeCode": {"toolName": "Bash"}},
            ),
            _up(sessionUpdate="tool_call_update", toolCallId="t1", rawInput={"command": "ls"}),
            _up(
                sessionUpdate="tool_call_update",
                toolCallId="t1",
                status="completed",
                rawOutput="a\n",
            ),
        ],
    )
    assert [(e.tool, e.arguments) for e in claude if e.kind == "tool_call"] == [
        ("Bash", {"command": "ls"})
    ]
    assert [e.output for e in claude if e.kind == "tool_result"] == ["a\n"]
    cmd = ["/bin/bash", "-lc", "cat .agents/skills/repo-debugger/SKILL.md"]
    begin = {"call_id": "c1", "process_id": "9", "command": cmd, "parsed_cmd": []}
    codex = _acp_events(
        "codex-acp",
        [
            _up(sessionUpdate="tool_call", toolCallId="c1", title="Read SKILL.md", rawInput=begin),
            _up(
                sessionUpdate="tool_call_update",
                toolCallId="c1",
                status="failed",
                rawOutput={"aggregated_output": "no such file\n", "exit_code": 1},
            ),
        ],
    )
    [call] = [e for e in codex if e.kind == "tool_call"]
    assert (call.tool, call.arguments) == ("command_execution", {"command": cmd})
    [result] = [e for e in codex if e.kind == "tool_result"]
    assert (result.output, result.exit_code, result.error) == (
        "no such file\n",
        1,
        "no such file\n",
    )
    assert [e.path for e in codex if e.kind == "skill_load"] == ["SKILL.md"]


def test_copilot_over_acp_is_recorded_with_its_headless_tool_names() -> None:
    """Copilot CLI 1.0.102's ``tool_call``s: a description as the title, no tool name."""
    events = _acp_events(
        "copilot-acp",
        [
            _up(
                sessionUpdate="tool_call",
                toolCallId="call_1_0",
                title="Using skill: repo-debugger",
                kind="other",
                rawInput={"skill": "repo-debugger"},
            ),
            _up(sessionUpdate="tool_call_update", toolCallId="call_1_0", status="completed"),
            _up(
                sessionUpdate="tool_call",
                toolCallId="call_2_0",
                title="Run the failing check",
                kind="execute",
                rawInput={"command": "make check", "description": "Run the failing check"},
            ),
            _up(sessionUpdate="tool_call", toolCallId="call_3_0", title="Plan", kind="other"),
        ],
    )
    calls = [(e.tool, e.arguments) for e in events if e.kind == "tool_call"]
    assert calls == [
        ("skill", {"skill": "repo-debugger"}),
        ("bash", {"command": "make check", "description": "Run the failing check"}),
        ("Plan", {}),  # neither a known kind nor a skill call: its title, as for any agent
    ]
    assert [e.path for e in events if e.kind == "skill_load"] == ["SKILL.md"]
