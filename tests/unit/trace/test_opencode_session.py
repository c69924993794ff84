"""OpenCode sessions (its SQLite opencode.db) → run records through ATIF.

The fixture is the session the real OpenCode 1.18.33 stored in
tests/integration/agents/test_native_logs.py (rows of its session, message and part tables,
long strings cut to 400 characters); it is written back into a database of the same tables
here, next to an account table holding a token that must never be read.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from skillci.cli.main import main
from skillci.trace.atif import to_atif
from skillci.trace.importers.opencode import import_jobs, read_sessions, session_to_atif
from skillci.trace.store import TraceStore

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "agent-logs" / "opencode"
SID = "ses_dc23fe848ffeQ4bD7k66Onny2F"
SECRET = "oc-access-token-never-read-7f3a"


def write_db(path: Path, session: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    info = session["info"]
    conn.execute(f"CREATE TABLE session ({', '.join(info)})")
    conn.execute(f"INSERT INTO session VALUES ({', '.join('?' * len(info))})", list(info.values()))  # noqa: S608 - placeholders only
    conn.execute("CREATE TABLE message (id, session_id, time_created, time_updated, data)")
    conn.execute("CREATE TABLE part (id, message_id, session_id, time_created, time_updated, data)")
    conn.execute("CREATE TABLE account (id, email, access_token)")
    conn.execute("INSERT INTO account VALUES ('a', 'x@example.com', ?)", (SECRET,))
    for m in session["messages"]:
        mi = dict(m["info"])
        mid, created = mi.pop("id"), mi["time"]["created"]
        conn.execute("INSERT INTO message VALUES (?, ?, ?, ?, ?)",
                     (mid, info["id"], created, created, json.dumps(mi)))  # fmt: skip
        for p in m["parts"]:
            pd = dict(p)
            conn.execute("INSERT INTO part VALUES (?, ?, ?, ?, ?, ?)",
                         (pd.pop("id"), mid, info["id"], created, created, json.dumps(pd)))  # fmt: skip
    conn.commit()
    conn.close()
    return path


def session() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURE / "session.json").read_text())
    return data


def test_a_real_session_keeps_calls_models_times_and_tokens(tmp_path: Path) -> None:
    db = write_db(tmp_path / "opencode" / "opencode.db", session())
    [rec] = import_jobs(tmp_path)
    assert rec.run_id == f"opencode-{SID}"
    assert (rec.runtime.harness, rec.runtime.harness_version) == ("opencode", "1.18.33")
    assert (rec.model.name, rec.model.route) == ("scripted", "skillci/scripted")
    calls = {e.call_id: e for e in rec.events if e.kind == "tool_call"}
    results = {e.call_id: e for e in rec.events if e.kind == "tool_result"}
    assert set(calls) == set(results) == {f"call_{i}_0" for i in range(2, 6)}
    assert calls["call_2_0"].tool == "skill" and calls["call_2_0"].arguments == {
        "name": "repo-debugger"
    }
    assert results["call_5_0"].output == "config/service.ini: ok\n"
    assert (rec.cost.model_calls, rec.cost.input_tokens, rec.cost.output_tokens) == (5, 500, 250)
    assert (
        rec.final_output == "Fixed config/service.ini: log_level is now debug and the check passes."
    )
    traj = to_atif(rec)
    assert traj == session_to_atif(read_sessions(db)[0])
    assert all(s["timestamp"].endswith("Z") for s in traj["steps"])
    agent = [s for s in traj["steps"] if s["source"] == "agent"]
    assert agent[0]["metrics"]["extra"]["tokens"]["cache"] == {"write": 0, "read": 0}
    assert agent[0]["extra"]["opencode"]["finish"] == "tool-calls"
    assert [p["type"] for p in agent[0]["extra"]["opencode_parts"]] == ["step-start", "step-finish"]
    state = agent[0]["observation"]["results"][0]["extra"]["opencode"]["state"]
    assert state["status"] == "completed" and state["metadata"]["name"] == "repo-debugger"
    assert traj["extra"]["opencode_session"]["title"] == "Fix the service config"
    assert SECRET not in rec.model_dump_json()


def test_a_message_without_tokens_makes_the_totals_unknown(tmp_path: Path) -> None:
    s = session()
    del s["messages"][1]["info"]["tokens"]
    [rec] = import_jobs(write_db(tmp_path / "opencode.db", s))
    assert (rec.cost.input_tokens, rec.cost.output_tokens) == (None, None)
    assert rec.metadata["unknown_counts"] == ["input_tokens", "output_tokens"]


def test_cli_imports_the_database_once_and_names_a_wrong_file(tmp_path: Path) -> None:
    db, home = write_db(tmp_path / "data" / "opencode.db", session()), tmp_path / "home"
    argv = ["trace", "import", "--format", "opencode", "--home", str(home)]
    assert main([*argv, str(db)]) == 0
    assert main([*argv, str(db.parent)]) == 0  # the same session: already present
    stored = TraceStore(home).get(f"opencode-{SID}")  # redacted on the way in: ids survive
    assert to_atif(stored) == session_to_atif(read_sessions(db)[0])
    other = tmp_path / "other" / "opencode.db"
    other.parent.mkdir()
    other.write_text("not a database")
    assert main([*argv, str(other)]) == 2
