"""The agent wire formats to and from one chat call (skillci.providers.wire)."""

from __future__ import annotations

import json

from skillci.providers import wire
from skillci.providers.types import Completion, ToolCall

ANSWER = Completion(
    content="Running the check.",
    tool_calls=[
        ToolCall(
            id="c1", name="Bash", arguments={"command": "ls"}, raw_arguments='{"command": "ls"}'
        )
    ],
    input_tokens=12,
    output_tokens=3,
)


def test_anthropic_request_becomes_chat_messages_with_tool_calls_and_results() -> None:
    body = {
        "system": [{"type": "text", "text": "You are Claude Code."}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hmm"},
                    {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "t1",
                        "content": [{"type": "text", "text": "a.py"}],
                    },
                    {"type": "text", "text": "go on"},
                ],
            },
        ],
        "tools": [{"name": "Bash", "description": "run", "input_schema": {"type": "object"}}],
    }
    messages, tools = wire.anthropic_to_chat(body)
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "user"]
    assert messages[0]["content"] == "You are Claude Code."
    call = messages[2]["tool_calls"][0]
    assert call["id"] == "t1" and json.loads(call["function"]["arguments"]) == {"command": "ls"}
    assert messages[3] == {"role": "tool", "tool_call_id": "t1", "content": "a.py"}
    assert tools[0]["function"]["name"] == "Bash"


def test_anthropic_stream_carries_text_and_a_tool_use_block_with_its_input() -> None:
    events = wire.anthropic_events(ANSWER, "m", "msg_1")
    names = [n for n, _ in events]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    starts = [d["content_block"] for n, d in events if n == "content_block_start"]
    assert [b["type"] for b in starts] == ["text", "tool_use"]
    deltas = [d["delta"] for n, d in events if n == "content_block_delta"]
    assert json.loads(deltas[1]["partial_json"]) == {"command": "ls"}
    assert events[-2][1]["delta"]["stop_reason"] == "tool_use"
    assert b"event: message_stop\ndata: " in wire.encode_sse(events)


def test_responses_request_keeps_developer_text_and_pairs_calls_with_outputs() -> None:
    body = {
        "instructions": "base",
        "input": [
            {
                "type": "message",
                "role": "developer",
                "content": [{"type": "input_text", "text": "skills: x"}],
            },
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix"}]},
            {"type": "reasoning", "summary": []},
            {
                "type": "function_call",
                "call_id": "k",
                "name": "exec_command",
                "arguments": '{"cmd":"ls"}',
            },
            {"type": "function_call_output", "call_id": "k", "output": "a.py"},
        ],
        "tools": [
            {"type": "function", "name": "exec_command", "parameters": {"type": "object"}},
            {"type": "web_search"},
        ],
    }
    messages, tools = wire.responses_to_chat(body)
    assert messages[0] == {"role": "system", "content": "base\n\nskills: x"}
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool"]
    assert messages[3]["tool_call_id"] == "k"
    assert [t["function"]["name"] for t in tools] == ["exec_command"]


def test_responses_stream_ends_with_completed_output_and_usage() -> None:
    events = wire.responses_events(ANSWER, "m", "resp_1")
    done = events[-1][1]["response"]
    assert done["status"] == "completed" and done["usage"]["input_tokens"] == 12
    [call] = [i for i in done["output"] if i["type"] == "function_call"]
    assert call["call_id"] == "c1" and json.loads(call["arguments"]) == {"command": "ls"}
    items = [d["item"]["type"] for n, d in events if n == "response.output_item.done"]
    assert items == ["message", "function_call"]


def test_chat_stream_sends_tool_calls_usage_and_done() -> None:
    events = wire.chat_events(ANSWER, "m", "x", usage=True)
    assert events[-1] == (None, "[DONE]")
    assert events[-2][1]["usage"]["completion_tokens"] == 3
    finish = [d["choices"][0]["finish_reason"] for _, d in events[:-2]]
    assert finish[-1] == "tool_calls"
    assert b"data: [DONE]\n\n" in wire.encode_sse(events)
    no_usage = wire.chat_events(Completion(content="hi"), "m", "x", usage=False)
    assert all("usage" not in d for _, d in no_usage[:-1])


#: A Gemini CLI request as it sends it (shapes taken from Gemini CLI 0.61.0 on loopback).
GEMINI_BODY = {
    "systemInstruction": {"parts": [{"text": "You are Gemini CLI."}]},
    "contents": [
        {
            "role": "user",
            "parts": [{"text": "<session_context>ws</session_context>"}, {"text": "fix"}],
        },
        {
            "role": "model",
            "parts": [
                {"text": "planning", "thought": True},
                {
                    "functionCall": {"id": "a1", "name": "activate_skill", "args": {"name": "s"}},
                    "thoughtSignature": "skip_thought_signature_validator",
                },
            ],
        },
        {
            "role": "user",
            "parts": [
                {
                    "functionResponse": {
                        "id": "a1",
                        "name": "activate_skill",
                        "response": {"output": "<activated_skill>body</activated_skill>"},
                    }
                }
            ],
        },
        # an older conversation shape: no ids, results paired with calls by name
        {"role": "model", "parts": [{"functionCall": {"name": "run_shell_command", "args": {}}}]},
        {
            "role": "user",
            "parts": [
                {"functionResponse": {"name": "run_shell_command", "response": {"error": "boom"}}}
            ],
        },
    ],
    "tools": [
        {
            "functionDeclarations": [
                {
                    "name": "run_shell_command",
                    "description": "run",
                    "parametersJsonSchema": {"type": "object", "required": ["command"]},
                },
                {"name": "activate_skill", "parameters": {"type": "object"}},
            ]
        }
    ],
    "generationConfig": {"temperature": 1, "thinkingConfig": {"includeThoughts": True}},
}


def test_gemini_request_becomes_chat_messages_with_calls_paired_to_their_results() -> None:
    messages, tools = wire.gemini_to_chat(GEMINI_BODY)
    roles = ["system", "user", "assistant", "tool", "assistant", "tool"]
    assert [m["role"] for m in messages] == roles
    assert messages[0]["content"] == "You are Gemini CLI."
    assert messages[1]["content"] == "<session_context>ws</session_context>\nfix"
    assert messages[2]["content"] == ""  # the thought part is dropped
    [call] = messages[2]["tool_calls"]
    assert call["id"] == "a1" and json.loads(call["function"]["arguments"]) == {"name": "s"}
    assert messages[3] == {
        "role": "tool",
        "tool_call_id": "a1",
        "content": "<activated_skill>body</activated_skill>",
    }
    unnamed = messages[4]["tool_calls"][0]["id"]
    assert messages[5] == {"role": "tool", "tool_call_id": unnamed, "content": "[tool error] boom"}
    assert [t["function"]["name"] for t in tools] == ["run_shell_command", "activate_skill"]
    assert tools[0]["function"]["parameters"] == {"type": "object", "required": ["command"]}


def test_gemini_answer_carries_text_function_calls_with_ids_and_usage() -> None:
    [(name, chunk)] = wire.gemini_events(ANSWER, "scripted", "gem_1")
    assert name is None  # the Gemini API's SSE has data lines only
    [candidate] = chunk["candidates"]
    assert candidate["content"]["role"] == "model" and candidate["finishReason"] == "STOP"
    assert candidate["content"]["parts"] == [
        {"text": "Running the check."},
        {"functionCall": {"id": "c1", "name": "Bash", "args": {"command": "ls"}}},
    ]
    assert chunk["usageMetadata"] == {
        "promptTokenCount": 12,
        "candidatesTokenCount": 3,
        "totalTokenCount": 15,
    }
    assert wire.encode_sse([(name, chunk)]).startswith(b"data: {")
    empty = wire.gemini_response(Completion(content=""), "m", "gem_2")
    assert empty["candidates"][0]["content"]["parts"] == [{"text": ""}]
    assert wire.gemini_count_tokens({"contents": GEMINI_BODY["contents"]})["totalTokens"] > 10
