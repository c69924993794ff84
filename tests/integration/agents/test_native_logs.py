"""The session log a real agent writes imports as a run record (design 388).

The real Codex CLI solves cfg-log-level in ``skillci eval run`` against the loopback scripted
model (as in test_real_agents.py); its rollout (``$CODEX_HOME/sessions/...``, in the trial's
fresh HOME that the runner deletes afterwards) is copied out before the deletion and imported
with ``skillci trace import --format codex``. The import must agree with what skillci itself
recorded from Codex's ``--json`` stream of the same run: the same commands, each call paired
with its output by call id, the same token counts.
"""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path
from typing import Any

import pytest

from skillci.cli.main import main
from skillci.runners import local
from skillci.trace.atif import to_atif
from skillci.trace.importers.opencode import import_jobs, read_sessions, session_to_atif
from skillci.trace.store import TraceStore
from tests import services
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.agents.test_real_agents import eval_run, routes

__all__ = ["routes"]  # the fixture


def run_keeping(
    sub: str,
    agent: str,
    dest: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> Any:
    """Run ``agent`` on cfg-log-level; copy ``HOME/<sub>`` to ``dest`` before the runner
    discards the trial's HOME; the live record skillci wrote."""
    discard = local.discard_tree

    def keep_home(path: Path, trash: Path) -> None:
        if path.name == "home" and (path / sub).is_dir() and not dest.exists():
            shutil.copytree(path / sub, dest)
        discard(path, trash)

    monkeypatch.setattr(local, "discard_tree", keep_home)
    code, out = eval_run(agent, tmp_path / "state", capsys)
    assert code == 0, out
    [trial] = out["trials"]
    return json.loads((Path(trial["trial_dir"]) / "record.json").read_text())


@pytest.mark.agents  # 7 s measured
def test_a_real_codex_rollout_imports_with_every_call_paired_and_its_tokens(
    routes: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kept = tmp_path / "codex-home"
    live = run_keeping(".codex/sessions", "codex", kept / "sessions", tmp_path, monkeypatch, capsys)
    [rollout] = (kept / "sessions").rglob("rollout-*.jsonl")
    assert rollout.parent.parent.parent.parent == kept / "sessions"  # sessions/YYYY/MM/DD

    home = tmp_path / "imported"
    argv = ["trace", "import", "--format", "codex", str(kept / "sessions"), "--home", str(home)]
    assert main([*argv, "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["trials"], report["stored"], report["unmapped"]) == (1, 1, {})
    assert report["states"] == {"not_run": 1}
    store = TraceStore(home)
    rec = store.get(f"codex-{rollout.stem[-36:]}")  # rollout-<time>-<session id>.jsonl
    assert rec.runtime.harness_version == "0.171.0"
    assert rec.model.name == "scripted"  # turn_context.model
    calls = [e for e in rec.events if e.kind == "tool_call"]
    results = {e.call_id: e for e in rec.events if e.kind == "tool_result"}
    assert calls and all(c.call_id in results and results[c.call_id].output for c in calls)
    assert [c.arguments["cmd"] for c in calls] == [
        shlex.split(c["arguments"]["command"])[-1]  # /bin/bash -lc '<cmd>'
        for c in live["events"]
        if c["kind"] == "tool_call"
    ]
    assert any("config/service.ini: ok" in r.output for r in results.values())
    # every model response's usage, as the gateway counted it for the live record
    assert rec.cost.model_calls == live["cost"]["model_calls"] == len(routes.requests)
    assert rec.cost.input_tokens == live["cost"]["input_tokens"] > 0
    assert rec.cost.output_tokens == live["cost"]["output_tokens"] > 0
    stamps = [s["timestamp"] for s in to_atif(rec)["steps"]]
    assert stamps and all(s.endswith("Z") for s in stamps)
    assert rec.created_at.tzinfo is not None

    # the same rollout from another path is the same run: already stored
    again = tmp_path / "copy" / rollout.name
    again.parent.mkdir()
    shutil.copy(rollout, again)
    assert main(["trace", "import", "--format", "codex", str(again), "--home", str(home)]) == 0
    assert "1 already present" in " ".join(capsys.readouterr().out.split())


@pytest.mark.agents
@pytest.mark.slow  # 25-48 s measured: OpenCode's start in a fresh HOME
def test_a_real_opencode_database_imports_with_every_call_paired_and_its_tokens(
    routes: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    services.need_agent("opencode")
    data = tmp_path / "opencode-data"
    live = run_keeping(".local/share/opencode", "opencode", data, tmp_path, monkeypatch, capsys)
    home = tmp_path / "imported"
    argv = ["trace", "import", "--format", "opencode", str(data), "--home", str(home), "--json"]
    assert main(argv) == 0
    report = json.loads(capsys.readouterr().out)
    assert (report["trials"], report["stored"], report["states"]) == (1, 1, {"not_run": 1})
    [db] = data.glob("opencode.db")
    [session] = read_sessions(db)
    rec = TraceStore(home).get(f"opencode-{session['info']['id']}")
    assert rec.runtime.harness_version == services.AGENT_VERSIONS["opencode"]
    assert rec.model.name == "scripted"
    calls = [e for e in rec.events if e.kind == "tool_call"]
    results = {e.call_id: e for e in rec.events if e.kind == "tool_result"}
    assert calls and all(c.call_id in results for c in calls)
    live_calls = [e for e in live["events"] if e["kind"] == "tool_call"]
    assert [(c.tool, c.call_id) for c in calls] == [(c["tool"], c["call_id"]) for c in live_calls]
    assert any("config/service.ini: ok" in r.output for r in results.values())
    # the session holds the agent's calls (with tools); the title call is not in it, so the
    # live record (every call through the gateway) counts one more
    agent_calls = sum(1 for r in routes.requests if r.get("tools"))
    assert rec.cost.model_calls == agent_calls == live["cost"]["model_calls"] - 1
    info = session["info"]  # OpenCode's own session totals
    assert (rec.cost.input_tokens, rec.cost.output_tokens) == (
        info["tokens_input"],
        info["tokens_output"],
    )
    assert 0 < rec.cost.input_tokens < live["cost"]["input_tokens"]
    traj = session_to_atif(session)
    [fresh] = import_jobs(data)
    assert to_atif(fresh) == traj  # export gives back the converted session
    # stored: redacted (the env listing holds the gateway token), ids and times intact
    stored = to_atif(rec)
    for key in ("step_id", "timestamp", "model_name", "metrics"):
        assert [s.get(key) for s in stored["steps"]] == [s.get(key) for s in traj["steps"]]
    ids = [[c["tool_call_id"] for c in s.get("tool_calls", [])] for s in traj["steps"]]
    assert [[c["tool_call_id"] for c in s.get("tool_calls", [])] for s in stored["steps"]] == ids
