"""Agents without a model: the oracle (runs the task's ``solution/solve.sh``) and a no-op.

The oracle proves a task is solvable and its verifier accepts the reference solution;
every bundled task must pass under it. The no-op agent changes nothing: it measures the
runner's own overhead (benchmarks/trial_overhead.py) and should fail every real task.
"""

from __future__ import annotations

import shlex
import time

from skillci.agents.base import AgentContext, AgentResult, EventLog
from skillci.agents.tools import clip
from skillci.trace.models import ToolCallEvent, ToolResultEvent


class OracleAgent:
    name = "oracle"
    version = "1"
    role = "oracle"

    def run(self, ctx: AgentContext) -> AgentResult:
        start = time.monotonic()
        res = AgentResult()
        log = EventLog(res.events, start)
        if ctx.solution_script is None:
            res.stop_reason = "no_solution"
            log.error("NoSolution", f"task {ctx.task_id} has no solution/solve.sh")
            return res
        command = f"bash {shlex.quote(ctx.solution_script)}"
        log.add(ToolCallEvent, tool="run", arguments={"command": command}, call_id="oracle-0")
        out = ctx.shell.run(command, timeout=max(0.1, ctx.time_left()))
        text, cut = clip(out.output)
        log.add(
            ToolResultEvent,
            call_id="oracle-0",
            tool="run",
            exit_code=out.exit_code,
            output=text,
            truncated=cut,
            error="timeout" if out.timed_out else None,
        )
        res.cost.tool_calls = 1
        res.final_output = f"solve.sh exited {out.exit_code}"
        res.stop_reason = "timeout" if out.timed_out else "final_answer"
        res.cost.wall_time_sec = round(time.monotonic() - start, 4)
        return res


class NoopAgent:
    name = "noop"
    version = "1"
    role = "student"

    def run(self, ctx: AgentContext) -> AgentResult:
        return AgentResult(final_output="", stop_reason="noop")


__all__ = ["NoopAgent", "OracleAgent"]
