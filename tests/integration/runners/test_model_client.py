"""Model calls against a loopback OpenAI-compatible server (the network boundary), each
test both ways such a route can go: straight over HTTP (the default, design 282) and
through litellm (``"client": "litellm"``) — the two must behave alike."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from skillci.agents.base import AgentContext
from skillci.agents.loop import BuiltinAgent, LoopLimits
from skillci.errors import BudgetExceeded, ContextWindowExceeded, ModelError
from skillci.providers.budget import Budget, BudgetMeter
from skillci.providers.cache import ResponseCache
from skillci.providers.client import ModelClient
from skillci.providers.openai_compat import goes_direct
from skillci.providers.routes import ModelRoute, resolve_route
from skillci.runners.sandbox import Mount, make_shell

KEY = "sk-loopback-0123456789abcdef"


def _reply(content: str | None = None, calls: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {"role": "assistant", "content": content}
    if calls:
        msg["tool_calls"] = [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": c["name"], "arguments": json.dumps(c["args"])},
            }
            for i, c in enumerate(calls)
        ]
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 1,
        "model": "fake",
        "choices": [
            {"index": 0, "message": msg, "finish_reason": "tool_calls" if calls else "stop"}
        ],
        "usage": {"prompt_tokens": 120, "completion_tokens": 7, "total_tokens": 127},
    }


class Scripted:
    """Answers (status, body) pairs in order; the last repeats. Records headers and bodies."""

    def __init__(self, script: list[tuple[int, dict[str, Any]]], client: str = "auto") -> None:
        self.script = script
        self.client = client
        self.seen: list[tuple[dict[str, str], dict[str, Any]]] = []
        self.times: list[float] = []
        self.retry_after: str | None = None  # sent with every error answer when set
        self.delay = 0.0
        self.in_flight = self.peak = 0
        self.lock = threading.Lock()
        fake = self

        class H(BaseHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                return

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                with fake.lock:
                    fake.seen.append(({k.lower(): v for k, v in self.headers.items()}, body))
                    fake.times.append(time.monotonic())
                    status, payload = fake.script[min(len(fake.seen), len(fake.script)) - 1]
                    fake.in_flight += 1
                    fake.peak = max(fake.peak, fake.in_flight)
                time.sleep(fake.delay)
                with fake.lock:
                    fake.in_flight -= 1
                data = json.dumps(payload).encode()
                self.send_response(status)
                if status >= 400 and fake.retry_after is not None:
                    self.send_header("Retry-After", fake.retry_after)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), H)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def route(self) -> ModelRoute:
        return ModelRoute(
            model="openai/fake",
            api_base=f"http://127.0.0.1:{self.server.server_address[1]}/v1",
            api_key_env="LOOPBACK_KEY",
            input_cost_per_token=1e-6,
            output_cost_per_token=2e-6,
            timeout=10,
            temperature=0.0,
            client=self.client,
        )

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


ERR = {"error": {"message": "slow down", "type": "rate_limit", "code": 429}}


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOOPBACK_KEY", KEY)


@pytest.fixture(params=["auto", "litellm"], ids=["direct", "litellm"])
def server(request: pytest.FixtureRequest) -> Iterator[Scripted]:
    s = Scripted([(200, _reply("hi"))], client=request.param)
    yield s
    s.close()


@pytest.mark.usefixtures("key")
def test_transient_errors_are_retried_then_the_answer_parsed(server: Scripted) -> None:
    server.script = [
        (429, ERR),
        (503, ERR),
        (200, _reply(calls=[{"name": "run", "args": {"command": "ls"}}])),
    ]
    client = ModelClient(
        "fake", server.route, max_retries=3, backoff_initial=0.01, backoff_max=0.05
    )
    c = client.complete([{"role": "user", "content": "go"}], seed=7)
    assert len(server.seen) == 3
    assert c.tool_calls[0].name == "run" and c.tool_calls[0].arguments == {"command": "ls"}
    assert (c.input_tokens, c.output_tokens) == (120, 7)
    assert c.usd == pytest.approx(120e-6 + 14e-6)
    headers, body = server.seen[-1]
    assert headers["authorization"] == f"Bearer {KEY}"
    assert body["seed"] == 7 and body["temperature"] == 0.0


@pytest.mark.usefixtures("key")
def test_a_retry_after_header_is_waited_for_not_the_backoff(server: Scripted) -> None:
    server.script = [(429, ERR), (200, _reply("ok"))]
    server.retry_after = "1"
    client = ModelClient("fake", server.route, max_retries=2, backoff_initial=0.01)
    assert client.complete([{"role": "user", "content": "go"}]).content == "ok"
    assert len(server.times) == 2
    assert server.times[1] - server.times[0] >= 0.95  # the backoff alone is ~0.01-0.02 s


@pytest.mark.usefixtures("key")
@pytest.mark.parametrize("limit", [1, None])
def test_a_route_bounds_its_calls_in_flight(server: Scripted, limit: int | None) -> None:
    server.delay = 0.6
    route = server.route.model_copy(update={"max_concurrency": limit})
    name = f"fake-limit-{limit}"  # one limiter per (route name, limit) in this process
    threads = [
        threading.Thread(
            target=lambda: ModelClient(name, route).complete([{"role": "user", "content": "go"}])
        )
        for _ in range(4)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(server.seen) == 4
    assert server.peak == 1 if limit == 1 else server.peak >= 2  # unbounded: they overlap


@pytest.mark.usefixtures("key")
def test_giving_up_and_non_transient_errors_are_model_errors(server: Scripted) -> None:
    server.script = [(429, ERR)]
    with pytest.raises(ModelError, match="gave up after 2 attempts"):
        ModelClient("fake", server.route, max_retries=1, backoff_initial=0.01).complete(
            [{"role": "user", "content": "x"}]
        )
    server.seen.clear()
    server.script = [(400, {"error": {"message": "bad request", "type": "invalid_request_error"}})]
    with pytest.raises(ModelError):
        ModelClient("fake", server.route, max_retries=3, backoff_initial=0.01).complete(
            [{"role": "user", "content": "x"}]
        )
    assert len(server.seen) == 1


def test_a_missing_key_fails_before_any_request(
    server: Scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LOOPBACK_KEY", raising=False)
    with pytest.raises(ModelError, match=r"\$LOOPBACK_KEY is not set"):
        ModelClient("fake", server.route).complete([{"role": "user", "content": "x"}])
    assert server.seen == []


def test_the_key_may_come_from_the_model_keys_secret(
    server: Scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reusable workflows pass one environment secret, SKILLCI_MODEL_KEYS (NAME=value
    lines); a route's api_key_env is looked up there when the variable itself is unset."""
    monkeypatch.delenv("LOOPBACK_KEY", raising=False)
    monkeypatch.setenv(
        "SKILLCI_MODEL_KEYS", f"# keys\nOTHER_KEY=nope\nexport LOOPBACK_KEY='{KEY}'\n"
    )
    ModelClient("fake", server.route).complete([{"role": "user", "content": "x"}])
    headers, _ = server.seen[-1]
    assert headers["authorization"] == f"Bearer {KEY}"


@pytest.mark.usefixtures("key")
def test_cache_and_budget(server: Scripted, tmp_path: Path) -> None:
    meter = BudgetMeter(Budget(max_calls=1))
    cache = ResponseCache(tmp_path)
    client = ModelClient("fake", server.route, meter=meter, cache=cache, use_cache=True)
    msgs = [{"role": "user", "content": "same"}]
    first, second = client.complete(msgs), client.complete(msgs)
    assert not first.cached and second.cached and second.content == "hi"
    assert len(server.seen) == 1 and meter.spent.cached_calls == 1
    assert KEY not in "".join(p.read_text() for p in tmp_path.rglob("*.json"))
    with pytest.raises(BudgetExceeded, match="max_calls=1"):
        client.complete([{"role": "user", "content": "different"}])
    assert len(server.seen) == 1


@pytest.mark.usefixtures("key")
def test_the_agent_loop_over_a_real_http_model(server: Scripted, tmp_path: Path) -> None:
    server.script = [
        (
            200,
            _reply(
                calls=[{"name": "run", "args": {"command": "echo hello > out.txt; cat out.txt"}}]
            ),
        ),
        (200, _reply("done: wrote out.txt")),
    ]
    ws = tmp_path / "ws"
    ws.mkdir()
    shell, _ = make_shell([Mount(ws, "/app", True)])
    agent = BuiltinAgent(ModelClient("fake", server.route), limits=LoopLimits(max_steps=5))
    res = agent.run(
        AgentContext(
            task_id="t",
            instruction="write hello",
            workspace=ws,
            shell=shell,
            skill=None,
            seed=0,
            deadline=time.monotonic() + 60,
        )
    )
    assert res.final_output == "done: wrote out.txt" and res.stop_reason == "final_answer"
    assert (ws / "out.txt").read_text() == "hello\n"
    result = next(e for e in res.events if e.kind == "tool_result")
    assert result.exit_code == 0 and "hello" in result.output
    assert (res.cost.input_tokens, res.cost.output_tokens, res.cost.model_calls) == (240, 14, 2)
    tools_sent = {t["function"]["name"] for t in server.seen[0][1]["tools"]}
    assert "run" in tools_sent and "load_skill_file" not in tools_sent


def test_per_run_budget_stops_the_sim_agent_cleanly(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "ci.log").write_text("FAILED tests/test_x.py::test_y - assert 1 == 2\n")
    shell, _ = make_shell([Mount(ws, "/app", True)])
    client = ModelClient(
        "sim/student", resolve_route("sim/student"), meter=BudgetMeter(Budget(max_calls=3))
    )
    res = BuiltinAgent(client).run(
        AgentContext(
            task_id="t",
            instruction="CI failed; the log is in `ci.log`.",
            workspace=ws,
            shell=shell,
            skill=None,
            seed=0,
            deadline=time.monotonic() + 60,
        )
    )
    assert res.stop_reason == "budget: run budget: 3 model calls reached max_calls=3"
    assert res.cost.model_calls == 3
    assert res.events[-1].kind == "error"


def test_a_context_overflow_stops_the_agent_with_its_reason(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    shell, _ = make_shell([Mount(ws, "/app", True)])
    route = ModelRoute(model="sim/student", params={"extra_body": {"context_window": 50}})
    res = BuiltinAgent(ModelClient("sim/tiny", route)).run(
        AgentContext(
            task_id="t",
            instruction="CI failed; the log is in `ci.log`. " * 20,
            workspace=ws,
            shell=shell,
            skill=None,
            seed=0,
            deadline=time.monotonic() + 60,
        )
    )
    assert res.stop_reason == "context_window_exceeded"
    err = res.events[-1]
    assert err.kind == "error" and "accepts 50" in err.message


@pytest.mark.usefixtures("key")
def test_the_direct_request_is_the_one_litellm_sends() -> None:
    """Same route, both clients: the server receives the same JSON body (model without its
    openai/ prefix, tools, seed, sampling params, extra_body merged) and the same key."""
    tools: list[Any] = [
        {"type": "function", "function": {"name": "run", "description": "d", "parameters": {}}}
    ]
    seen = {}
    for client in ("auto", "litellm"):
        s = Scripted([(200, _reply("hi"))], client=client)
        route = s.route.model_copy(
            update={"max_tokens": 64, "params": {"top_p": 0.9, "extra_body": {"top_k": 20}}}
        )
        ModelClient(f"same-{client}", route).complete(
            [{"role": "user", "content": "go"}], tools, seed=3
        )
        s.close()
        seen[client] = s.seen[-1]
    assert seen["auto"][1] == seen["litellm"][1]
    assert seen["auto"][1]["model"] == "fake" and seen["auto"][1]["top_k"] == 20
    assert seen["auto"][0]["authorization"] == seen["litellm"][0]["authorization"]


@pytest.mark.usefixtures("key")
def test_a_context_overflow_from_the_server_is_context_window_exceeded(server: Scripted) -> None:
    server.script = [
        (
            400,
            {
                "error": {
                    "message": "This model's maximum context length is 4096 tokens. However, "
                    "you requested 5000 tokens.",
                    "type": "BadRequestError",
                    "code": 400,
                }
            },
        )
    ]
    with pytest.raises(ContextWindowExceeded):
        ModelClient(f"ctx-{server.client}", server.route, backoff_initial=0.01).complete(
            [{"role": "user", "content": "x"}]
        )
    assert len(server.seen) == 1  # not retried


@pytest.mark.usefixtures("key")
def test_a_server_that_answers_no_chat_completion_is_a_clear_error() -> None:
    s = Scripted([(200, {"detail": "Not Found"})])
    try:
        with pytest.raises(ModelError, match="without a chat completion") as err:
            ModelClient("not-chat", s.route).complete([{"role": "user", "content": "x"}])
    finally:
        s.close()
    assert "/v1" in (err.value.hint or "")


@pytest.mark.parametrize("base", ["127.0.0.1:8000/v1", "ftp://127.0.0.1/v1", "http://[::1/v1"])
def test_an_unusable_api_base_is_one_clear_error_not_retried(base: str) -> None:
    route = ModelRoute(model="openai/m", api_base=base, timeout=5)
    start = time.monotonic()
    with pytest.raises(ModelError, match="not a usable URL") as err:
        ModelClient(f"bad-{base}", route, backoff_initial=5).complete(
            [{"role": "user", "content": "x"}]
        )
    assert time.monotonic() - start < 4.5  # a retry would have waited 5 s or more first
    assert "http://127.0.0.1:8000/v1" in (err.value.hint or "")


def test_which_routes_go_direct() -> None:
    base = ModelRoute(model="openai/m", api_base="http://127.0.0.1:1/v1")
    assert goes_direct(base)
    assert goes_direct(base.model_copy(update={"params": {"top_p": 0.5, "extra_body": {}}}))
    assert not goes_direct(base.model_copy(update={"client": "litellm"}))
    assert not goes_direct(base.model_copy(update={"api_base": None}))  # api.openai.com
    assert not goes_direct(base.model_copy(update={"model": "anthropic/claude"}))
    assert not goes_direct(base.model_copy(update={"params": {"extra_headers": {"x": "1"}}}))
    assert not goes_direct(resolve_route("sim/student"))


@pytest.mark.usefixtures("key")
def test_a_direct_route_never_imports_litellm(tmp_path: Path) -> None:
    """litellm costs seconds to import; a command whose routes all go direct never pays it
    (a fresh interpreter, so nothing else imported it first)."""
    server = Scripted([(200, _reply("hi"))])
    script = tmp_path / "call.py"
    script.write_text(
        "import sys\n"
        "from skillci.providers.client import ModelClient\n"
        "from skillci.providers.routes import ModelRoute\n"
        f"route = ModelRoute.model_validate_json({server.route.model_dump_json()!r})\n"
        "c = ModelClient('fresh', route).complete([{'role': 'user', 'content': 'x'}])\n"
        "print(c.content, round(c.usd, 9), 'litellm' in sys.modules)\n"
    )
    try:
        out = subprocess.run(
            [sys.executable, str(script)], capture_output=True, text=True, timeout=120, check=True
        )
    finally:
        server.close()
    assert out.stdout.split() == ["hi", "0.000134", "False"]
