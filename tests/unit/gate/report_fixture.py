"""A realistic GateReport built the way the gate flow builds one: RunRecords -> TrialOutcomes
(``to_outcome``) -> ``compute_metrics`` -> ``decide``; with trajectories to view, including
hostile text that must be shown escaped."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from skillci.gate.decision import suite_result
from skillci.gate.impact import select_tasks
from skillci.gate.metrics import Side, TaskChangeKind, TrialOutcome
from skillci.gate.outcomes import comparability, to_outcome
from skillci.gate.verdict import (
    Complexity,
    GateReport,
    SameInstance,
    SuiteResult,
    decide,
    reasons,
)
from skillci.skill.models import ReleaseGate
from skillci.trace.models import (
    Cost,
    ErrorEvent,
    MessageEvent,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillLoadEvent,
    SkillRef,
    ToolCallEvent,
    ToolResultEvent,
)
from tests.builders import run_record

T0 = datetime(2026, 8, 13, 10, 0, 0, tzinfo=UTC)
#: Text a hostile model or tool could produce. It must reach the page as text, never markup.
SCRIPT = "<script>alert(1)</script>"
IMG = "</pre><img src=x onerror=\"document.documentElement.setAttribute('data-pwned','1')\">"
HOSTILE_TASK = "fix-<b>bold</b>-task"
CHANGED_FILE = "skillci/workflows/ci-failure.md"
PATTERN: tuple[TaskChangeKind, ...] = (
    "repair",
    "unchanged_pass",
    "repair",
    "unchanged_fail",
    "unchanged_pass",
)


@dataclass
class Built:
    report: GateReport
    records: list[RunRecord] = field(default_factory=list)

    @property
    def by_id(self) -> dict[str, RunRecord]:
        return {r.run_id: r for r in self.records}


def _events(task: str, side: str, passed: bool, hostile: bool) -> list[Any]:
    cmd = "python -m pytest -x -q tests/test_cache.py"
    out_fail = "F\n_____ test_expiry _____\nAssertionError: 3 != 2\n1 failed in 0.12s"
    evs: list[Any] = [
        MessageEvent(step=0, role="system", content="You are a repo debugger.", untrusted=False),
        MessageEvent(
            step=0, role="user", content=f"Fix the failing CI of {task}.", untrusted=False
        ),
        SkillLoadEvent(step=0, path="SKILL.md", on_demand=False, tokens=412),
    ]
    if side != "teacher":
        evs.append(SkillLoadEvent(step=0, path=CHANGED_FILE, tokens=311))
    evs += [
        ToolCallEvent(step=0, tool="run", call_id="c1", arguments={"command": cmd}),
        ToolResultEvent(step=0, call_id="c1", tool="run", exit_code=1, output=out_fail),
        ToolCallEvent(step=0, tool="read_file", call_id="c2", arguments={"path": "src/cache.py"}),
        ToolResultEvent(
            step=0,
            call_id="c2",
            tool="read_file",
            output="def expired(ts, now, ttl):\n    return now - ts > ttl\n" * 3,
        ),
        ToolCallEvent(
            step=0,
            tool="apply_patch",
            call_id="c3",
            arguments={"path": "src/cache.py", "old": "> ttl", "new": ">= ttl"},
        ),
        ToolResultEvent(step=0, call_id="c3", tool="apply_patch", exit_code=0, output="ok"),
    ]
    if passed or side == "teacher":
        evs += [
            ToolCallEvent(step=0, tool="run", call_id="c4", arguments={"command": cmd}),
            ToolResultEvent(step=0, call_id="c4", tool="run", exit_code=0, output="1 passed"),
        ]
    if hostile:
        evs += [
            ToolCallEvent(
                step=0, tool="run", call_id="c5", arguments={"command": f"echo '{SCRIPT}'"}
            ),
            ToolResultEvent(step=0, call_id="c5", tool="run", exit_code=0, output=SCRIPT + IMG),
            ErrorEvent(step=0, error_type="ToolError", message=IMG, untrusted=True),
        ]
    final = "Fixed the off-by-one in expiry; tests pass." + (SCRIPT if hostile else "")
    evs.append(MessageEvent(step=0, role="assistant", content=final))
    for i, e in enumerate(evs):
        e.step = i
    return evs


def make_run(
    task: str,
    side: Side,
    repeat: int,
    passed: bool,
    *,
    suite: str,
    index: int = 0,
    hostile: bool = False,
) -> RunRecord:
    role = "teacher" if side == "teacher" else "student"
    skill = (
        None
        if side in ("baseline", "teacher")
        else SkillRef(
            name="repo-debugger",
            version="0.7.1" if side == "base" else "0.8.0",
            content_hash=("a" if side == "base" else "e") * 64,
        )
    )
    tokens = 1500 + 37 * index + 120 * repeat
    events = _events(task, side, passed, hostile)
    slug = "".join(ch if ch.isalnum() or ch == "-" else "_" for ch in task)
    return run_record(
        run_id=f"run-{side}-{slug}-{repeat}",
        task_id=task,
        agent_role=role,
        model=ModelInfo(
            route="sim/teacher" if role == "teacher" else "sim/student",
            revision="r1",
            quantization="int8",
        ),
        runtime=RuntimeInfo(
            harness="skillci-agent",
            harness_version="0.1.0",
            runner="local",
            sandbox="bwrap",
            seed=repeat,
            skill=skill,
            evaluator_version="c" * 64,
            task_hash="d" * 64,
            tool_schema_hash="f" * 64,
        ),
        events=events,
        final_output=events[-1].content,
        stop_reason="final_answer",
        passed=passed,
        verdict={
            "verifier_exit_code": 0 if passed else 1,
            "verifier_output": "1 passed" if passed else "1 failed: test_expiry",
        },
        cost=Cost(
            input_tokens=tokens,
            output_tokens=tokens // 5,
            model_calls=4 + repeat,
            tool_calls=sum(isinstance(e, ToolCallEvent) for e in events),
            wall_time_sec=3.0 + index % 4 + repeat * 0.5,
            usd=tokens * 2e-6 if role == "student" else tokens * 1.5e-5,
        ),
        suite=suite,
        split=suite,
        repeat_index=repeat,
        created_at=T0 + timedelta(seconds=index * 10 + repeat),
    )


def _passes(kind: TaskChangeKind, side: Side, index: int, repeat: int, noise: bool) -> bool:
    base_pass = kind in ("unchanged_pass", "regression")
    head_pass = kind in ("unchanged_pass", "repair")
    ok = base_pass if side == "base" else head_pass
    noisy = noise and (index + repeat) % 7 == 3 and repeat == 2  # majority holds
    return ok != noisy


def build_report(
    *,
    n_validation: int = 12,
    n_regression: int = 8,
    repeat: int = 3,
    regressions: int = 1,
    teacher: bool = True,
    hostile: bool = True,
    guard: str = "pass",
) -> Built:
    """Validation tasks cycle through PATTERN (the first ``regressions`` of them regress);
    regression-suite tasks pass on both sides and, as their loaded files did not change,
    reuse their base trials for head (as the flow does); a 2-task security suite passes."""
    records: list[RunRecord] = []
    suites: list[SuiteResult] = []
    evidence: dict[str, dict[str, list[str]]] = {}
    all_base: list[RunRecord] = []
    all_head: list[RunRecord] = []
    impact = None
    layout = [
        ("validation", [f"val-task-{i:02d}" for i in range(n_validation)]),
        ("regression", [f"reg-task-{i:02d}" for i in range(n_regression)]),
        ("security", ["sec-no-secret-echo", "sec-no-curl-pipe-sh"]),
    ]
    if hostile:
        layout[0][1].append(HOSTILE_TASK)
    for suite, tasks in layout:
        outcomes: list[TrialOutcome] = []
        for i, task in enumerate(tasks):
            kind: TaskChangeKind
            if suite == "validation":
                kind = "regression" if i < regressions else PATTERN[i % len(PATTERN)]
            else:
                kind = "unchanged_pass"
            reuse = suite == "regression"
            sides: list[Side] = ["base"] if reuse else ["base", "head"]
            if suite == "validation" and teacher:
                sides += ["baseline", "teacher"]
            for side in sides:
                for r in range(repeat if side in ("base", "head") else 1):
                    if side == "teacher":
                        ok = i % 6 != 5
                    elif side == "baseline":
                        ok = i % 4 == 0
                    else:
                        ok = _passes(kind, side, i, r, suite == "validation")
                    rec = make_run(
                        task,
                        side,
                        r,
                        ok,
                        suite=suite,
                        index=i,
                        hostile=hostile and task == HOSTILE_TASK,
                    )
                    records.append(rec)
                    outcomes.append(to_outcome(rec, side))
                    evidence.setdefault(task, {}).setdefault(side, []).append(rec.run_id)
                    if side == "base":
                        all_base.append(rec)
                        if reuse:
                            outcomes.append(to_outcome(rec, "head"))
                    elif side == "head":
                        all_head.append(rec)
        suites.append(suite_result(suite, outcomes, tasks=sorted(tasks), n_boot=400))
        if suite == "validation":
            loaded = {t: {"SKILL.md", CHANGED_FILE} for t in tasks}
        else:
            loaded = {t: {"SKILL.md"} for t in tasks}
        sel = select_tasks({CHANGED_FILE}, loaded, tasks=tasks)
        impact = (
            sel
            if impact is None
            else impact.model_copy(
                update={
                    "rerun": sorted({*impact.rerun, *sel.rerun}),
                    "reuse": sorted({*impact.reuse, *sel.reuse}),
                    "selected": impact.selected + sel.selected,
                    "total": impact.total + sel.total,
                    "tasks": [*impact.tasks, *sel.tasks],
                }
            )
        )
    base_c = Complexity(
        bootstrap_tokens=412,
        total_tokens=1830,
        avg_loaded_tokens=723.0,
        rules=9,
        conflicting_rules=0,
        never_hit_rules=["rule-docker-cache"],
        lint_errors=0,
    )
    head_c = base_c.model_copy(
        update={"total_tokens": 1902, "avg_loaded_tokens": 790.0, "rules": 10}
    )
    repaired = next(
        (
            c.task_id
            for c in suites[0].metrics.tasks
            if c.change == "repair" and c.task_id != HOSTILE_TASK
        ),
        None,
    )
    same = (
        SameInstance(
            task_id=repaired,
            before_passed=False,
            after_passed=True,
            before_runs=evidence[repaired]["base"],
            after_runs=evidence[repaired]["head"],
        )
        if repaired
        else None
    )
    comp = comparability(all_base, all_head)
    verdict, checks = decide(
        gate=ReleaseGate(),
        suites=suites,
        comparability=comp,
        base=base_c,
        head=head_c,
        guard_verdict=guard,
        same_instance=same,
    )
    report = GateReport(
        gate_id="gate-0123456789abcdef",
        skill="repo-debugger",
        base_ref="main",
        head_ref="skillci/repo-debugger/missing_verification-1a2b3c4d",
        base_sha="1" * 40,
        head_sha="2" * 40,
        created_at=T0.isoformat(timespec="seconds"),
        student="sim/student",
        repeat=repeat,
        verdict=verdict,
        reasons=reasons(checks),
        checks=checks,
        suites=suites,
        comparability=comp,
        impact=impact,
        base_complexity=base_c,
        head_complexity=head_c,
        change_size={"files": 1, "lines_added": 14, "lines_removed": 2},
        guard_verdict=guard,
        guard_findings=[] if guard == "pass" else [f"step quotes tool output: {SCRIPT}"],
        same_instance=same,
        evidence=evidence,
        trials_run=len(all_base) + len(all_head),
        trials_cached=0,
        trials_reused=n_regression * repeat,
        model_calls=sum(r.cost.model_calls for r in records),
        config={"wall_time_sec": 12.5},
    )
    return Built(report=report, records=records)
