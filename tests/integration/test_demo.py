"""`skillci demo` end to end, as a user runs it (a real subprocess, a fresh directory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import ROOT


def test_demo_runs_the_whole_loop(tmp_path: Path) -> None:
    env = dict(os.environ, SKILLCI_HOME=str(tmp_path / "home"))
    proc = subprocess.run(
        [sys.executable, "-m", "skillci", "demo", "--dir", str(tmp_path / "demo"), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    steps = {s["step"].split(":")[0].split(" (")[0]: s["outcome"] for s in out["steps"]}
    outcomes = [s["outcome"] for s in out["steps"]]
    assert "opened PR #1" in outcomes[1]
    assert outcomes[2].startswith("gate ACCEPT") and "regressions 0" in outcomes[2]
    assert "gap closure 0.50 (partial)" in outcomes[2]  # the teacher and skill-free references
    assert outcomes[3].startswith("released: repo-debugger 0.7.0 -> 0.7.1")
    assert (
        outcomes[5].startswith("gate REJECT")
        and "regression_rate" in outcomes[5]
        and "py-window-end" in outcomes[5]
    )
    assert outcomes[6].startswith(
        "closed: PR #2 is closed, branch deleted: True, head ref kept: True"
    )
    assert outcomes[7].endswith("pass -> promote")
    assert "fail -> rollback" in outcomes[8]
    assert {p["number"]: p["state"] for p in out["prs"]} == {1: "merged", 2: "closed"}
    assert "repo-debugger@0.7.1" in out["tags"]
    types = [e["type"] for e in out["channel_log"]]
    assert types == ["init", "released", "canary_start", "promote", "canary_start", "rollback"]
    assert out["html_report"] and Path(out["html_report"]).is_file()
    assert len(steps) == 9
