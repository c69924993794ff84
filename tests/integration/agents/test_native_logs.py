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
from skillci.trace.store import TraceStore
from tests.fakes.openai_server import FakeOpenAI
from tests.integration.agents.test_real_agents import eval_run, routes

__all__ = ["routes"]  # the fixture


@pytest.mark.agents  # 7 s measured
def test_a_real_codex_rollout_imports_with_every_call_paired_and_its_tokens(
    routes: FakeOpenAI,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    kept = tmp_path / "codex-home"
    rmtree = shutil.rmtree

    def keep_home(path: Any, *args: Any, **kwargs: Any) -> None:
        if Path(path).name == "home" and (Path(path) / ".codex").is_dir():
            shutil.copytree(Path(path) / ".codex" / "sessions", kept / "sessions")
        rmtree(path, *args, **kwargs)

    monkeypatch.setattr(local.shutil, "rmtree", keep_home)
    code, out = eval_run("codex", tmp_path / "state", capsys)
    assert code == 0, out
    [trial] = out["trials"]
    live = json.loads((Path(trial["trial_dir"]) / "record.json").read_text())
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
