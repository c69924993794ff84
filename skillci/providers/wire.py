"""The wire formats real agents speak, translated to and from one chat call (pure).

A real agent (Claude Code, Codex, OpenCode, Gemini CLI) talks to skillci's loopback model gateway
(:mod:`skillci.providers.gateway`) in its own format; every route skillci calls takes
OpenAI chat messages and tool schemas (:class:`~skillci.providers.client.ModelClient`).
Here, without any I/O:

- ``*_to_chat``: a request body -> ``(messages, tools)`` for ``ModelClient.complete``;
- ``*_events``: the route's :class:`~skillci.providers.types.Completion` -> the
  server-sent events the agent reads (or one JSON body when it did not ask for a stream).

Formats: Anthropic Messages (``POST /v1/messages``, Claude Code), OpenAI Responses
(``POST /v1/responses``, Codex), OpenAI chat completions (``POST /v1/chat/completions``,
OpenCode, Qwen Code), the Gemini API (``POST /v1beta/models/M:streamGenerateContent``,
Gemini CLI; docs/design/430). Only what those agents send is mapped: text, tool calls and tool results;
thinking/reasoning items and images are dropped (a route that needs them is called by the
agent's own provider, not through skillci). Everything in a request is untrusted data.
"""

from __future__ import annotations

import json
from typing import Any

from skillci.providers.types import Completion, Message, ToolSchema

#: One server-sent event: (event name or None, JSON payload or the literal ``[DONE]``).
Sse = tuple[str | None, Any]


def _text_of(content: Any) -> str:
    """The text of a content value: a string, or a list of text-bearing blocks."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    parts: list[str] = []
    for block in content if isinstance(content, list) else [content]:
        if isinstance(block, str):
            parts.append(block)
        elif isinstance(block, dict) and isinstance(block.get("text"), str):
            parts.append(block["text"])
    return "\n".join(parts)


def _merge_system(messages: list[Message]) -> list[Message]:
    """One leading system message: the system texts joined (chat templates of small local
    models accept one system message, first)."""
    system = [m["content"] for m in messages if m["role"] == "system" and m["content"]]
    rest = [m for m in messages if m["role"] != "system"]
    return ([{"role": "system", "content": "\n\n".join(system)}] if system else []) + rest


def _function_tool(name: str, description: str | None, parameters: Any) -> ToolSchema:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description or "",
            "parameters": parameters if isinstance(parameters, dict) else {"type": "object"},
        },
    }


def _call(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


# ------------------------------------------------------------------ Anthropic Messages


def anthropic_to_chat(body: dict[str, Any]) -> tuple[list[Message], list[ToolSchema]]:
    """An Anthropic Messages request as chat messages and tools."""
    out: list[Message] = []
    if body.get("system"):
        out.append({"role": "system", "content": _text_of(body["system"])})
    for msg in body.get("messages") or []:
        role, content = msg.get("role"), msg.get("content")
        if isinstance(content, str):
            out.append({"role": role, "content": content})
            continue
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in content or []:
            kind = block.get("type")
            if kind == "text":
                texts.append(block.get("text", ""))
            elif kind == "tool_use":
                args = json.dumps(block.get("input") or {})
                calls.append(_call(str(block.get("id")), str(block.get("name")), args))
            elif kind == "tool_result":
                text = _text_of(block.get("content"))
                if block.get("is_error"):
                    text = f"[tool error] {text}"
                out.append(
                    {"role": "tool", "tool_call_id": block.get("tool_use_id"), "content": text}
                )
        if role == "assistant":
            entry: Message = {"role": "assistant", "content": "\n".join(texts)}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif texts:
            out.append({"role": "user", "content": "\n".join(texts)})
    tools = [
        _function_tool(t["name"], t.get("description"), t.get("input_schema"))
        for t in body.get("tools") or []
        if t.get("name") and "input_schema" in t
    ]
    return _merge_system(out), tools


def _anthropic_content(c: Completion) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    if c.content:
        blocks.append({"type": "text", "text": c.content})
    blocks += [
        {"type": "tool_use", "id": t.id, "name": t.name, "input": t.arguments} for t in c.tool_calls
    ]
    return blocks


def anthropic_message(c: Completion, model: str, msg_id: str) -> dict[str, Any]:
    """The non-streaming Messages response."""
    return {
        "id": msg_id,
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _anthropic_content(c),
        "stop_reason": "tool_use" if c.tool_calls else "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": c.input_tokens, "output_tokens": c.output_tokens},
    }


def anthropic_events(c: Completion, model: str, msg_id: str) -> list[Sse]:
    """The Messages stream: message_start, one block per text/tool call, message_stop."""
    whole = anthropic_message(c, model, msg_id)
    start = {**whole, "content": [], "stop_reason": None}
    start["usage"] = {"input_tokens": c.input_tokens, "output_tokens": 0}
    events: list[Sse] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(whole["content"]):
        first: dict[str, Any]
        if block["type"] == "text":
            first = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            first = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            (
                "content_block_start",
                {"type": "content_block_start", "index": i, "content_block": first},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": i}),
        ]
    events += [
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": whole["stop_reason"], "stop_sequence": None},
                "usage": {"output_tokens": c.output_tokens},
            },
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


# ------------------------------------------------------------------ OpenAI Responses


def responses_to_chat(body: dict[str, Any]) -> tuple[list[Message], list[ToolSchema]]:
    """An OpenAI Responses request as chat messages and tools. Function tools only (the
    agent's built-in hosted tools need the provider's own servers)."""
    out: list[Message] = []
    if body.get("instructions"):
        out.append({"role": "system", "content": str(body["instructions"])})
    items = body.get("input")
    if isinstance(items, str):
        items = [{"type": "message", "role": "user", "content": items}]
    for item in items or []:
        kind = item.get("type", "message")
        if kind == "message":
            role = item.get("role", "user")
            role = "system" if role == "developer" else role
            out.append({"role": role, "content": _text_of(item.get("content"))})
        elif kind in ("function_call", "custom_tool_call"):
            args = item.get("arguments") if kind == "function_call" else item.get("input")
            call = _call(str(item.get("call_id")), str(item.get("name")), str(args or "{}"))
            prev = out[-1] if out else None
            if prev is not None and prev["role"] == "assistant" and "tool_calls" in prev:
                prev["tool_calls"].append(call)
            else:
                out.append({"role": "assistant", "content": "", "tool_calls": [call]})
        elif kind in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            text = output if isinstance(output, str) else _text_of(output)
            if isinstance(output, dict):
                text = str(output.get("content", json.dumps(output)))
            out.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": text})
    tools = [
        _function_tool(t["name"], t.get("description"), t.get("parameters"))
        for t in body.get("tools") or []
        if t.get("type") == "function" and t.get("name")
    ]
    return _merge_system(out), tools


def _responses_output(c: Completion, resp_id: str) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    if c.content:
        items.append(
            {
                "type": "message",
                "id": f"msg_{resp_id}",
                "role": "assistant",
                "status": "completed",
                "content": [{"type": "output_text", "text": c.content, "annotations": []}],
            }
        )
    items += [
        {
            "type": "function_call",
            "id": f"fc_{resp_id}_{i}",
            "call_id": t.id,
            "name": t.name,
            "arguments": t.raw_arguments or json.dumps(t.arguments),
            "status": "completed",
        }
        for i, t in enumerate(c.tool_calls)
    ]
    return items


def responses_events(c: Completion, model: str, resp_id: str) -> list[Sse]:
    """The Responses stream: created, one added/done pair per output item, completed."""
    output = _responses_output(c, resp_id)
    base = {"id": resp_id, "object": "response", "model": model, "output": []}
    events: list[Sse] = [
        (
            "response.created",
            {"type": "response.created", "response": {**base, "status": "in_progress"}},
        )
    ]
    for i, item in enumerate(output):
        events.append(
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": i, "item": item},
            )
        )
        if item["type"] == "message":
            events.append(
                (
                    "response.output_text.delta",
                    {
                        "type": "response.output_text.delta",
                        "output_index": i,
                        "content_index": 0,
                        "item_id": item["id"],
                        "delta": c.content,
                    },
                )
            )
        events.append(
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": i, "item": item},
            )
        )
    usage = {
        "input_tokens": c.input_tokens,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": c.output_tokens,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": c.input_tokens + c.output_tokens,
    }
    done = {**base, "status": "completed", "output": output, "usage": usage}
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return events


# ------------------------------------------------------------------ chat completions


def chat_to_chat(body: dict[str, Any]) -> tuple[list[Message], list[ToolSchema]]:
    """A chat-completions request's messages (text content flattened) and function tools."""
    out: list[Message] = []
    for msg in body.get("messages") or []:
        entry: Message = {"role": msg.get("role"), "content": _text_of(msg.get("content"))}
        if msg.get("tool_calls"):
            entry["tool_calls"] = msg["tool_calls"]
        if msg.get("tool_call_id"):
            entry["tool_call_id"] = msg["tool_call_id"]
        out.append(entry)
    tools = [t for t in body.get("tools") or [] if t.get("type") == "function"]
    return _merge_system(out), tools


def chat_response(c: Completion, model: str, chat_id: str) -> dict[str, Any]:
    """The non-streaming chat completion."""
    message: dict[str, Any] = {"role": "assistant", "content": c.content or ""}
    if c.tool_calls:
        message["tool_calls"] = [t.to_message() for t in c.tool_calls]
    return {
        "id": chat_id,
        "object": "chat.completion",
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if c.tool_calls else "stop",
            }
        ],
        "usage": _chat_usage(c),
    }


def _chat_usage(c: Completion) -> dict[str, int]:
    return {
        "prompt_tokens": c.input_tokens,
        "completion_tokens": c.output_tokens,
        "total_tokens": c.input_tokens + c.output_tokens,
    }


def chat_events(c: Completion, model: str, chat_id: str, *, usage: bool) -> list[Sse]:
    """The chat-completions stream: role+content chunk, tool-call chunks, finish, usage."""
    head = {"id": chat_id, "object": "chat.completion.chunk", "model": model}

    def chunk(delta: dict[str, Any], finish: str | None = None) -> Sse:
        return (None, {**head, "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

    events = [chunk({"role": "assistant", "content": c.content or ""})]
    for i, t in enumerate(c.tool_calls):
        events.append(chunk({"tool_calls": [{"index": i, **t.to_message()}]}))
    events.append(chunk({}, "tool_calls" if c.tool_calls else "stop"))
    if usage:
        events.append((None, {**head, "choices": [], "usage": _chat_usage(c)}))
    events.append((None, "[DONE]"))
    return events


# ------------------------------------------------------------------ Gemini API


def gemini_to_chat(body: dict[str, Any]) -> tuple[list[Message], list[ToolSchema]]:
    """A Gemini ``generateContent`` request as chat messages and tools. ``functionCall``
    parts are tool calls, ``functionResponse`` parts their results (paired by ``id``, else
    by name in order); thought parts are dropped. Tool schemas come from
    ``functionDeclarations`` (``parametersJsonSchema`` or ``parameters``)."""
    out: list[Message] = []
    system = _gemini_text(body.get("systemInstruction"))
    if system:
        out.append({"role": "system", "content": system})
    pending: dict[str, list[str]] = {}  # name -> ids of calls still without a result
    n = 0
    for content in body.get("contents") or []:
        if not isinstance(content, dict):
            continue
        role = "assistant" if content.get("role") == "model" else "user"
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for part in content.get("parts") or []:
            if not isinstance(part, dict) or part.get("thought"):
                continue
            if isinstance(part.get("text"), str):
                texts.append(part["text"])
            elif isinstance(part.get("functionCall"), dict):
                fc = part["functionCall"]
                n += 1
                name = str(fc.get("name"))
                call_id = str(fc.get("id") or f"call_{n}")
                pending.setdefault(name, []).append(call_id)
                calls.append(_call(call_id, name, json.dumps(fc.get("args") or {})))
            elif isinstance(part.get("functionResponse"), dict):
                fr = part["functionResponse"]
                name = str(fr.get("name"))
                waiting = pending.get(name) or []
                call_id = str(fr.get("id") or (waiting[0] if waiting else f"call_{name}"))
                if call_id in waiting:
                    waiting.remove(call_id)
                out.append({"role": "tool", "tool_call_id": call_id, "content": _gemini_result(fr)})
        if role == "assistant" and (texts or calls):
            entry: Message = {"role": "assistant", "content": "\n".join(texts)}
            if calls:
                entry["tool_calls"] = calls
            out.append(entry)
        elif role == "user" and texts:
            out.append({"role": "user", "content": "\n".join(texts)})
    tools = [
        _function_tool(
            str(f["name"]),
            f.get("description"),
            f.get("parametersJsonSchema", f.get("parameters")),
        )
        for t in body.get("tools") or []
        if isinstance(t, dict)
        for f in t.get("functionDeclarations") or []
        if isinstance(f, dict) and f.get("name")
    ]
    return _merge_system(out), tools


def _gemini_text(content: Any) -> str:
    """The text parts of a Gemini ``Content`` (or a plain string), thoughts dropped."""
    if isinstance(content, str):
        return content
    if not isinstance(content, dict):
        return ""
    return "\n".join(
        p["text"]
        for p in content.get("parts") or []
        if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")
    )


def _gemini_result(fr: dict[str, Any]) -> str:
    """A ``functionResponse``'s text: its ``output`` (Gemini CLI's) or ``error``, else JSON."""
    response = fr.get("response")
    if isinstance(response, dict):
        if isinstance(response.get("output"), str):
            return str(response["output"])
        if isinstance(response.get("error"), str):
            return f"[tool error] {response['error']}"
    return json.dumps(response)


def gemini_response(c: Completion, model: str, response_id: str) -> dict[str, Any]:
    """One ``GenerateContentResponse`` (the whole answer; a stream sends it as one event)."""
    parts: list[dict[str, Any]] = []
    if c.content:
        parts.append({"text": c.content})
    parts += [
        {"functionCall": {"id": t.id, "name": t.name, "args": t.arguments}} for t in c.tool_calls
    ]
    if not parts:
        parts.append({"text": ""})
    return {
        "candidates": [
            {
                "content": {"role": "model", "parts": parts},
                "finishReason": "STOP",
                "index": 0,
            }
        ],
        "usageMetadata": {
            "promptTokenCount": c.input_tokens,
            "candidatesTokenCount": c.output_tokens,
            "totalTokenCount": c.input_tokens + c.output_tokens,
        },
        "modelVersion": model,
        "responseId": response_id,
    }


def gemini_events(c: Completion, model: str, response_id: str) -> list[Sse]:
    """The ``streamGenerateContent?alt=sse`` stream: the answer as one chunk."""
    return [(None, gemini_response(c, model, response_id))]


def gemini_count_tokens(body: dict[str, Any]) -> dict[str, int]:
    """A ``countTokens`` answer: an estimate (4 characters a token), no route call."""
    contents = body.get("contents") or (body.get("generateContentRequest") or {}).get("contents")
    return {"totalTokens": max(1, len(json.dumps(contents or [])) // 4)}


def encode_sse(events: list[Sse]) -> bytes:
    """The bytes of ``events`` on the wire."""
    out: list[str] = []
    for name, data in events:
        payload = data if data == "[DONE]" else json.dumps(data)
        out.append((f"event: {name}\n" if name else "") + f"data: {payload}\n\n")
    return "".join(out).encode()


__all__ = [
    "Sse",
    "anthropic_events",
    "anthropic_message",
    "anthropic_to_chat",
    "chat_events",
    "chat_response",
    "chat_to_chat",
    "encode_sse",
    "gemini_count_tokens",
    "gemini_events",
    "gemini_response",
    "gemini_to_chat",
    "responses_events",
    "responses_to_chat",
]
