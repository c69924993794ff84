"""The built-in tool-calling agent loop (harness ``skillci-builtin``).

One model call per step: the answer's tool calls are executed in order and their results
appended; an answer without tool calls is the final answer. The loop stops on the final
answer, ``max_steps`` model calls, the trial deadline, a budget (per-run meter of the
client, which may be nested in a per-command one), a context-window overflow or a model
error — each recorded as ``stop_reason`` plus an error event where relevant. Tool calls
act only inside the workspace (file tools) or the sandbox (``run``).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from typing import Any

from skillci.agents.base import AgentContext, AgentResult, EventLog
from skillci.agents.prompt import prompt_hash, system_prompt
from skillci.agents.tools import TOOL_SCHEMA_VERSION, Toolbox, ToolOutcome, schema_hash
from skillci.agents.version import HARNESS_VERSION
from skillci.agents.workspace import Workspace
from skillci.errors import BudgetExceeded, ContextWindowExceeded, ModelError
from skillci.providers.client import ModelClient
from skillci.trace.models import (
    MessageEvent,
    SkillLoadEvent,
    ToolCallEvent,
    ToolResultEvent,
)

HARNESS = "skillci-builtin"


@dataclass(frozen=True)
class LoopLimits:
    max_steps: int = 30
    tool_timeout_sec: float = 60.0


class BuiltinAgent:
    """The built-in agent over one model route."""

    name = HARNESS
    version = HARNESS_VERSION

    def __init__(
        self, client: ModelClient, *, role: str = "student", limits: LoopLimits | None = None
    ) -> None:
        self.client = client
        self.role = role
        self.limits = limits or LoopLimits()

    def run(self, ctx: AgentContext) -> AgentResult:
        # long: one step per iteration (model call, tool calls, stop checks) sharing the loop's state
        start = time.monotonic()
        res = AgentResult(
            tool_schema_version=TOOL_SCHEMA_VERSION,
            model_params=self.client.route.sampling_params(),
        )
        log = EventLog(res.events, start)
        tools = Toolbox(
            ctx.files or Workspace(ctx.workspace, ctx.workdir),
            ctx.shell,
            ctx.skill,
            tool_timeout=self.limits.tool_timeout_sec,
            network=ctx.network,
        )
        schemas = tools.schemas
        system = system_prompt(ctx.skill, network=ctx.network, workdir=ctx.workdir)
        res.system_prompt_hash = prompt_hash(system)
        res.tool_schema_hash = schema_hash(schemas)
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": ctx.instruction},
        ]
        log.add(MessageEvent, role="system", content=system, untrusted=False)
        log.add(MessageEvent, role="user", content=ctx.instruction, untrusted=False)
        if ctx.skill is not None and (boot := ctx.skill.file("SKILL.md")) is not None:
            log.add(
                SkillLoadEvent,
                path=boot.path,
                on_demand=False,
                tokens=boot.tokens,
                content_hash=hashlib.sha256(boot.content).hexdigest(),
            )
        cost = res.cost
        res.stop_reason = "max_steps"
        for _ in range(self.limits.max_steps):
            if ctx.time_left() <= 0:
                res.stop_reason = "timeout"
                log.error("Timeout", "agent time limit reached")
                break
            try:
                answer = self.client.complete(
                    messages,
                    schemas,
                    seed=ctx.seed,
                    time_left=ctx.time_left,
                    on_retry=lambda why: log.error("ModelRetry", why),
                )
            except BudgetExceeded as exc:
                res.stop_reason = f"budget: {exc.message}"
                log.error("BudgetExceeded", exc.message)
                break
            except ContextWindowExceeded as exc:
                res.stop_reason = "context_window_exceeded"
                log.error("ContextWindowExceeded", exc.message)
                break
            except ModelError as exc:  # the route failed, not the agent: no verdict (design 300)
                res.stop_reason = "model_error"
                res.infra_error = f"model error: {exc.message}"
                log.error("ModelError", exc.message)
                break
            cost.model_calls += 1
            cost.cached_model_calls += int(answer.cached)
            cost.input_tokens = (cost.input_tokens or 0) + answer.input_tokens
            cost.output_tokens = (cost.output_tokens or 0) + answer.output_tokens
            if answer.usd is not None:
                cost.usd = (cost.usd or 0.0) + answer.usd
            log.add(
                MessageEvent,
                role="assistant",
                content=answer.content or "",
                input_tokens=answer.input_tokens,
                output_tokens=answer.output_tokens,
            )
            if not answer.tool_calls:
                res.final_output = answer.content or ""
                # an answer cut by the token limit is the harness's stop, not the agent's
                res.stop_reason = "length" if answer.finish_reason == "length" else "final_answer"
                break
            messages.append(answer.assistant_message())
            for call in answer.tool_calls:
                log.add(ToolCallEvent, tool=call.name, arguments=call.arguments, call_id=call.id)
                if call.parse_error:
                    out = ToolOutcome(f"error: {call.parse_error}", error=call.parse_error)
                else:
                    out = tools.execute(call.name, call.arguments, time_left=ctx.time_left())
                cost.tool_calls += 1
                log.add(
                    ToolResultEvent,
                    call_id=call.id,
                    tool=call.name,
                    exit_code=out.exit_code,
                    output=out.text,
                    truncated=out.truncated,
                    error=out.error,
                )
                if out.skill_path is not None:
                    log.add(
                        SkillLoadEvent,
                        path=out.skill_path,
                        on_demand=True,
                        tokens=out.skill_tokens,
                        content_hash=out.skill_hash,
                    )
                messages.append({"role": "tool", "tool_call_id": call.id, "content": out.text})
        cost.wall_time_sec = round(time.monotonic() - start, 4)
        return res


__all__ = ["HARNESS", "HARNESS_VERSION", "BuiltinAgent", "LoopLimits"]
