"""Side-by-side trajectory viewer of the HTML report: per task, one column per side (base,
head, and teacher/baseline when their runs are in the evidence), every event of every run
(pure).

All text from run records is untrusted and reaches the page through :func:`el` only, so it is
escaped; long text keeps its start and end (see :func:`skillci.present.html.markup.clip`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence

from skillci.gate.metrics import TaskChange
from skillci.gate.verdict import GateReport, all_changes
from skillci.present.html.markup import (
    CHANGE_LABEL,
    SIDE_TITLE,
    Safe,
    anchor,
    clip,
    el,
    join,
    num,
    side_order,
    usd,
    void,
)
from skillci.trace.models import (
    Event,
    MessageEvent,
    RunRecord,
    SkillLoadEvent,
    ToolCallEvent,
    ToolResultEvent,
)

NOT_STORED = "not in the trace store"


def evidence_runs(report: GateReport) -> dict[str, dict[str, list[str]]]:
    """task -> side -> run ids: the report's evidence plus its same-instance runs."""
    out = {t: {s: list(ids) for s, ids in sides.items()} for t, sides in report.evidence.items()}
    si = report.same_instance
    if si is not None:
        sides = out.setdefault(si.task_id, {})
        for side, ids in (("base", si.before_runs), ("head", si.after_runs)):
            have = sides.setdefault(side, [])
            have += [i for i in ids if i not in have]
    return out


def referenced_run_ids(report: GateReport) -> list[str]:
    """Every run id the page shows, each once, in page order."""
    seen: dict[str, None] = {}
    runs = evidence_runs(report)
    for task in sorted(runs):
        for side in side_order(runs[task]):
            for rid in runs[task][side]:
                seen.setdefault(rid, None)
    return list(seen)


def _pre(text: str, limit: int, run_id: str) -> Safe:
    head, tail, omitted = clip(text, limit)
    if not omitted:
        return el("pre", text)
    note = f"… {omitted:,} characters omitted (full text: skillci trace show {run_id}) …"
    return el("pre", head, el("span", note, class_="omitted"), tail)


def _exit_badge(code: int | None) -> Safe:
    if code is None:
        return el("span", "no exit code", class_="badge")
    return el("span", f"exit {code}", class_="badge ok" if code == 0 else "badge bad")


def event_item(ev: Event, run_id: str, limit: int) -> Safe:
    step = el("span", f"#{ev.step}", class_="step")
    if isinstance(ev, MessageEvent):
        tokens = (
            f" · {num(ev.input_tokens)} in / {num(ev.output_tokens)} out tokens"
            if ev.input_tokens is not None or ev.output_tokens is not None
            else ""
        )
        head = el("div", step, el("b", ev.role), " message", tokens, class_="ev-h")
        return el(
            "li", head, _pre(ev.content, limit, run_id), class_=f"ev ev-message role-{ev.role}"
        )
    if isinstance(ev, ToolCallEvent):
        args = json.dumps(ev.arguments, indent=2, ensure_ascii=False, sort_keys=True, default=str)
        head = el("div", step, el("b", f"→ {ev.tool}"), f" call {ev.call_id}", class_="ev-h")
        return el("li", head, _pre(args, limit, run_id), class_="ev ev-tool_call")
    if isinstance(ev, ToolResultEvent):
        head = el(
            "div",
            step,
            el("b", f"← {ev.tool or 'result'}"),
            " ",
            _exit_badge(ev.exit_code),
            " truncated" if ev.truncated else None,
            f" · error: {ev.error}" if ev.error else None,
            class_="ev-h",
        )
        body = _pre(ev.output, limit, run_id) if ev.output else None
        return el("li", head, body, class_="ev ev-tool_result")
    if isinstance(ev, SkillLoadEvent):
        how = "on demand" if ev.on_demand else "at start-up"
        tokens = f" · {ev.tokens:,} tokens" if ev.tokens is not None else ""
        head = el(
            "div",
            step,
            el("b", "skill load "),
            el("code", ev.path),
            f" {how}{tokens}",
            class_="ev-h",
        )
        return el("li", head, class_="ev ev-skill_load")
    head = el("div", step, el("b", f"error {ev.error_type}"), class_="ev-h")
    return el("li", head, _pre(ev.message, limit, run_id), class_="ev ev-error")


def run_card(
    run_id: str, rec: RunRecord | None, why_missing: str, *, open_: bool, limit: int
) -> Safe:
    if rec is None:
        return el("div", el("code", run_id), f": {why_missing}", class_="missing")
    ev, cost = rec.evaluation, rec.cost
    badge = el("span", ev.state.value, class_="badge ok" if ev.passed else "badge bad")
    reward = f" reward {ev.reward:.2f}" if ev.reward is not None else ""
    summary = el(
        "summary",
        el("code", run_id),
        " ",
        badge,
        f"{reward} · {len(rec.events)} events · {cost.tool_calls} tool calls · "
        f"{num(cost.tokens) if cost.tokens is not None else 'unknown'} tokens · "
        f"{cost.wall_time_sec:.1f} s" + (f" · {usd(cost.usd)}" if cost.usd else ""),
    )
    skill = rec.runtime.skill
    meta = [
        f"{rec.agent_role.value} {rec.model.route}"
        + (f" ({rec.model.revision})" if rec.model.revision else ""),
        f"skill {skill.name} {skill.version} ({skill.content_hash[:8]})" if skill else "no skill",
        f"repeat {rec.repeat_index}",
        f"stop {rec.stop_reason}" if rec.stop_reason else None,
        f"failure class {ev.failure_class}" if ev.failure_class else None,
    ]
    parts: list[object] = [
        summary,
        el("div", " · ".join(m for m in meta if m), class_="meta"),
        [el("div", "⚠ " + w, class_="meta") for w in rec.warnings],
        el("ol", [event_item(e, run_id, limit) for e in rec.events], class_="events"),
    ]
    if rec.final_output:
        parts.append(el("div", el("b", "final answer"), class_="meta"))
        parts.append(el("div", _pre(rec.final_output, limit, run_id), class_="meta"))
    verifier = f"verifier: {ev.state.value}" + (
        f", exit {ev.verifier_exit_code}" if ev.verifier_exit_code is not None else ""
    )
    parts.append(el("div", el("b", verifier), class_="meta"))
    if ev.verifier_output:
        parts.append(el("div", _pre(ev.verifier_output, limit, run_id), class_="meta"))
    return el("details", parts, class_="run", open=open_)


def _reuse_notes(report: GateReport) -> dict[str, str]:
    if report.impact is None:
        return {}
    notes: dict[str, str] = {}
    for t in report.impact.tasks:
        if not t.rerun:
            notes.setdefault(t.task_id, t.reason)
    return notes


def task_block(
    task_id: str,
    sides: Mapping[str, Sequence[str]],
    change: TaskChange | None,
    reuse_note: str | None,
    records: Mapping[str, RunRecord],
    unavailable: Mapping[str, str],
    limit: int,
) -> Safe:
    shown = side_order([*sides, "base", "head"])
    cols = []
    for side in shown:
        ids = sides.get(side, [])
        body: list[Safe] = [
            run_card(
                rid, records.get(rid), unavailable.get(rid, NOT_STORED), open_=i == 0, limit=limit
            )
            for i, rid in enumerate(ids)
        ]
        if not ids:
            if side == "head" and reuse_note:
                msg = f"Not re-run on head ({reuse_note}): the base trials stand for head."
            else:
                msg = f"No {side} runs recorded for this task."
            body = [el("p", msg, class_="note")]
        cols.append(
            el(
                "div",
                el("h4", SIDE_TITLE.get(side, side), f" · {len(ids)} run(s)"),
                body,
                class_=f"col col-{side}",
            )
        )
    mark = (
        el("span", CHANGE_LABEL[change.change], class_=f"chg-{change.change}")
        if change
        else el("span", "not compared", class_="muted")
    )
    summary_bits = (
        f"base {change.base_pass_fraction:.0%} ({change.base_repeats}) → "
        f"head {change.head_pass_fraction:.0%} ({change.head_repeats})"
        if change
        else ""
    )
    evidence = "; ".join(f"{s}: {', '.join(sides[s])}" for s in side_order(sides) if sides[s])
    return el(
        "details",
        el("summary", el("code", task_id), " ", mark, el("span", summary_bits, class_="sum")),
        el("div", "Evidence runs — ", evidence or "none", class_="evidence mono"),
        el("div", cols, class_=f"cols cols-{min(len(cols), 4)}"),
        class_="traj",
        id=anchor("traj", task_id),
        data_task=task_id,
        data_change=change.change if change else "none",
    )


def trajectory_section(
    report: GateReport,
    records: Mapping[str, RunRecord],
    unavailable: Mapping[str, str],
    *,
    limit: int,
) -> Safe:
    runs = evidence_runs(report)
    changes = {c.task_id: c for c in all_changes(report.suites)}
    notes = _reuse_notes(report)
    tasks = sorted(set(runs) | set(changes))
    blocks = [
        task_block(t, runs.get(t, {}), changes.get(t), notes.get(t), records, unavailable, limit)
        for t in tasks
    ]
    filters = [
        el(
            "button",
            label,
            type="button",
            data_filter=f,
            aria_pressed="true" if f == "all" else "false",
        )
        for f, label in (
            ("all", "all tasks"),
            ("changed", "changed"),
            ("repair", "repairs"),
            ("regression", "regressions"),
        )
    ]
    toolbar = el(
        "div",
        el("button", "expand all", type="button", data_expand="1"),
        el("button", "collapse all", type="button", data_expand="0"),
        void(
            "input",
            type="search",
            id="traj-query",
            placeholder="filter by task id",
            aria_label="filter by task id",
        ),
        el("span", filters, class_="toolbar", data_filter_for="traj-list"),
        class_="toolbar",
    )
    intro = el(
        "p",
        "Per task, the runs of each side next to each other: base (student with the current "
        "skill), head (student with the candidate skill), and the teacher or the student "
        "without skill when their runs are part of the evidence. Model and tool text is "
        "untrusted and shown as plain text.",
        class_="muted",
    )
    return join(
        [
            el("h2", f"Trajectories ({len(tasks)} tasks)", id="trajectories"),
            intro,
            toolbar,
            el("div", blocks, id="traj-list"),
        ]
    )
