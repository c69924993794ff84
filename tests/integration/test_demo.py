"""`skillci demo` end to end, as a user runs it (a real subprocess, a fresh directory)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillci.flows.demo import (
    GLOSSARY,
    NO_SANDBOX,
    Glossary,
    canary_checks,
    gate_summary,
    sandbox_kind,
)
from skillci.gate.verdict import GateReport, all_changes, decide
from skillci.present.report import render_markdown
from skillci.release.models import Sample
from skillci.skill.models import ReleaseGate
from tests.conftest import ROOT
from tests.unit.gate.report_fixture import build_report


# ~90 s on an idle 2-core machine, several minutes on a busy one (docs/demo-profile.md)
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_demo_runs_the_whole_loop(tmp_path: Path) -> None:
    env = dict(os.environ, SKILLCI_HOME=str(tmp_path / "home"))
    proc = subprocess.run(
        [sys.executable, "-m", "skillci", "demo", "--dir", str(tmp_path / "demo"), "--json"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=1150,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    steps = {s["step"].split(":")[0].split(" (")[0]: s["outcome"] for s in out["steps"]}
    outcomes = [s["outcome"] for s in out["steps"]]
    assert "opened PR #1" in outcomes[1]
    assert outcomes[2].startswith("gate ACCEPT") and "regressions 0" in outcomes[2]
    # the teacher and skill-free references ran: a partial gap closure (0.58 on the 16-task
    # validation suite of 2026-12-03; 0.87 on the earlier 12-task one)
    assert re.search(r"gap closure 0\.\d\d \(partial\)", outcomes[2]), outcomes[2]
    assert outcomes[3].startswith("released: repo-debugger 0.7.0 -> 0.7.1")
    assert (
        outcomes[5].startswith("gate REJECT")
        and "regression_rate" in outcomes[5]
        and "py-window-end" in outcomes[5]
    )
    # PR #2 is opened without a patch id, like a person's PR: closed, its branch kept
    assert outcomes[6].startswith("closed: PR #2 is closed, branch deleted: False")
    assert outcomes[6].endswith("head ref kept: True")
    assert outcomes[7].endswith("pass -> promote")
    assert "fail -> rollback" in outcomes[8]
    assert {p["number"]: p["state"] for p in out["prs"]} == {1: "merged", 2: "closed"}
    assert "repo-debugger@0.7.1" in out["tags"]
    types = [e["type"] for e in out["channel_log"]]
    assert types == ["init", "released", "canary_start", "promote", "canary_start", "rollback"]
    assert out["html_report"] and Path(out["html_report"]).is_file()
    assert len(steps) == 9
    from skillci.runners.sandbox import bwrap_path

    assert out["sandbox"] == ("bwrap" if bwrap_path() is not None else "none")
    promote = next(e for e in out["channel_log"] if e["type"] == "promote")
    assert "success_drop" in promote["reason"] and "(limit drop <= " in promote["reason"]


# ---------------------------------------------------------------------------- demo output


def _num(pattern: str, text: str) -> int:
    m = re.search(pattern, text)
    assert m, (pattern, text)
    return int(m.group(1))


def _with_a_regression_suite_repair(report: GateReport) -> GateReport:
    """The demo's case: a task outside the validation suite is repaired too, so the suite
    section says one number and the gate's improvement check another."""
    suites = []
    for s in report.suites:
        if s.suite == "regression":
            t0 = s.metrics.tasks[0].model_copy(update={"change": "repair"})
            metrics = s.metrics.model_copy(update={"tasks": [t0, *s.metrics.tasks[1:]]})
            s = s.model_copy(update={"metrics": metrics})
        suites.append(s)
    verdict, checks = decide(
        gate=ReleaseGate(),
        suites=suites,
        comparability=report.comparability,
        base=report.base_complexity,
        head=report.head_complexity,
        guard_verdict=report.guard_verdict,
        same_instance=report.same_instance,
    )
    return report.model_copy(update={"suites": suites, "checks": checks, "verdict": verdict})


@pytest.mark.parametrize(("regressions", "extra_repair"), [(0, True), (1, False), (3, True)])
def test_the_demo_gate_line_has_the_reports_numbers(regressions: int, extra_repair: bool) -> None:
    report = build_report(n_validation=6, n_regression=3, regressions=regressions).report
    if extra_repair:
        report = _with_a_regression_suite_repair(report)
    line = gate_summary(report)
    changes = all_changes(report.suites)  # over every suite the gate ran, each task once
    repairs = _num(r"repairs (\d+)", line)
    assert repairs == sum(t.change == "repair" for t in changes)
    val = report.suite("validation")
    assert val is not None
    if extra_repair:  # the suite section says one number, the line (all suites) another
        assert repairs > sum(t.change == "repair" for t in val.metrics.tasks)
    worse = {t.task_id for t in changes if t.change == "regression"}
    assert _num(r"regressions (\d+)", line) == len(worse)
    assert line.startswith(f"gate {report.verdict.upper()} ({report.gate_id})")
    for reason in report.reasons:
        assert reason in line
    assert f"**{report.verdict.upper()}**" in render_markdown(report, marker=False)


def _sample(i: int, *, passed: bool) -> Sample:
    return Sample(
        run_id=f"r{i}", task_id=f"t{i % 3}", passed=passed, tokens=1000 + i, latency_s=1.0
    )


def test_canary_lines_show_each_threshold() -> None:
    from skillci.release.canary import analyze
    from skillci.skill.models import CanaryPolicy

    t0 = datetime(2026, 1, 1, tzinfo=UTC)
    samples_ok = [_sample(i, passed=i % 4 != 0) for i in range(30)]
    samples_bad = [_sample(i, passed=i % 2 == 0) for i in range(30)]
    a = analyze(
        skill="s",
        stable=("1.0.0", samples_ok),
        canary=("1.1.0", samples_bad),
        policy=CanaryPolicy(min_samples=10, min_task_samples=1),
        window_start=t0,
        window_end=t0,
    )
    lines = canary_checks(a)
    judged = [c for c in a.checks if c.passed is not None]
    assert len(lines) == len(judged) > 0
    for line, c in zip(lines, judged, strict=True):
        assert c.name in line and c.value in line and f"(limit {c.threshold})" in line
    assert any(line.endswith("FAIL") for line in lines)


def test_glossary_explains_a_term_once_on_first_use() -> None:
    out: list[str] = []
    say = Glossary(out.append)
    say("same instance 0/1 -> 1/1")
    say("same instance again; gap closure 0.50")
    say("gap closure 0.60")
    assert out[0] == "same instance 0/1 -> 1/1"
    assert out[1].startswith("    [dim](same instance: ")
    assert out[3].startswith("    [dim](gap closure: ")
    assert len(out) == 5
    assert all(term in GLOSSARY for term in say.explained)


def test_without_bubblewrap_the_demo_warns_first_and_records_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillci.flows.demo import _Demo
    from skillci.runners import sandbox

    real = sandbox.bwrap_path()
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    said: list[str] = []
    if real is not None:
        assert sandbox_kind() == ("bwrap", str(real))
        assert _Demo(repo, said.append).res.sandbox == "bwrap"
        assert "bubblewrap sandbox" in said[0] and NO_SANDBOX not in said
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)
    said.clear()
    demo = _Demo(repo, said.append)
    assert sandbox_kind() == ("none", None)
    assert demo.res.sandbox == "none"
    assert said == [NO_SANDBOX]
    assert "WITHOUT a sandbox" in NO_SANDBOX
