"""Markdown rendering of a GateReport: what a reviewer reads on the PR (pure)."""

from __future__ import annotations

from skillci.gate.graded import GraderHistory
from skillci.gate.sequential import OUTCOME_TEXT
from skillci.gate.triggers import TriggerCheck
from skillci.gate.verdict import Complexity, GateReport, SuiteResult, is_flaky
from skillci.present.mdsafe import md_code, md_text

#: First line of a rendered report: forges find (and edit in place) the sticky PR comment by
#: it. The same text as ``skillci.forge.base.STICKY_MARKER`` (a test holds them equal), so
#: the pure core imports nothing from forge/.
STICKY_MARKER = "<!-- skillci:gate-report -->"

_MARK = {
    "repair": "✓ repair",
    "regression": "✗ regression",
    "unchanged_pass": "= pass",
    "unchanged_fail": "= fail",
}


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _ci(lo: float, hi: float) -> str:
    return f"[{lo:.1%}, {hi:.1%}]"


def _delta(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.1%}"


def _suite_section(s: SuiteResult) -> list[str]:
    m = s.metrics
    out = [f"### Suite {md_code(s.suite)} ({len(s.tasks)} tasks)", ""]
    rows = [
        "| side | pass rate | 95% CI (task-clustered) | pass@k | pass^k | mean reward |",
        "|---|---|---|---|---|---|",
    ]
    for side in ("base", "head", "baseline", "teacher"):
        sm = m.sides.get(side)
        if sm is None:
            continue
        pr = sm.pass_rate
        band = pr.band
        rows.append(
            f"| {side} | {_pct(pr.pass_rate)} | {_ci(band.low, band.high)} | {_pct(pr.pass_at_k)} | {_pct(pr.pass_hat_k)} | {pr.mean_reward:.3f} |"
        )
    out += [*rows, ""]
    c = m.changes
    out.append(
        f"Repairs {c.repairs}, regressions {c.regressions}, unchanged {c.unchanged_pass} pass / {c.unchanged_fail} fail. "
        f"Repair rate {_pct(c.repair_rate)}, regression rate {_pct(c.regression_rate)}."
    )
    flaky = [t for t in m.tasks if is_flaky(t)]
    if flaky:
        out.append(
            "Flaky on base (repeats disagree; the regression check's detail says whether "
            "they were counted): "
            + ", ".join(
                f"{md_code(t.task_id)} {t.base_pass_fraction:.0%} of {t.base_repeats}"
                for t in flaky
            )
            + "."
        )
    if m.paired is not None:
        p = m.paired
        ci = _ci(p.diff_ci.low, p.diff_ci.high) if p.diff_ci else ""
        out.append(
            f"Paired (task-level): head − base {p.diff:+.1%} {ci}, exact sign test "
            f"p = {p.sign_test.p_value:.3g} ({p.tasks_head_better} better, "
            f"{p.tasks_base_better} worse, {p.tasks_tied} tied)."
        )
    compared = [sm for sm in (m.sides.get("base"), m.sides.get("head")) if sm is not None]
    inv = [
        f"{sm.side} {_pct(sm.invocation_rate)}" for sm in compared if sm.invocation_rate is not None
    ]
    if inv:
        out.append(f"Skill invocation (trials that loaded it): {', '.join(inv)}.")
    for sm in compared:
        side = sm.side
        if sm.never_invoked:
            names = ", ".join(md_code(t) for t in sm.never_invoked)
            out.append(f"**Never loaded the skill on {side}:** {names}.")
    if m.gcr_head.value is not None:
        out.append(f"Gap closure (head): {m.gcr_head.value:.2f} — {md_text(m.gcr_head.label)}.")
    if s.sequential is not None:
        seq = s.sequential
        out.append(
            f"Sequential test: {md_text(OUTCOME_TEXT.get(seq.outcome, seq.outcome))} — "
            f"{md_text(seq.reason)}"
        )
    out.append("")
    table = ["| task | base | head | change |", "|---|---|---|---|"]
    for t in m.tasks:
        table.append(
            f"| {md_code(t.task_id, cell=True)} | {t.base_pass_fraction:.0%} ({t.base_repeats}) | {t.head_pass_fraction:.0%} ({t.head_repeats}) | {_MARK[t.change]} |"
        )
    if len(m.tasks) > 10:
        out += [
            "<details><summary>Per-task before/after</summary>",
            "",
            *table,
            "",
            "</details>",
            "",
        ]
    else:
        out += [*table, ""]
    return out + _grader_changes(s) + _grader_history(s)


def _grader_changes(s: SuiteResult) -> list[str]:
    """Graded tasks: which assertion, rubric or test.sh changed, trials passing per side."""
    if not s.grader_changes:
        return []
    rows = [
        "**Grader changes** (trials passing it, base → head):",
        "",
        "| task | grader | kind | base | head |",
        "|---|---|---|---|---|",
    ]
    for g in s.grader_changes:
        rows.append(
            f"| {md_code(g.task_id, cell=True)} | {md_code(g.grader, cell=True)} | "
            f"{md_text(g.kind)} | {g.base_passed}/{g.base_trials} | "
            f"{g.head_passed}/{g.head_trials} {'▲' if g.delta > 0 else '▼'} |"
        )
    return [*rows, ""]


def _where(h: GraderHistory) -> str:
    """The earlier gates of a history line: their pull requests, or the gate ids."""
    n = len(h.gates)
    gates = "the last gate" if n == 1 else f"the last {n} gates"
    if h.prs:
        return f"{gates} (PR {', '.join(f'#{p}' for p in h.prs)})"
    return f"{gates} ({', '.join(md_code(g) for g in h.gates)})"


def _grader_history(s: SuiteResult) -> list[str]:
    """Graders whose share on this head differs from the earlier gates' heads (design 410)."""
    if not s.grader_history:
        return []
    rows = [
        "**Grader history** (heads of earlier gates of this skill on the same task version, "
        "student and judge; information only, not part of the verdict):",
        "",
    ]
    for h in s.grader_history:
        rows.append(
            f"- {md_code(h.task_id)} {md_code(h.grader)} ({md_text(h.kind)}): passed "
            f"{h.passed}/{h.trials} over {_where(h)}; now {h.head_passed}/{h.head_trials} "
            f"{'▲' if h.delta > 0 else '▼'}"
        )
    return [*rows, ""]


def _power_section(r: GateReport) -> list[str]:
    if not r.power:
        return []
    pw = r.power[0].power
    out = [
        f"### What these suites can see ({pw:.0%} power)",
        "",
        "| suite | tasks x repeats | passing on base | smallest gain | smallest regression "
        "rate | noise alone rejects |",
        "|---|---|---|---|---|---|",
    ]
    for p in r.power:
        out.append(
            f"| {md_code(p.suite, cell=True)} | {p.tasks} x {p.repeats} | {p.base_passing} | "
            f"{_pct(p.mde_improvement)} | {_pct(p.mde_regression)} | {_pct(p.noise_rejection)} |"
        )
    warnings = [w for p in r.power for w in p.warnings]
    out.append("")
    if warnings:
        out += [f"- ⚠️ {md_text(w)}" for w in warnings] + [""]
    return out


def _avg(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.0f}"


def _complexity_rows(b: Complexity, h: Complexity) -> list[str]:
    rows = ["| | base | head |", "|---|---|---|"]
    rows.append(f"| bootstrap tokens | {b.bootstrap_tokens} | {h.bootstrap_tokens} |")
    rows.append(f"| all loadable tokens | {b.total_tokens} | {h.total_tokens} |")
    rows.append(
        f"| avg loaded tokens / trial | {_avg(b.avg_loaded_tokens)} | {_avg(h.avg_loaded_tokens)} |"
    )
    rows.append(f"| rules | {b.rules} | {h.rules} |")
    rows.append(f"| conflicting rules | {b.conflicting_rules} | {h.conflicting_rules} |")
    rows.append(f"| never-hit rules | {len(b.never_hit_rules)} | {len(h.never_hit_rules)} |")
    rows.append(f"| lint errors | {b.lint_errors} | {h.lint_errors} |")
    return rows


def _trigger_section(t: TriggerCheck) -> list[str]:
    b, h = t.base, t.head
    out = [
        f"### Triggers ({'pass' if t.passed else 'FAIL'}; max drop {t.max_drop:.0%})",
        "",
        "| side | precision | recall | invocation rate | queries held |",
        "|---|---|---|---|---|",
        f"| base | {_pct(b.precision)} | {_pct(b.recall)} | {_pct(b.invocation_rate)} "
        f"| {b.queries_held}/{b.queries} |",
        f"| head | {_pct(h.precision)} | {_pct(h.recall)} | {_pct(h.invocation_rate)} "
        f"| {h.queries_held}/{h.queries} |",
        "",
    ]
    for f in t.flipped:
        how = "fixed" if f.now_holds else "broken"
        want = "should" if f.should_trigger else "should not"
        out.append(
            f"- {how}: {md_code(f.query_id)} ({want} trigger; loaded {f.base_loaded} -> "
            f"{f.head_loaded}): {md_text(f.query)}"
        )
    return [*out, ""] if t.flipped else out


_STATUS_MD = {
    "pass": "pass",
    "fail": "**FAIL**",
    "not_measured": "**not measured**",
    "not_applicable": "n/a",
}


def _judge_line(r: GateReport) -> str:
    """Who judged the rubric graders (only when a gated suite has rubric tasks)."""
    j = r.judge
    if j is None or not j.suites:
        return ""
    sim = " (a lexical simulator)" if j.simulated else ""
    return f" Rubric graders judged by {md_code(j.route)}{sim}."


def render_markdown(r: GateReport, *, marker: bool = True) -> str:
    icon = {"accept": "✅", "inconclusive": "❔"}.get(r.verdict, "❌")
    lines = [STICKY_MARKER] if marker else []
    lines += [
        f"## {icon} skillci gate: **{md_text(r.verdict.upper())}** — {md_code(r.skill)}",
        "",
        f"Student {md_code(r.student)} re-run on base {md_code(r.base_ref)} "
        f"({md_text((r.base_sha or '')[:10])}) and head {md_code(r.head_ref)} "
        f"({md_text((r.head_sha or '')[:10])}), {r.repeat} repeat(s). Gate {md_code(r.gate_id)}."
        + _judge_line(r),
        "",
    ]
    if r.reasons:
        why = (
            "**Why inconclusive** (the evidence could not decide; nothing is rejected):"
            if r.verdict == "inconclusive"
            else "**Why rejected:**"
        )
        lines += [why, *[f"- {md_text(x)}" for x in r.reasons], ""]
    if r.triggers is not None:
        lines += _trigger_section(r.triggers)
    if r.warnings:
        lines += [
            "**⚠ Trial warnings:**",
            *[f"- {md_text(x)}" for x in r.warnings],
            "",
        ]
    lines += ["| check | value | threshold | |", "|---|---|---|---|"]
    for c in r.checks:
        lines.append(
            f"| {md_text(c.name)} | {md_text(c.value)} | {md_text(c.threshold)} | "
            f"{_STATUS_MD[c.status]} |"
        )
    lines.append("")
    if r.same_instance is not None:
        si = r.same_instance
        lines += [
            f"Same instance {md_code(si.task_id)}: {'pass' if si.before_passed else 'fail'} → {'pass' if si.after_passed else 'fail'}.",
            "",
        ]
    for s in r.suites:
        lines += _suite_section(s)
    if r.flaky_history:
        lines += [
            "**Flaky from history** (earlier runs of the same base skill, student and task "
            "disagree; the regression check's detail says whether they were counted):",
            *[f"- {md_text(h.describe())}" for h in r.flaky_history],
            "",
        ]
    lines += _power_section(r)
    val = r.suite("validation")
    if val is not None and val.metrics.cost_delta is not None:
        cd = val.metrics.cost_delta
        lines += [
            "### Cost (validation, head vs base)",
            "",
            f"tokens {_delta(cd.tokens)}, model calls {_delta(cd.model_calls)}, tool calls {_delta(cd.tool_calls)}, "
            f"latency {_delta(cd.latency_s)}, USD {_delta(cd.usd)}, USD per success {_delta(cd.usd_per_success)}",
            "",
        ]
    lines += [
        "### Skill complexity",
        "",
        *_complexity_rows(r.base_complexity, r.head_complexity),
        "",
    ]
    if r.change_size:
        lines.append(
            f"Change size: {r.change_size.get('files', 0)} file(s), +{r.change_size.get('lines_added', 0)} / -{r.change_size.get('lines_removed', 0)} lines."
        )
    lines.append(
        f"Guard: {md_text(r.guard_verdict)}"
        + (" — " + "; ".join(md_text(x) for x in r.guard_findings[:5]) if r.guard_findings else "")
    )
    if r.impact is not None:
        lines.append(f"Test impact: {md_text(r.impact.summary)}.")
    lines.append(
        f"Trials: {r.trials_run} run, {r.trials_cached} cached, {r.trials_reused} reused from base; {r.model_calls} model call(s)."
    )
    if r.evidence:
        lines += ["", "<details><summary>Evidence runs</summary>", ""]
        for task, sides in sorted(r.evidence.items()):
            parts = [
                f"{md_text(side)}: {', '.join(md_code(x) for x in ids[:5])}"
                for side, ids in sorted(sides.items())
            ]
            lines.append(f"- {md_code(task)} — " + "; ".join(parts))
        lines += ["", "</details>"]
    return "\n".join(lines) + "\n"


def status_line(r: GateReport) -> tuple[str, str]:
    """(state, description) for the ``skillci/gate`` commit status."""
    if r.accepted:
        return "success", "accepted: " + ", ".join(
            c.value for c in r.checks if c.name in ("improvement", "regression_rate")
        )[:130]
    if r.verdict == "inconclusive":
        return "failure", ("inconclusive: " + "; ".join(r.reasons))[:140]
    return "failure", ("rejected: " + "; ".join(r.reasons))[:140]
