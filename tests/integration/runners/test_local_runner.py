"""The local runner: every bundled task is solvable and not trivially passed; sandbox rules."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from skillci.runners.base import AgentSpec, TrialSpec
from skillci.runners.local import LocalRunner
from skillci.runners.sandbox import NO_SANDBOX_WARNING, bwrap_path
from skillci.skill.package import SkillPackage
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.trace.models import RunRecord

from .helpers import BUNDLED, SKILL, model_agent, passed, run, task

needs_bwrap = pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is not usable here")


@pytest.mark.slow  # 36 bundled tasks: 20.1 s in CI (2026-12-03)
def test_the_oracle_passes_every_bundled_task(tmp_path: Path) -> None:
    res = run(BUNDLED, AgentSpec(kind="oracle", role="oracle"), tmp_path, parallel=2)
    assert len(BUNDLED) >= 15
    assert passed(res) == dict.fromkeys(BUNDLED, True)


def test_doing_nothing_passes_no_bundled_task(tmp_path: Path) -> None:
    res = run(BUNDLED, AgentSpec(kind="noop", role="student"), tmp_path, parallel=2)
    assert passed(res) == dict.fromkeys(BUNDLED, False)


def _scratch_task(tmp_path: Path, solve: str, verify: str) -> Path:
    root = tmp_path / "tasks" / "scratch"
    (root / "environment").mkdir(parents=True)
    (root / "environment" / "README").write_text("scratch\n")
    (root / "tests").mkdir()
    (root / "tests" / "test.sh").write_text(verify)
    (root / "solution").mkdir()
    (root / "solution" / "solve.sh").write_text(solve)
    (root / "instruction.md").write_text("Probe the sandbox.\n")
    (root / "task.toml").write_text(
        'version = "1.0"\n[verifier]\ntimeout_sec = 60\n[agent]\ntimeout_sec = 60\n'
    )
    return root


class _Hits(http.server.BaseHTTPRequestHandler):
    hits = 0

    def do_GET(self) -> None:
        type(self).hits += 1
        self.send_response(200)
        self.end_headers()

    def log_message(self, *args: object) -> None:
        pass


@needs_bwrap
def test_a_trials_agent_cannot_reach_the_network_or_write_outside_its_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Hits)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    port = server.server_address[1]
    outside = tmp_path / "outside.txt"
    solve = f"""
probe() {{ if "$@" >/dev/null 2>&1; then echo "$1 reached"; else echo "$1 blocked"; fi; }}
probe python -c 'import urllib.request; urllib.request.urlopen("http://127.0.0.1:{port}/", timeout=3)' > result.txt
probe python -c 'import socket; socket.create_connection(("1.1.1.1", 53), timeout=3)' >> result.txt
probe sh -c 'echo pwned > {outside}' >> result.txt
probe sh -c 'echo pwned > /usr/pwned' >> result.txt
probe sh -c 'echo pwned > /logs/verifier/reward.txt' >> result.txt
probe sh -c 'test -n "$SKILLCI_TEST_SECRET"' >> result.txt
echo ok > inside.txt
"""
    verify = 'cat result.txt; if grep -q reached result.txt; then r=0; else r=1; fi; echo $r > "${LOGS_DIR:-/logs}/verifier/reward.txt"\n'
    root = _scratch_task(tmp_path, solve, verify)
    t = load_task(root, purpose=Purpose.final_report)
    spec = TrialSpec(
        task=t,
        agent=AgentSpec(kind="oracle", role="oracle"),
        state_dir=tmp_path / "state",
        keep_workspace=True,
    )
    monkeypatch.setenv("SKILLCI_TEST_SECRET", "s3cret")
    try:
        rec = LocalRunner().run_trial(spec, tmp_path / "trial", "k" * 64)
    finally:
        server.shutdown()
        server.server_close()
    result = (tmp_path / "trial" / "workspace" / "result.txt").read_text()
    assert "reached" not in result, result
    assert result.count("blocked") == 6
    assert rec.runtime.sandbox == "bwrap" and rec.passed
    assert not outside.exists() and _Hits.hits == 0
    assert (tmp_path / "trial" / "workspace" / "inside.txt").read_text() == "ok\n"


@needs_bwrap
def test_agent_logs_the_verifier_rewrites_after_the_agent_are_still_redacted(
    tmp_path: Path,
) -> None:
    """Design 433: the agent's logs are redacted into a memo while the verifier runs; a log
    the verifier changes under /logs/agent meanwhile is redacted as written, not as warmed."""
    early = "sk-ant-api03-" + "a1B2c3D4e5F6g7H8i9J0" * 2
    late = "ghp_" + "Zq9Xw8Vu7Ts6Rq5Po4Nm3Lk2Ji1Hg0FeDcBa"
    solve = f"echo 'agent saw {early}' > /logs/agent/notes.txt\n"
    verify = (
        f"echo 'verifier saw {late}' >> /logs/agent/notes.txt\n"
        f"echo '{late}' > /logs/agent/late.txt\n"
        'echo 1 > "${LOGS_DIR:-/logs}/verifier/reward.txt"\n'
    )
    root = _scratch_task(tmp_path, solve, verify)
    spec = TrialSpec(
        task=load_task(root, purpose=Purpose.final_report),
        agent=AgentSpec(kind="oracle", role="oracle"),
        state_dir=tmp_path / "state",
    )
    rec = LocalRunner().run_trial(spec, tmp_path / "trial", "w" * 64)
    assert rec.passed
    notes = (tmp_path / "trial" / "logs" / "agent" / "notes.txt").read_text()
    assert notes.startswith("agent saw [REDACTED:") and "verifier saw [REDACTED:" in notes
    written = [
        p.read_text(errors="replace") for p in (tmp_path / "trial").rglob("*") if p.is_file()
    ]
    assert not [t for t in written if early in t or late in t]


def test_without_a_sandbox_the_record_carries_a_loud_warning(tmp_path: Path) -> None:
    res = run(
        ["py-cache-expiry"], AgentSpec(kind="oracle", role="oracle"), tmp_path, sandbox="none"
    )
    rec = RunRecord.model_validate_json(
        (Path(res.trials[0].trial_dir or "") / "record.json").read_bytes()
    )
    assert rec.passed and rec.runtime.sandbox == "none"
    assert NO_SANDBOX_WARNING in rec.warnings


def test_require_skill_fails_a_trial_that_never_loaded_one(tmp_path: Path) -> None:
    res = run(["py-cache-expiry"], model_agent(), tmp_path, require_skill=True)
    t = res.trials[0]
    rec = RunRecord.model_validate_json((Path(t.trial_dir or "") / "record.json").read_bytes())
    assert not t.passed and rec.evaluation.failure_class == "skill_not_loaded"
    ok = run(
        ["py-cache-expiry"],
        model_agent(),
        tmp_path,
        pkg=SkillPackage.from_dir(SKILL),
        require_skill=True,
    )
    assert ok.trials[0].passed


def test_the_run_record_pins_prompt_tools_skill_and_loads(tmp_path: Path) -> None:
    pkg = SkillPackage.from_dir(SKILL)
    res = run(["py-window-end"], model_agent(), tmp_path, pkg=pkg)
    rec = RunRecord.model_validate_json(
        (Path(res.trials[0].trial_dir or "") / "record.json").read_bytes()
    )
    rt = rec.runtime
    assert (
        rt.system_prompt_hash
        and rt.tool_schema_hash
        and rt.tool_schema_version == "skillci-tools-1"
    )
    assert rt.skill is not None and rt.skill.content_hash == pkg.content_hash
    assert rt.skill.rendered_hash == render(pkg, "builtin").content_hash
    assert rt.task_hash == task("py-window-end").content_hash and rt.seed == 0
    loads = [e.path for e in rec.events if e.kind == "skill_load"]
    assert loads[0] == "SKILL.md" and "skillci/workflows/unit-test-failure.md" in loads
    assert rec.cost.model_calls > 3 and rec.cost.input_tokens > 1000 and rec.cost.usd == 0.0
    results = [e for e in rec.events if e.kind == "tool_result" and e.tool == "run"]
    assert results and all(e.exit_code is not None for e in results)
    assert rec.model.route == "sim/student" and rec.model.context_window == 32768
