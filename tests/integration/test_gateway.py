"""The loopback model gateway real agents talk to: each wire format in and out, over real
HTTP, onto a route served by the loopback OpenAI-compatible fake."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from skillci.providers.client import ModelClient
from skillci.providers.gateway import Gateway
from skillci.providers.routes import ModelRoute
from tests.fakes.openai_server import FakeOpenAI

KEY = "route-key-kept-by-the-gateway"


@pytest.fixture
def gateway(monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[Gateway, FakeOpenAI]]:
    monkeypatch.setenv("SKILLCI_GW_TEST_KEY", KEY)
    with FakeOpenAI([[("Bash", {"command": "ls"})], "all done"]) as fake:
        route = ModelRoute(
            model="openai/fake",
            api_base=fake.base_url,
            api_key_env="SKILLCI_GW_TEST_KEY",
            timeout=10,
            input_cost_per_token=0.0,
            output_cost_per_token=0.0,
        )
        with Gateway(ModelClient("fake", route)) as gw:
            yield gw, fake


def sse(text: str) -> list[Any]:
    return [
        json.loads(line[6:])
        for line in text.splitlines()
        if line.startswith("data: ") and line != "data: [DONE]"
    ]


def test_anthropic_stream_in_route_call_out_and_recorded(
    gateway: tuple[Gateway, FakeOpenAI],
) -> None:
    gw, fake = gateway
    body = {
        "model": "claude-x",
        "stream": True,
        "max_tokens": 100,
        "system": "sys",
        "messages": [{"role": "user", "content": "fix"}],
        "tools": [{"name": "Bash", "input_schema": {"type": "object"}}],
    }
    r = httpx.post(
        f"{gw.base_url}/v1/messages?beta=true", json=body, headers={"x-api-key": gw.token}
    )
    assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
    data = sse(r.text)
    [tool] = [d["content_block"] for d in data if d["type"] == "content_block_start"]
    assert tool["name"] == "Bash"
    # the route got chat messages
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": "sys"}
    [call] = gw.calls
    assert call.api == "anthropic" and call.tool_calls == ["Bash"] and call.input_tokens == 100


def test_responses_and_chat_formats(gateway: tuple[Gateway, FakeOpenAI]) -> None:
    gw, _ = gateway
    auth = {"Authorization": f"Bearer {gw.token}"}
    body = {"model": "m", "stream": True, "input": "fix", "tools": []}
    data = sse(httpx.post(f"{gw.base_url}/v1/responses", json=body, headers=auth).text)
    assert data[-1]["type"] == "response.completed"
    assert data[-1]["response"]["output"][0]["name"] == "Bash"
    chat = {"model": "m", "stream": False, "messages": [{"role": "user", "content": "go"}]}
    out = httpx.post(f"{gw.base_url}/v1/chat/completions", json=chat, headers=auth).json()
    assert out["choices"][0]["message"]["content"] == "all done"
    assert [c.api for c in gw.calls] == ["responses", "chat"]


def test_a_wrong_token_is_refused_and_not_forwarded(gateway: tuple[Gateway, FakeOpenAI]) -> None:
    gw, fake = gateway
    r = httpx.post(f"{gw.base_url}/v1/messages", json={}, headers={"x-api-key": KEY})
    assert r.status_code == 401 and fake.requests == [] and gw.calls == []


def test_an_unreachable_route_is_a_fatal_non_retryable_error() -> None:
    route = ModelRoute(model="openai/gone", api_base="http://127.0.0.1:9/v1", timeout=1)
    with Gateway(ModelClient("gone", route, max_retries=0)) as gw:
        body = {"model": "m", "messages": [{"role": "user", "content": "x"}]}
        r = httpx.post(
            f"{gw.base_url}/v1/chat/completions",
            json=body,
            headers={"Authorization": f"Bearer {gw.token}"},
        )
        assert r.status_code == 400 and "skillci gateway" in r.json()["error"]["message"]
        assert gw.fatal_event.is_set() and gw.calls[0].error is not None


def test_the_gateway_stops_at_once_not_at_its_next_poll() -> None:
    """Stopping wakes the server thread through a pipe: serve_forever's shutdown waited up to
    0.5 s for its next poll, a third of a real agent's trial overhead (docs/design/424).
    Three stops of an idle gateway took ~0.75 s together that way; only the stops are
    timed here, not the requests around them."""
    route = ModelRoute(model="openai/none", api_base="http://127.0.0.1:9/v1", timeout=1)
    stopping = 0.0
    for _ in range(3):
        gw = Gateway(ModelClient("none", route))
        with gw:
            assert httpx.get(f"{gw.base_url}/v1/models").status_code == 200
            time.sleep(0.05)  # idle: the old server sat in its 0.5 s poll
            start = time.monotonic()
        stopping += time.monotonic() - start
        with pytest.raises(httpx.ConnectError):  # closed: nothing listens on its port now
            httpx.get(f"{gw.base_url}/v1/models")
    assert stopping < 0.3


def test_gemini_stream_in_route_call_out_and_recorded(
    gateway: tuple[Gateway, FakeOpenAI],
) -> None:
    """Gemini CLI's call: the model in the path, its key in ``x-goog-api-key``."""
    gw, fake = gateway
    body = {
        "systemInstruction": {"parts": [{"text": "sys"}]},
        "contents": [{"role": "user", "parts": [{"text": "fix"}]}],
        "tools": [{"functionDeclarations": [{"name": "Bash", "parametersJsonSchema": {}}]}],
    }
    url = f"{gw.base_url}/v1beta/models/gemini-x:streamGenerateContent?alt=sse"
    r = httpx.post(url, json=body, headers={"x-goog-api-key": gw.token})
    assert r.status_code == 200 and r.headers["content-type"] == "text/event-stream"
    [chunk] = sse(r.text)
    [part] = chunk["candidates"][0]["content"]["parts"]
    assert part["functionCall"]["name"] == "Bash" and part["functionCall"]["args"] == {
        "command": "ls"
    }
    assert fake.requests[0]["messages"][0] == {"role": "system", "content": "sys"}
    assert fake.requests[0]["tools"][0]["function"]["name"] == "Bash"
    # the non-streaming method and countTokens (answered here, not by the route)
    url = f"{gw.base_url}/v1beta/models/gemini-x:generateContent"
    out = httpx.post(url, json=body, headers={"x-goog-api-key": gw.token}).json()
    assert out["candidates"][0]["content"]["parts"] == [{"text": "all done"}]
    url = f"{gw.base_url}/v1beta/models/gemini-x:countTokens"
    count = httpx.post(url, json=body, headers={"x-goog-api-key": gw.token}).json()
    assert count["totalTokens"] >= 1
    assert [(c.api, c.model, c.tool_calls) for c in gw.calls] == [
        ("gemini", "gemini-x", ["Bash"]),
        ("gemini", "gemini-x", []),
    ]
    assert len(fake.requests) == 2  # countTokens did not reach the route
    r = httpx.post(url, json=body, headers={"x-goog-api-key": KEY})  # the route's key: refused
    assert r.status_code == 401


def test_a_gemini_call_the_route_cannot_answer_is_the_gemini_apis_400() -> None:
    route = ModelRoute(model="openai/gone", api_base="http://127.0.0.1:9/v1", timeout=1)
    with Gateway(ModelClient("gone", route, max_retries=0)) as gw:
        body = {"contents": [{"role": "user", "parts": [{"text": "x"}]}]}
        url = f"{gw.base_url}/v1beta/models/m:streamGenerateContent?alt=sse"
        r = httpx.post(url, json=body, headers={"x-goog-api-key": gw.token})
        assert r.status_code == 400
        error = r.json()["error"]
        assert error["status"] == "INVALID_ARGUMENT" and "skillci gateway" in error["message"]
        assert gw.fatal_event.is_set() and gw.calls[0].api == "gemini"
