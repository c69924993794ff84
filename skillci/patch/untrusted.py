"""Untrusted texts of a run record: what the guard compares a patch against.

Every event the trace marks ``untrusted`` (assistant and tool messages, tool-call
arguments, tool results, errors quoting them) and the final output become one
:class:`~skillci.patch.guard.UntrustedText` each, labelled with run id and step.
"""

from __future__ import annotations

import json

from skillci.patch.guard import UntrustedText
from skillci.trace.models import ErrorEvent, MessageEvent, RunRecord, ToolCallEvent, ToolResultEvent


def from_record(record: RunRecord) -> list[UntrustedText]:
    out: list[UntrustedText] = []

    def add(text: str | None, step: int | None, source: str) -> None:
        if text:
            event = f"step {step}" if step is not None else "final_output"
            out.append(UntrustedText(text=text, run_id=record.run_id, event=event, source=source))

    for ev in record.events:
        if isinstance(ev, MessageEvent) and ev.untrusted:
            add(ev.content, ev.step, f"message:{ev.role}")
        elif isinstance(ev, ToolCallEvent):
            for value in ev.arguments.values():
                add(
                    value if isinstance(value, str) else json.dumps(value, ensure_ascii=False),
                    ev.step,
                    f"tool_call:{ev.tool}",
                )
        elif isinstance(ev, ToolResultEvent):
            add(ev.output, ev.step, f"tool_result:{ev.tool or '?'}")
            add(ev.error, ev.step, f"tool_error:{ev.tool or '?'}")
        elif isinstance(ev, ErrorEvent) and ev.untrusted:
            add(ev.message, ev.step, "error")
    add(record.final_output, None, "final_output")
    return out
