"""Shapes of one model call as skillci sees it, independent of litellm's classes."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

#: An OpenAI-style chat message (role, content, tool_calls, tool_call_id, name).
Message = dict[str, Any]
#: An OpenAI-style tool schema ({"type": "function", "function": {...}}).
ToolSchema = dict[str, Any]

COMPLETION_SCHEMA_VERSION = 1


class ToolCall(BaseModel):
    """One tool call the model asked for. Everything here is untrusted model output."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Call id, echoed in the tool result message.")
    name: str = Field(description="Tool name.")
    arguments: dict[str, Any] = Field(
        default_factory=dict, description="Parsed JSON arguments ({} when unparsable)."
    )
    raw_arguments: str = Field(default="", description="Arguments exactly as the model sent them.")
    parse_error: str | None = Field(default=None, description="Why the arguments did not parse.")

    def to_message(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.raw_arguments},
        }


class Completion(BaseModel):
    """One answer of a model: text and/or tool calls, with usage and cost."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=COMPLETION_SCHEMA_VERSION, description="Shape version.")
    content: str | None = Field(default=None, description="Assistant text (untrusted).")
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Requested tool calls.")
    finish_reason: str | None = Field(default=None, description="Provider's finish reason.")
    model: str | None = Field(default=None, description="Model name the provider reported.")
    input_tokens: int = Field(default=0, ge=0, description="Prompt tokens (provider's count).")
    output_tokens: int = Field(default=0, ge=0, description="Completion tokens.")
    usd: float | None = Field(default=None, ge=0, description="Cost when prices are known.")
    cached: bool = Field(default=False, description="Served from the response cache.")

    def assistant_message(self) -> dict[str, Any]:
        """The answer as the next request's history. ``content`` is always a string: some
        servers' chat templates (llama.cpp's function-calling one) fail on a missing one."""
        msg: dict[str, Any] = {"role": "assistant", "content": self.content or ""}
        if self.tool_calls:
            msg["tool_calls"] = [c.to_message() for c in self.tool_calls]
        return msg


__all__ = ["Completion", "Message", "ToolCall", "ToolSchema"]
