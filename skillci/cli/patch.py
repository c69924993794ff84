"""``skillci patch``: check, apply, diff and bump a bounded patch (PATCH.yaml) to a skill.

Exit codes: 0 pass / done; 1 the guard wants a human (``needs-approval``); 2 rejected or
invalid input (malformed patch, failed precondition, over a limit, guard reject).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import typer
from rich.markup import escape

from skillci.cli.output import console, emit_json
from skillci.errors import ExitCode
from skillci.flows.patch import (
    DEFAULT_ALLOWED_HOSTS,
    CheckReport,
    PatchInputs,
    apply_patch,
    bump_patch,
    check_patch,
    diff_patch,
)

app = typer.Typer(help="Check, apply, diff and version bounded patches.", no_args_is_help=True)

PATCH_ARG = typer.Argument(..., metavar="PATCH.yaml", help="The patch file.", show_default=False)
SKILL_OPT = typer.Option(..., "--skill", help="The skill package directory.", show_default=False)
JSON_OPT = typer.Option(False, "--json", help="Print the result as JSON.")
UNTRUSTED_OPT = typer.Option(
    None,
    "--untrusted",
    help="JSONL of untrusted texts from the supporting runs: one JSON string or "
    '{"text": ..., "run_id": ..., "event": ..., "source": ...} per line.',
)
TRACE_OPT = typer.Option(
    None,
    "--trace-store",
    help="Trace store dir: also check against the untrusted events of the patch's supporting runs.",
)
MIN_COPY_OPT = typer.Option(
    40, "--min-copy", min=8, help="Shortest verbatim copy (chars) the guard flags."
)
ALLOW_HOST_OPT = typer.Option(
    None,
    "--allow-host",
    help=f"Host a patch may name (repeatable). Default: {', '.join(DEFAULT_ALLOWED_HOSTS)}.",
)

GUARD_MODEL_OPT = typer.Option(
    None,
    "--guard-model",
    metavar="ROUTE",
    help="A model route (e.g. sim/guard, local/guard-probe) asked for a second opinion on the "
    "patch's free text from untrusted provenance (repeatable: each route asked, any caution "
    "counts); it can only turn pass into needs-approval (exit 1).",
)

VERDICT_EXIT = {
    "pass": ExitCode.OK,
    "needs-approval": ExitCode.REJECTED,
    "reject": ExitCode.INVALID_INPUT,
}
VERDICT_STYLE = {"pass": "green", "needs-approval": "yellow", "reject": "red"}


def _inputs(
    patch_file: Path,
    skill: Path,
    untrusted: Path | None,
    trace_store: Path | None,
    min_copy: int,
    allow_host: list[str] | None,
) -> PatchInputs:
    return PatchInputs(patch_file, skill, untrusted, trace_store, min_copy, tuple(allow_host or ()))


def _print_report(rep: CheckReport) -> None:
    style = VERDICT_STYLE[rep.verdict]
    console.print(
        f"patch {rep.patch_id} on {rep.skill} {rep.skill_version}: [{style}]{rep.verdict}[/{style}]"
    )
    if rep.limits is not None:
        t = rep.limits.tokens
        console.print(
            f"  new rules {len(rep.limits.new_rules)}, files {len(rep.limits.touched_files)}, "
            f"bootstrap tokens {t.bootstrap_before} -> {t.bootstrap_after} ({t.bootstrap_delta:+d}), "
            f"total {t.total_before} -> {t.total_after} ({t.total_delta:+d})"
        )
    for line in rep.reasons:
        console.print(f"  - {escape(line)}")
    for f in rep.guard.findings:
        if f.evidence is not None:
            where = f"op {f.op_index}" if f.op_index is not None else "patch"
            sev = escape(f"[{f.severity}]")
            console.print(
                f"    {sev} {f.code} at {where} {escape(f.evidence.field)}: {escape(f.evidence.excerpt)!r}"
            )
    for op in rep.guard_models:
        asked = "asked" if op.asked else "not asked (trusted provenance or no free text)"
        console.print(f"  guard model {escape(op.route)}: {op.verdict}, {asked}")
        for fo in op.flagged:
            why = f" — model says (untrusted): {fo.reason!r}" if fo.reason else ""
            console.print(f"    [{fo.verdict}] {escape(fo.field)}{escape(why)}", highlight=False)


@app.command("check")
def check_cmd(
    patch_file: Path = PATCH_ARG,
    skill: Path = SKILL_OPT,
    json_out: bool = JSON_OPT,
    untrusted: Path | None = UNTRUSTED_OPT,
    trace_store: Path | None = TRACE_OPT,
    min_copy: int = MIN_COPY_OPT,
    allow_host: list[str] | None = ALLOW_HOST_OPT,
    guard_model: list[str] | None = GUARD_MODEL_OPT,
) -> int:
    """Preconditions, limits and the guard (exit 0 pass, 1 needs-approval, 2 rejected)."""
    inp = _inputs(patch_file, skill, untrusted, trace_store, min_copy, allow_host)
    report = check_patch(replace(inp, guard_models=tuple(guard_model or ())))
    if json_out:
        emit_json(report)
    else:
        _print_report(report)
    return int(VERDICT_EXIT[report.verdict])


@app.command("apply")
def apply_cmd(
    patch_file: Path = PATCH_ARG,
    skill: Path = SKILL_OPT,
    dry_run: bool = typer.Option(
        False, "--dry-run", help="Check and show what would change; write nothing."
    ),
    approved: bool = typer.Option(
        False,
        "--approved",
        help="A human reviewed the needs-approval findings (never set by automation).",
    ),
    json_out: bool = JSON_OPT,
    untrusted: Path | None = UNTRUSTED_OPT,
    trace_store: Path | None = TRACE_OPT,
    min_copy: int = MIN_COPY_OPT,
    allow_host: list[str] | None = ALLOW_HOST_OPT,
) -> int:
    """Apply a patch atomically: every op or nothing is written."""
    res = apply_patch(
        _inputs(patch_file, skill, untrusted, trace_store, min_copy, allow_host),
        approved=approved,
        dry_run=dry_run,
    )
    report = res.report
    allowed = report.verdict == "pass" or (report.verdict == "needs-approval" and approved)
    if json_out:
        emit_json(
            {
                "patch_id": report.patch_id,
                "verdict": report.verdict,
                "applied": res.written,
                "dry_run": dry_run,
                "changed": res.changed,
                "check": report,
            }
        )
    else:
        _print_report(report)
        if not allowed:
            what = (
                "rejected"
                if report.verdict == "reject"
                else "needs human approval (re-run with --approved after review)"
            )
            console.print(f"not applied: {what}")
        elif dry_run:
            console.print(
                f"dry run: would write {len(res.changed)} file(s): {', '.join(res.changed)}"
            )
        else:
            console.print(
                f"applied {report.patch_id}: {len(res.changed)} file(s) changed: {', '.join(res.changed)}"
            )
    return 0 if allowed else int(VERDICT_EXIT[report.verdict])


@app.command("diff")
def diff_cmd(
    patch_file: Path = PATCH_ARG,
    skill: Path = SKILL_OPT,
    context: int = typer.Option(3, "--context", "-U", help="Lines of context."),
) -> int:
    """Show the patch as a unified diff over the package files (verified against the ops)."""
    typer.echo(diff_patch(patch_file, skill, context), nl=False)
    return 0


@app.command("bump")
def bump_cmd(
    patch_file: Path = PATCH_ARG, skill: Path = SKILL_OPT, json_out: bool = JSON_OPT
) -> int:
    """The next version this patch needs and its change list (docs/design/013)."""
    changes = bump_patch(patch_file, skill)
    if json_out:
        emit_json(changes)
        return 0
    console.print(
        f"{changes.skill} {changes.from_version} -> {changes.to_version} ({changes.bump})"
    )
    for label, items in (
        ("added", changes.added),
        ("modified", changes.modified),
        ("removed", changes.removed),
    ):
        for c in items:
            lvl = escape(f"[{c.level}]")
            console.print(f"  {label:8} {c.rule_id} {lvl} {escape(c.detail)} — {escape(c.reason)}")
    for o in changes.other:
        lvl = escape(f"[{o.level}]")
        console.print(f"  {o.kind} {escape(o.subject)} {lvl} {escape(o.detail)}")
    return 0
