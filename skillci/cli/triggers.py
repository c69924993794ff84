"""``skillci eval triggers``: precision/recall of a skill's triggering (docs/eval.md)."""

from __future__ import annotations

from pathlib import Path

import typer
from rich.markup import escape
from rich.table import Table

from skillci.cli.choices import AgentSandbox, Harness, TriggerSplit
from skillci.cli.output import console, emit_json, err_console
from skillci.errors import ExitCode
from skillci.flows.plugins import trigger_agent_help


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{x:.1%}"


def triggers_cmd(
    skill: Path = typer.Option(..., "--skill", help="Skill package dir with a trigger suite."),
    installed: Path = typer.Option(
        None,
        "--installed",
        help="Where the other installed skills are (distractors); default: the repository.",
    ),
    model: str = typer.Option("sim/student", "--model", help="Model route that decides."),
    harness: Harness = typer.Option(
        "builtin", "--harness", help="How the catalogue is presented (builtin or folder)."
    ),
    runs: int = typer.Option(None, "--runs", min=1, help="Decisions per query (suite default)."),
    seed: int = typer.Option(0, "--seed", help="Seed of run 0 (run i uses seed + i)."),
    split: TriggerSplit = typer.Option("all", "--split", help="all, train or held_out."),
    home: Path = typer.Option(None, "--home", help="State dir (default: <repo>/.skillci)."),
    root: Path = typer.Option(Path("."), "--root", help="Repository root."),
    agent: str = typer.Option(
        None,
        "--agent",
        help=trigger_agent_help(),
    ),
    agent_version: str = typer.Option(
        None, "--agent-version", help="Real agent version (default: newest installed)."
    ),
    agent_timeout: float = typer.Option(
        180.0, "--agent-timeout", min=1, help="Seconds per agent run on one query."
    ),
    sandbox: AgentSandbox = typer.Option(
        "auto", "--sandbox", help="The agent's sandbox: auto, bwrap or none."
    ),
    dry_run: bool = typer.Option(False, "--dry-run", help="List the catalogue and queries."),
    json_out: bool = typer.Option(False, "--json", help="Print the result as JSON."),
) -> int:
    """Run a skill's trigger suite: for each query the model sees the skill catalogue and
    names the skill it would load (or none); with --agent the real agent runs on the query
    and what it loaded decides. k runs each. Decisions are cached."""
    from skillci.flows.command import default_home
    from skillci.flows.triggers import TriggerEvalRequest, eval_triggers

    req = TriggerEvalRequest(
        skill=skill,
        installed=installed,
        model=model,
        harness=harness,
        runs=runs,
        seed=seed,
        split=split,
        home=(home or default_home(root.resolve())).resolve(),
        agent=agent,
        agent_version=agent_version,
        agent_timeout=agent_timeout,
        sandbox=sandbox,
    )
    if dry_run:
        return _dry_run(req, root.resolve(), json_out)
    live = not json_out

    def show(o: object) -> None:
        from skillci.flows.triggers import QueryOutcome

        assert isinstance(o, QueryOutcome)
        got = ",".join(c or "none" for c in o.choices)
        err_console.print(f"{escape(o.query_id)}: {escape(got)}", highlight=False)

    res = eval_triggers(req, root.resolve(), progress=show if live else None)
    if json_out:
        emit_json(res)
        return int(ExitCode.OK)
    table = Table(title=f"trigger decisions for {res.skill} ({res.model}, {res.harness})")
    for col in ("query", "should", "loaded", "holds", "other choices"):
        table.add_column(col)
    for o in res.outcomes:
        others = sorted({c or "none" for c in o.choices if c != res.skill})
        table.add_row(
            escape(o.query_id),
            "yes" if o.should_trigger else "no",
            f"{o.loaded(res.skill)}/{len(o.choices)}",
            "[green]yes[/]" if o.holds(res.skill) else "[red]no[/]",
            escape(", ".join(others)),
        )
    console.print(table)
    m = res.metrics
    console.print(
        f"precision {_pct(m.precision)}  recall {_pct(m.recall)}  "
        f"invocation rate {_pct(m.invocation_rate)}  queries held {m.queries_held}/{m.queries}; "
        f"{res.cached} cached, {res.ran} decided",
        highlight=False,
    )
    if m.confusion:
        shown = ", ".join(f"{k} {v}" for k, v in m.confusion.items())
        console.print(f"loaded instead on should-trigger queries: {escape(shown)}")
    if m.false_triggers:
        shown = ", ".join(f"{k} {v}" for k, v in m.false_triggers.items())
        console.print(f"false triggers by near miss: {escape(shown)}")
    return int(ExitCode.OK)


def _dry_run(req: object, root: Path, json_out: bool) -> int:
    from skillci.flows.triggers import TriggerEvalRequest, dry_run_plan

    assert isinstance(req, TriggerEvalRequest)
    target, names, queries, runs = dry_run_plan(req, root)
    if json_out:
        shown = {"skill": target, "catalogue": names, "queries": queries, "runs": runs}
        emit_json({**shown, "agent": req.real_agent})
        return 0
    if req.real_agent is not None:
        console.print(f"decided by agent {escape(req.real_agent)} (what it loads) on {req.model}")
    console.print(f"catalogue ({len(names)}): {escape(', '.join(names))}")
    console.print(f"would decide {len(queries)} queries x {runs} runs = {len(queries) * runs}")
    return 0


__all__ = ["triggers_cmd"]
