"""Markdown for people: the static, Fast and Deep reports and the pipeline summary.

Only our own texts and numbers are rendered; nothing here quotes a trajectory.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillci.compile.deep import RolloutStats
from skillci.compile.fast import FastReport
from skillci.compile.static import StaticReport


def static_markdown(r: StaticReport) -> str:
    lines = [
        f"# Static compile of `{r.skill}` for `{r.student}` ({r.mode})",
        "",
        f"- plan: {r.plan_source}" + (f" (planner `{r.planner}`)" if r.planner else ""),
        f"- bootstrap: {r.bootstrap_before} -> {r.bootstrap_after} tokens "
        f"(budget {r.bootstrap_budget})",
        f"- lint errors: {r.lint_errors_before} -> {r.lint_errors_after}",
        f"- package: `{r.source_hash[:12]}` -> `{r.output_hash[:12]}`",
        "",
        "## Sections",
        "",
        "| file | section | status | changes / why rolled back |",
        "|---|---|---|---|",
    ]
    for s in r.sections:
        detail = "; ".join(s.reasons if s.status == "rolled_back" else s.changes) or "-"
        status = {"unchanged": "kept", "rolled_back": "rolled back"}.get(s.status, s.status)
        if s.placement != "kept":
            status = s.placement if s.status == "unchanged" else f"{status}, {s.placement}"
        lines.append(f"| {s.file} | {s.title or '(preamble)'} | {status} | {detail} |")
    pairs = [(s, w) for s in r.sections for w in s.rewritten]
    if pairs:
        lines += ["", "## Rewritten, before and after", ""]
        for s, w in pairs:
            lines += [f"- {s.file} § {s.title or '(preamble)'} ({w.kind}):"]
            lines += [f"  - before: {' '.join(w.before.split())}"]
            lines += [f"  - after: {' '.join(w.after.split())}"]
    if r.self_check is not None:
        c = r.self_check
        lines += [
            "",
            "## Self-check",
            "",
            f"- constraint sentences kept in the bootstrap: "
            f"{c.constraint_sentences - len(c.constraints_missing)}/{c.constraint_sentences}",
            f"- internal links: {c.internal_links}, broken by the compile: {len(c.links_broken)}",
            f"- line endings and encoding preserved: {'yes' if not c.encoding_problems else 'no'}",
            f"- bootstrap shrank or nothing moved: {'yes' if c.bootstrap_ok else 'no'}",
        ]
        lines += [f"- move undone: {u}" for u in c.undone]
        lines += [f"- problem: {p}" for p in c.constraints_missing + c.links_broken]
        lines += [f"- problem: {p}" for p in c.encoding_problems]
    flags = [(s, f) for s in r.sections for f in s.flags]
    if flags:
        lines += ["", "## Left for a person", ""]
        lines += [f"- {s.file} § {s.title or '(preamble)'}: {f}" for s, f in flags]
    lines += ["", "## Structural changes", ""]
    if not r.ops:
        lines.append("- none")
    for op in r.ops:
        state = "applied" if op.applied else "skipped"
        extra = f" ({'; '.join(op.problems)})" if op.problems else ""
        pid = f" `{op.patch.pid}`" if op.patch is not None else ""
        lines.append(f"- {op.kind}: {state}{pid} — {op.detail}{extra}")
    if r.lint_after:
        lines += ["", "## Remaining lint errors", ""] + [f"- {x}" for x in r.lint_after]
    if r.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in r.notes]
    return "\n".join(lines) + "\n"


def fast_markdown(r: FastReport) -> str:
    lines = [
        f"# Fast optimization of `{r.skill}` on `{r.task_id}`",
        "",
        f"- trajectories: {r.trajectories} (compile type `{r.skill_hash[:12]}`)",
        f"- scoring: {'reward model ' + r.reward_model if r.reward_model else 'pre-scores only'}"
        + (f" — {r.rm_note}" if r.rm_note else ""),
        f"- lessons by: {r.compiler}",
        f"- candidate: `{r.candidate_hash[:12]}`"
        + (f" (patch `{r.patch.pid}`)" if r.patch is not None else " (unchanged)"),
        "",
        "| # | trajectory | reward | validated | errors | loops | pre | rm | score | group |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for s in r.scores:
        rm = "-" if s.rm_score is None else f"{s.rm_score:.3f}"
        lines.append(
            f"| {s.index} | {s.label} | {s.reward:.2f} | {'yes' if s.validated else 'no'} | "
            f"{s.errors} | {s.loops} | {s.prescore:.3f} | {rm} | {s.score:.3f} | {s.group} |"
        )
    lines += ["", "## Kept lessons", ""]
    lines += [f"- {m.kind}: `{m.text}` (support {m.support})" for m in r.merged] or ["- none"]
    if r.conflicts:
        lines += ["", "## Conflicts (dropped)", ""] + [f"- {c}" for c in r.conflicts]
    if r.dropped:
        lines += ["", "## Dropped", ""] + [f"- {d}" for d in r.dropped]
    if r.notes:
        lines += ["", "## Notes", ""] + [f"- {n}" for n in r.notes]
    return "\n".join(lines) + "\n"


def stats_row(name: str, s: RolloutStats | None) -> str:
    if s is None:
        return f"| {name} | - | - | - | - |"
    return (
        f"| {name} | {s.passed}/{s.trials} ({s.pass_rate:.2f}) | {s.mean_tool_calls:.1f} | "
        f"{s.mean_model_calls:.1f} | "
        f"{'unknown' if s.mean_tokens is None else f'{s.mean_tokens:.0f}'} |"
    )


def stats_table(rows: Sequence[tuple[str, RolloutStats | None]]) -> str:
    head = [
        "| skill | passed | tool calls | model calls | tokens |",
        "|---|---|---|---|---|",
    ]
    return "\n".join(head + [stats_row(n, s) for n, s in rows]) + "\n"


__all__ = ["fast_markdown", "static_markdown", "stats_row", "stats_table"]
