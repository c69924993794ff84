"""``skillci trace``: list and show stored run records."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from skillci.cli.choices import ImportFormat
from skillci.cli.options import JsonOpt
from skillci.cli.output import console, emit_json
from skillci.cli.trace_ls import STATE_STYLE, render_runs
from skillci.flows.runs import list_runs
from skillci.flows.traces import (
    AgentRole,
    ErrorEvent,
    Event,
    MessageEvent,
    RunRecord,
    SkillLoadEvent,
    ToolCallEvent,
    ToolResultEvent,
    atif_of,
    get_run,
    import_trials,
    ingest_file,
    query_runs,
    reindex,
)

app = typer.Typer(help="Inspect stored run records (the trace store).", no_args_is_help=True)

HomeOpt = Annotated[
    Path | None,
    typer.Option("--home", help="Store root (default: $SKILLCI_HOME or <repo>/.skillci)."),
]


@app.command("ls")
def ls_cmd(
    task: Annotated[str | None, typer.Option("--task", help="Only this task id.")] = None,
    role: Annotated[AgentRole | None, typer.Option("--role", help="Only this agent role.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Only this model route.")] = None,
    split: Annotated[str | None, typer.Option("--split", help="Only this split.")] = None,
    skill_hash: Annotated[
        str | None, typer.Option("--skill-hash", help="Only runs of this skill content hash.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="At most this many rows.")] = 50,
    home: HomeOpt = None,
    json_out: JsonOpt = False,
) -> int:
    """List run records, newest first."""
    filters: dict[str, Any] = {
        "task_id": task,
        "agent_role": role,
        "model_route": model,
        "split": split,
        "skill_hash": skill_hash,
        "limit": limit,
    }
    if json_out:
        root, runs = query_runs(home, **filters)
        emit_json({"store": str(root), "runs": runs})
        return 0
    render_runs(*list_runs(home, **filters))
    return 0


def _one_line(text: str, width: int = 100) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _event_summary(ev: Event) -> tuple[str, str]:
    if isinstance(ev, MessageEvent):
        return f"message/{ev.role}", _one_line(ev.content)
    if isinstance(ev, ToolCallEvent):
        args = ", ".join(f"{k}={v!r}" for k, v in ev.arguments.items())
        return "tool_call", _one_line(f"{ev.tool}({args}) #{ev.call_id}")
    if isinstance(ev, ToolResultEvent):
        head = f"exit={ev.exit_code} " if ev.exit_code is not None else ""
        cut = " (truncated)" if ev.truncated else ""
        err = f" error={ev.error}" if ev.error else ""
        return "tool_result", _one_line(f"#{ev.call_id} {head}{ev.output}{cut}{err}")
    if isinstance(ev, SkillLoadEvent):
        tok = f" ({ev.tokens} tokens)" if ev.tokens is not None else ""
        return "skill_load", f"{ev.path}{tok}"
    assert isinstance(ev, ErrorEvent)
    return "error", _one_line(f"{ev.error_type}: {ev.message}")


def _count(n: int | None) -> str:
    return "unknown" if n is None else str(n)


def _render(rec: RunRecord) -> None:
    rt, ev, cost = rec.runtime, rec.evaluation, rec.cost
    head = Table(show_header=False, title=f"run {escape(rec.run_id)}", title_justify="left")
    head.add_column("field", style="bold")
    head.add_column("value", overflow="fold")
    skill = (
        f"{rt.skill.name}@{rt.skill.version} ({rt.skill.content_hash[:12]})" if rt.skill else "-"
    )
    model = rec.model.route + (f" = {rec.model.name}" if rec.model.name else "")
    if rec.model.quantization:
        model += f" [{rec.model.quantization}]"
    state_style = STATE_STYLE.get(ev.state.value, "")
    rows = [
        ("task", rec.task_id),
        ("role", rec.agent_role.value),
        ("model", model),
        ("harness", f"{rt.harness} {rt.harness_version or ''}".strip()),
        ("runner / sandbox", f"{rt.runner or '-'} / {rt.sandbox or '-'}"),
        ("skill", skill),
        ("split / repeat", f"{rec.split or '-'} / {rec.repeat_index}"),
        ("seed", str(rt.seed)),
        ("stop reason", rec.stop_reason or "-"),
        ("reward", "-" if ev.reward is None else f"{ev.reward:g}"),
        ("failure class", ev.failure_class or "-"),
        (
            "cost",
            f"{_count(cost.input_tokens)} in / {_count(cost.output_tokens)} out tokens, "
            f"{cost.model_calls} model "
            f"calls, {cost.tool_calls} tool calls, {cost.wall_time_sec:.1f}s"
            + (f", ${cost.usd:.4f}" if cost.usd is not None else ""),
        ),
        ("created", rec.created_at.isoformat()),
        ("cache key", rec.trial_cache_key or "-"),
    ]
    for k, v in rows:
        head.add_row(k, escape(v))
    state = escape(ev.state.value)
    head.add_row("state", f"[{state_style}]{state}[/{state_style}]" if state_style else state)
    console.print(head)
    for w in rec.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}")
    events = Table(title=f"{len(rec.events)} event(s) (model/tool text is untrusted)")
    events.add_column("#", justify="right")
    events.add_column("t", justify="right")
    events.add_column("kind")
    events.add_column("summary", overflow="fold")
    for e in rec.events:
        kind, summary = _event_summary(e)
        t = f"{e.t:.1f}" if e.t is not None else ""
        mark = "" if not e.untrusted else " [dim](untrusted)[/dim]"
        events.add_row(str(e.step), t, kind, escape(summary) + mark)
    console.print(events)
    if ev.verifier_output:
        console.print("[bold]verifier output (tail):[/bold]")
        console.print(escape(ev.verifier_output[-2000:]))
    if rec.final_output:
        console.print("[bold]final output:[/bold] " + escape(_one_line(rec.final_output, 400)))


@app.command("show")
def show_cmd(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    home: HomeOpt = None,
    json_out: JsonOpt = False,
) -> int:
    """Show one run record: provenance, evaluation, cost and the event timeline."""
    rec = get_run(home, run_id)
    if json_out:
        emit_json(rec)
    else:
        _render(rec)
    return 0


@app.command("export")
def export_cmd(
    run_ids: Annotated[
        list[str],
        typer.Argument(
            metavar="RUN_ID",
            help="Run id(s) (or unique prefixes); atif takes one, otlp any number.",
        ),
    ],
    fmt: Annotated[
        str,
        typer.Option(
            "--format",
            help="atif: Harbor's ATIF trajectory; otlp: OpenTelemetry spans in the GenAI "
            "conventions (needs pip install 'skillci[otel]').",
        ),
    ] = "atif",
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Write the trajectory / OTLP JSON here (default: stdout)."),
    ] = None,
    endpoint: Annotated[
        str | None,
        typer.Option(
            "--endpoint",
            help="otlp: send to this OTLP/HTTP collector (base URL, or the full .../v1/traces "
            "URL); headers from OTEL_EXPORTER_OTLP_HEADERS.",
        ),
    ] = None,
    include_content: Annotated[
        bool,
        typer.Option(
            "--include-content",
            help="otlp: add prompts, answers, tool arguments and outputs (redacted); off by "
            "default.",
        ),
    ] = False,
    timeout: Annotated[
        float, typer.Option("--timeout", min=0.1, help="otlp: seconds for the send, retries in.")
    ] = 10.0,
    home: HomeOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Build the export; write and send nothing.")
    ] = False,
    json_out: JsonOpt = False,
) -> int:
    """Export run records: one as an ATIF trajectory (Harbor's viewer and any ATIF tool read
    it), or any number as OpenTelemetry traces (OTLP: Langfuse, Phoenix, Grafana, Jaeger).
    A trial imported from ATIF comes back field for field; skillci's own trials are grouped
    into steps."""
    import json

    from skillci.errors import UsageError
    from skillci.fsutil import atomic_write_text

    if fmt == "otlp":
        return _export_otlp(run_ids, out, endpoint, include_content, timeout, home, dry_run,
                            json_out)  # fmt: skip
    if fmt != "atif":
        raise UsageError(f"--format {fmt}: unknown export format", hint="use --format atif or otlp")
    if endpoint is not None or include_content:
        raise UsageError(
            "--endpoint and --include-content are options of --format otlp",
            hint="ATIF is a file: use --out, or --format otlp",
        )
    if len(run_ids) != 1:
        raise UsageError(
            f"--format atif exports one run, {len(run_ids)} given",
            hint="export each run on its own, or use --format otlp",
        )
    rec, traj = atif_of(home, run_ids[0])
    text = json.dumps(traj, indent=2, ensure_ascii=False) + "\n"
    if out is None:
        sys.stdout.write(text)
        return 0
    if not dry_run:
        atomic_write_text(out, text)
    summary = {"run_id": rec.run_id, "format": fmt, "out": str(out), "steps": len(traj["steps"]),
               "written": not dry_run}  # fmt: skip
    if json_out:
        emit_json(summary)
    else:
        verb = "would write" if dry_run else "wrote"
        console.print(
            f"{verb} {escape(str(out))}: {len(traj['steps'])} ATIF step(s) of {rec.run_id}",
            highlight=False,
        )
    return 0


def _export_otlp(
    run_ids: list[str],
    out: Path | None,
    endpoint: str | None,
    include_content: bool,
    timeout: float,
    home: Path | None,
    dry_run: bool,
    json_out: bool,
) -> int:
    import json

    from skillci.flows.trace_export import export_otlp

    res = export_otlp(home, run_ids, endpoint=endpoint, out=out, include_content=include_content,
                      timeout=timeout, dry_run=dry_run)  # fmt: skip
    if res.document is not None and not dry_run:  # neither --endpoint nor --out: stdout
        sys.stdout.write(json.dumps(res.document, indent=1, ensure_ascii=False) + "\n")
        return 0
    if json_out:
        emit_json(res.summary())
        return 0
    what = f"{res.spans} span(s) of {len(res.runs)} trial(s)"
    content = " with content" if include_content else ""
    if dry_run:
        where = " and ".join(x for x in (res.endpoint, res.out) if x) or "stdout"
        console.print(f"would export {what}{content} to {escape(where)}", highlight=False)
        return 0
    if res.sent:
        console.print(f"sent {what}{content} to {escape(str(res.endpoint))}", highlight=False)
    if res.written:
        console.print(f"wrote {escape(str(res.out))}: {what}{content} (OTLP JSON)", highlight=False)
    for run in res.runs:
        console.print(f"  {run['run_id']}: trace {run['trace_id']}, {run['spans']} span(s), "
                      f"{run['outcome']}", highlight=False)  # fmt: skip
    return 0


@app.command("reindex")
def reindex_cmd(
    home: HomeOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Count record files; change nothing.")
    ] = False,
    json_out: JsonOpt = False,
) -> int:
    """Rebuild the SQLite index from the record files (e.g. after merging CI shards)."""
    res = reindex(home, dry_run=dry_run)
    if dry_run:
        if json_out:
            emit_json({"store": str(res.root), "record_files": res.record_files, "dry_run": True})
        else:
            console.print(f"would index {res.record_files} record file(s) in {res.root}")
        return 0
    if json_out:
        emit_json({"store": str(res.root), "indexed": res.indexed, "total": res.total})
    else:
        console.print(f"indexed {res.indexed} record file(s); {res.total} run(s) in {res.root}")
    return 0


@app.command("ingest")
def ingest_cmd(
    file: Annotated[Path, typer.Argument(help="JSONL file: one production RunRecord per line.")],
    home: HomeOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Validate every line; store nothing.")
    ] = False,
    json_out: JsonOpt = False,
) -> int:
    """Store production run records from a deployment (JSONL).

    Records need agent_role production and runtime.skill.version; the whole file is
    validated first and a bad line is named.
    """
    root, res = ingest_file(home, file, dry_run=dry_run)
    if json_out:
        emit_json({"store": str(root), "dry_run": dry_run, **vars(res)})
    else:
        verb = "would store" if dry_run else "stored"
        console.print(
            f"{verb} {res.stored if not dry_run else res.records} of {res.records} record(s)"
            + (f" ({res.already} already present)" if res.already else "")
            + (
                f": {', '.join(f'{k} x{v}' for k, v in res.versions.items())}"
                if res.versions
                else ""
            )
        )
    return 0


@app.command("import")
def import_cmd(
    directory: Annotated[
        Path,
        typer.Argument(
            help="Jobs dir, job dir or one trial dir (claude-code, codex: a session .jsonl or a dir "
            "of them; opencode: opencode.db or a dir holding it)."
        ),
    ],
    fmt: Annotated[
        ImportFormat, typer.Option("--format", help="The harness or agent that wrote it.")
    ] = "benchflow",
    role: Annotated[AgentRole, typer.Option("--role", help="Agent role to record.")] = (
        AgentRole.student
    ),
    home: HomeOpt = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Read and convert every trial; store nothing.")
    ] = False,
    json_out: JsonOpt = False,
) -> int:
    """Import trials another harness ran (BenchFlow or Harbor job dirs) or agent session logs
    (Claude Code sessions, Codex rollouts, OpenCode's database) as run records; unfinished or broken trials come in as infra_error/timeout/
    verifier_error, never as a verdict nobody reached (sessions have none: not_run)."""
    report = import_trials(directory, fmt, role, home, dry_run=dry_run)
    if json_out:
        emit_json(report)
        return 0
    states = ", ".join(f"{k} {v}" for k, v in sorted(report.states.items())) or "none"
    verb = "would store" if dry_run else f"stored {report.stored} new,"
    console.print(
        f"{report.trials} trial(s) in {escape(str(directory))}: {states}; {verb}"
        + ("" if dry_run else f" {report.already} already present"),
        highlight=False,
    )
    for w in report.warnings:
        console.print(f"[yellow]warning:[/yellow] {escape(w)}")
    for job in report.jobs:
        read = ", ".join(f"{k}={v}" for k, v in (job.get("config") or {}).items()) or "nothing"
        unread = [*job.get("config_unread", []), *job.get("result_unread", [])]
        console.print(
            f"job {escape(str((job.get('result') or {}).get('id', '?')))}: read {escape(read)}"
            + (f"; not read: {escape(', '.join(unread))}" if unread else ""),
            highlight=False,
        )
    if report.unmapped:
        fields = ", ".join(f"{k} x{v}" for k, v in report.unmapped.items())
        console.print(f"unmapped: {len(report.unmapped)} field(s): {escape(fields)}")
    if report.reward_hack_suspects:
        console.print(
            f"[red]reward-hack evidence:[/red] {report.reward_hack_suspects} trial(s) touched "
            "verifier/test files (see reward_hack_evidence on the records)"
            + (
                f"; {report.forged_passes} passed after writing them (the gate counts those "
                "as failed)"
                if report.forged_passes
                else ""
            )
        )
    return 0
