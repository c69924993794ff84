"""The HTML gate report: one self-contained page with the markdown report's content, inline
SVG charts and the trajectory viewer (pure: report + records in, a string out)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from skillci.gate.sequential import OUTCOME_TEXT
from skillci.gate.verdict import Complexity, GateReport, SuiteResult, all_changes
from skillci.present.html.assets import CSP, CSS, JS
from skillci.present.html.charts import cost_chart, gcr_chart, has_gcr, pass_rate_chart, task_map
from skillci.present.html.markup import (
    CHANGE_LABEL,
    SIDE_LABEL,
    Safe,
    anchor,
    ci,
    delta_pct,
    el,
    join,
    num,
    pct,
    raw,
    side_order,
    usd,
    void,
)
from skillci.present.html.trajectory import trajectory_section
from skillci.trace.models import RunRecord

#: Per-task tables with more rows than this start collapsed (changed tasks are listed above).
COLLAPSE_TASKS = 20
#: Characters of one run-record text shown before the middle is elided.
DEFAULT_MAX_TEXT = 2000


def _table(
    headers: Sequence[str],
    rows: Sequence[Sequence[object]],
    *,
    num_cols: set[int] | None = None,
    row_attrs: Sequence[dict[str, object]] | None = None,
    **attrs: object,
) -> Safe:
    nc = num_cols or set()
    head = el("tr", [el("th", h, class_="num" if i in nc else None) for i, h in enumerate(headers)])
    body = []
    for r, cells in enumerate(rows):
        extra = row_attrs[r] if row_attrs else {}
        body.append(
            el(
                "tr",
                [el("td", c, class_="num" if i in nc else None) for i, c in enumerate(cells)],
                **extra,
            )
        )
    return el(
        "div", el("table", el("thead", head), el("tbody", body), **attrs), class_="table-wrap"
    )


def _short(sha: str | None) -> str:
    return (sha or "")[:10] or "?"


def _header(r: GateReport) -> Safe:
    word = r.verdict.upper()
    return el(
        "header",
        el(
            "p",
            {"accept": "✔ ", "inconclusive": "? "}.get(r.verdict, "✘ ") + word,
            class_="word",
            id="verdict-word",
        ),
        el("h1", "skillci gate: ", el("strong", word), " — ", el("code", r.skill)),
        el(
            "p",
            "Student ",
            el("code", r.student),
            " re-run on base ",
            el("code", r.base_ref),
            f" ({_short(r.base_sha)}) and head ",
            el("code", r.head_ref),
            f" ({_short(r.head_sha)}), {r.repeat} repeat(s).",
        ),
        el("p", "Gate ", el("code", r.gate_id), f" · {r.created_at}"),
        class_=f"verdict {r.verdict}",
        id="verdict",
        data_verdict=r.verdict,
    )


def _facts(r: GateReport) -> Safe:
    facts: list[tuple[str, str]] = [
        ("trials", f"{r.trials_run} run, {r.trials_cached} cached, {r.trials_reused} reused"),
        ("model calls", str(r.model_calls)),
        ("guard", r.guard_verdict),
        ("comparable runs", "yes" if r.comparability.comparable else "NO"),
    ]
    if r.impact is not None:
        facts.append(("test impact", r.impact.summary))
    wall = r.config.get("wall_time_sec")
    if isinstance(wall, int | float):
        facts.append(("gate wall time", f"{wall:.1f} s"))
    return el("div", [el("span", el("b", k), ": ", v) for k, v in facts], class_="facts")


def _checks(r: GateReport) -> Safe:
    rows: list[list[object]] = []
    attrs: list[dict[str, object]] = []
    for c in r.checks:
        verdict = {
            "pass": el("span", "pass", class_="pass"),
            "not_applicable": el("span", "n/a", class_="pass"),
            "not_measured": el("span", "NOT MEASURED", class_="fail"),
        }.get(c.status, el("span", "FAIL", class_="fail"))
        rows.append([el("code", c.name), c.value, c.threshold, verdict, c.detail])
        attrs.append({"class_": None if c.passed else "failed", "data_check": c.name})
    return _table(["check", "value", "threshold", "", "detail"], rows, row_attrs=attrs, id="checks")


def _charts(r: GateReport) -> Safe:
    cost_title, cost_svg = cost_chart(r.suites)
    figs = [
        el(
            "figure",
            el("figcaption", "Pass rate ", el("span", "per suite and side, 95% CI")),
            pass_rate_chart(r.suites),
        ),
    ]
    if has_gcr(r.suites):
        figs.append(
            el(
                "figure",
                el(
                    "figcaption",
                    "Gap closure rate ",
                    el("span", "(head − baseline) / (teacher − baseline)"),
                ),
                gcr_chart(r.suites),
            )
        )
    else:
        reason = next(
            (s.metrics.gcr_head.reason for s in r.suites if s.metrics.gcr_head.reason), None
        )
        figs.append(
            el(
                "figure",
                el("figcaption", "Gap closure rate"),
                el(
                    "p",
                    "Not available: ",
                    reason or "no suite has a defined GCR",
                    ".",
                    class_="note",
                ),
                el(
                    "p",
                    "It needs trials of the student without skill (baseline) and of the teacher.",
                    class_="note",
                ),
            )
        )
    figs.append(
        el("figure", el("figcaption", cost_title, " ", el("span", "per suite and side")), cost_svg)
    )
    changes = all_changes(r.suites)
    if changes:
        figs.append(
            el(
                "figure",
                el(
                    "figcaption",
                    "Per-task change ",
                    el("span", f"{len(changes)} tasks; click a square for its trajectories"),
                ),
                task_map(changes),
                class_="wide",
            )
        )
    return join([el("h2", "Charts", id="charts"), el("div", figs, class_="charts")])


def _task_link(task_id: str) -> Safe:
    return el("a", el("code", task_id), href="#" + anchor("traj", task_id))


def _suite(s: SuiteResult) -> Safe:
    # long: one suite's HTML section, built in page order; escaped by construction (design 070)
    m = s.metrics
    side_rows: list[list[object]] = []
    for side in side_order(m.sides):
        pr = m.sides[side].pass_rate  # type: ignore[index]
        side_rows.append(
            [
                SIDE_LABEL.get(side, side),
                pct(pr.pass_rate),
                ci(pr.band.low, pr.band.high),
                pct(pr.pass_at_k),
                pct(pr.pass_hat_k),
                f"{pr.mean_reward:.3f}",
                f"{pr.tasks} / {pr.trials}",
            ]
        )
    k = next(iter(m.sides.values())).pass_rate.k if m.sides else 1
    parts: list[object] = [
        el(
            "h3",
            "Suite ",
            el("code", s.suite),
            f" ({len(s.tasks)} tasks)",
            id=anchor("suite", s.suite),
        ),
        _table(
            [
                "side",
                "pass rate",
                "95% CI",
                f"pass@{k}",
                f"pass^{k}",
                "mean reward",
                "tasks / trials",
            ],
            side_rows,
            num_cols={1, 3, 4, 5, 6},
        ),
    ]
    c = m.changes
    lines = [
        f"Repairs {c.repairs}, regressions {c.regressions}, unchanged {c.unchanged_pass} pass / "
        f"{c.unchanged_fail} fail. Repair rate {pct(c.repair_rate)}, regression rate {pct(c.regression_rate)}."
    ]
    if m.paired is not None:
        p = m.paired
        pci = ci(p.diff_ci.low, p.diff_ci.high) if p.diff_ci else ""
        lines.append(
            f"Paired (task-level): head − base {p.diff:+.1%} {pci}, exact sign test p = "
            f"{p.sign_test.p_value:.3g} ({p.tasks_head_better} better, {p.tasks_base_better} worse, "
            f"{p.tasks_tied} tied)."
        )
    g = m.gcr_head
    if g.value is not None:
        gci = f" [{g.ci.low:.2f}, {g.ci.high:.2f}]" if g.ci else ""
        lines.append(
            f"Gap closure (head): {g.value:.2f}{gci} — {g.label}"
            + (" (beats the teacher: check the eval)." if g.review else ".")
        )
    if s.sequential is not None:
        d = s.sequential
        saved = (
            f" Saved ~{d.trials_saved_estimate} trials ({d.rounds_saved} round(s))."
            if d.rounds_saved
            else ""
        )
        lines.append(
            f"Sequential test: {OUTCOME_TEXT.get(d.outcome, d.outcome)} after {d.rounds} "
            f"round(s) — {d.reason}.{saved}"
        )
    parts += [el("p", x) for x in lines]
    changed = [t for t in m.tasks if t.change in ("repair", "regression")]
    if changed:
        links: list[object] = []
        for i, t in enumerate(changed):
            links += [
                ", " if i else "",
                _task_link(t.task_id),
                " ",
                el("span", CHANGE_LABEL[t.change], class_=f"chg-{t.change}"),
            ]
        parts.append(el("p", el("b", "Changed: "), links))
    if m.tasks:
        table_id = anchor("tasks", s.suite)
        rows = [
            [
                _task_link(t.task_id),
                f"{t.base_pass_fraction:.0%} ({t.base_repeats})",
                f"{t.head_pass_fraction:.0%} ({t.head_repeats})",
                f"{t.base_mean_reward:.2f} → {t.head_mean_reward:.2f}",
                el("span", CHANGE_LABEL[t.change], class_=f"chg-{t.change}"),
            ]
            for t in m.tasks
        ]
        filters = el(
            "div",
            [
                el(
                    "button",
                    label,
                    type="button",
                    data_filter=f,
                    aria_pressed="true" if f == "all" else "false",
                )
                for f, label in (
                    ("all", "all"),
                    ("changed", "changed"),
                    ("repair", "repairs"),
                    ("regression", "regressions"),
                )
            ],
            class_="toolbar",
            data_filter_for=table_id,
        )
        table = _table(
            ["task", "base", "head", "mean reward", "change"],
            rows,
            num_cols={1, 2, 3},
            row_attrs=[{"data_change": t.change} for t in m.tasks],
            id=table_id,
        )
        summary = f"Per-task before/after ({len(m.tasks)} tasks)"
        parts.append(
            el(
                "details",
                el("summary", summary),
                filters,
                table,
                class_="block",
                open=len(m.tasks) <= COLLAPSE_TASKS,
            )
        )
    return el("section", parts, class_="suite")


def _cost(r: GateReport) -> Safe:
    parts: list[object] = [el("h2", "Cost", id="cost")]
    for s in r.suites:
        m = s.metrics
        rows: list[list[object]] = []
        for side in side_order(m.sides):
            c = m.sides[side].cost  # type: ignore[index]
            rows.append(
                [
                    SIDE_LABEL.get(side, side),
                    f"{c.successes} / {c.trials}",
                    num(c.input_tokens),
                    num(c.output_tokens),
                    num(c.model_calls),
                    num(c.tool_calls),
                    f"{c.latency_per_trial_s:.1f} s",
                    usd(c.usd),
                    usd(c.usd_per_success),
                    num(c.tokens_per_success),
                ]
            )
        parts.append(el("h3", "Suite ", el("code", s.suite)))
        parts.append(
            _table(
                [
                    "side",
                    "passed / trials",
                    "input tok",
                    "output tok",
                    "model calls",
                    "tool calls",
                    "latency / trial",
                    "USD",
                    "USD / success",
                    "tokens / success",
                ],
                rows,
                num_cols=set(range(1, 10)),
            )
        )
        d = m.cost_delta
        if d is not None:
            parts.append(
                el(
                    "p",
                    el("b", "head vs base: "),
                    f"tokens {delta_pct(d.tokens)}, model calls {delta_pct(d.model_calls)}, tool calls "
                    f"{delta_pct(d.tool_calls)}, latency {delta_pct(d.latency_s)}, USD {delta_pct(d.usd)}, "
                    f"USD per success {delta_pct(d.usd_per_success)}",
                )
            )
    return join(parts)


def _complexity(r: GateReport) -> Safe:
    b, h = r.base_complexity, r.head_complexity

    def row(name: str, x: float | None, y: float | None, digits: int = 0) -> list[object]:
        d = "" if x is None or y is None else f"{y - x:+,.{digits}f}"
        return [name, num(x, digits), num(y, digits), d]

    rows = [
        row("bootstrap tokens", b.bootstrap_tokens, h.bootstrap_tokens),
        row("all loadable tokens", b.total_tokens, h.total_tokens),
        row("avg loaded tokens / trial", b.avg_loaded_tokens, h.avg_loaded_tokens),
        row("rules", b.rules, h.rules),
        row("conflicting rules", b.conflicting_rules, h.conflicting_rules),
        row("never-hit rules", len(b.never_hit_rules), len(h.never_hit_rules)),
        row("lint errors", b.lint_errors, h.lint_errors),
    ]
    parts: list[object] = [
        el("h2", "Skill complexity", id="complexity"),
        _table(["", "base", "head", "Δ"], rows, num_cols={1, 2, 3}),
    ]
    parts += _never_hit(b, h)
    if r.change_size:
        cs = r.change_size
        parts.append(
            el(
                "p",
                f"Change size: {cs.get('files', 0)} file(s), +{cs.get('lines_added', 0)} / -{cs.get('lines_removed', 0)} lines.",
            )
        )
    parts.append(el("p", "Guard: ", el("b", r.guard_verdict)))
    if r.guard_findings:
        parts.append(el("ul", [el("li", f) for f in r.guard_findings]))
    if not r.comparability.comparable:
        parts += [
            el("h3", "Non-comparable runs"),
            el("ul", [el("li", x) for x in r.comparability.issues]),
        ]
    if r.impact is not None:
        imp = r.impact
        rows2 = [
            [_task_link(t.task_id), "re-run" if t.rerun else "reuse base", t.reason]
            for t in imp.tasks
        ]
        parts.append(
            el(
                "details",
                el("summary", f"Test impact: {imp.summary}"),
                el(
                    "p",
                    "Changed rendered files: ",
                    ", ".join(imp.changed_files) or "none",
                    class_="muted",
                ),
                _table(["task", "head trials", "why"], rows2),
                class_="block",
            )
        )
    return join(parts)


def _never_hit(b: Complexity, h: Complexity) -> list[Safe]:
    out = []
    for side, c in (("base", b), ("head", h)):
        if c.never_hit_rules:
            out.append(
                el(
                    "p",
                    f"Never-hit rules ({side}): ",
                    el("code", ", ".join(c.never_hit_rules)),
                    class_="muted",
                )
            )
    return out


def render_html(
    report: GateReport,
    records: Mapping[str, RunRecord],
    *,
    unavailable: Mapping[str, str] | None = None,
    max_text: int = DEFAULT_MAX_TEXT,
) -> str:
    """The whole page. ``records``: run id -> record for the evidence runs (missing ones
    are listed as such; ``unavailable`` gives the reason per run id)."""
    r = report
    parts: list[object] = [_header(r)]
    body: list[object] = []
    if r.reasons:
        body.append(
            el(
                "div",
                el("b", "Why rejected:"),
                el("ul", [el("li", x) for x in r.reasons]),
                class_="reasons",
                id="reasons",
            )
        )
    if r.warnings:  # environment_unsupported trials (left out), reward-hack evidence
        body.append(
            el(
                "div",
                el("b", "Trial warnings:"),
                el("ul", [el("li", x) for x in r.warnings]),
                class_="reasons",
                id="warnings",
            )
        )
    body.append(_facts(r))
    body += [el("h2", "Checks", id="checks-title"), _checks(r)]
    if r.same_instance is not None:
        si = r.same_instance
        body.append(
            el(
                "p",
                "Same instance ",
                _task_link(si.task_id),
                f": {'pass' if si.before_passed else 'fail'} → {'pass' if si.after_passed else 'fail'}.",
            )
        )
    if r.suites:
        body.append(_charts(r))
        body.append(el("h2", "Suites", id="suites"))
        body += [_suite(s) for s in r.suites]
        body.append(_cost(r))
    body.append(_complexity(r))
    body.append(trajectory_section(r, records, unavailable or {}, limit=max_text))
    body.append(
        el(
            "footer",
            el(
                "p",
                f"GateReport schema {r.schema_version} · generated by skillci · static page, no network",
                class_="muted",
            ),
        )
    )
    parts += [el("main", body), el("script", raw(JS))]
    head = join(
        [
            void("meta", charset="utf-8"),
            void("meta", http_equiv="Content-Security-Policy", content=CSP),
            void("meta", name="viewport", content="width=device-width, initial-scale=1"),
            void("meta", name="color-scheme", content="light"),
            el("title", f"skillci gate {r.verdict.upper()} — {r.skill}"),
            void("link", rel="icon", href="data:,"),
            el("style", raw(CSS)),
        ]
    )
    return "<!DOCTYPE html>\n" + el("html", el("head", head), el("body", parts), lang="en") + "\n"
