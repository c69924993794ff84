"""--parallel N bounds the model calls in flight per route at N while more than N
model-bound trials are in flight (design 263), against a slow loopback OpenAI-compatible
endpoint; trials that queued for a call slot do not time out for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.providers.routes import ModelRoute
from skillci.runners.base import builtin_agent, plan
from skillci.runners.outcome import EvalResult
from skillci.runners.scheduler import MODEL_BOUND_ADMIT, Scheduler
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from tests.fakes.slow_endpoint import SlowEndpoint, list_files_task

KEY_ENV = "SKILLCI_TEST_SLOW_KEY"


def _route(ep: SlowEndpoint, max_concurrency: int | None) -> ModelRoute:
    return ModelRoute(
        model="openai/slow",
        api_base=ep.base_url,
        api_key_env=KEY_ENV,
        input_cost_per_token=0.0,
        output_cost_per_token=0.0,
        timeout=60,
        max_concurrency=max_concurrency,
    )


def _run(
    tmp_path: Path,
    ep: SlowEndpoint,
    *,
    parallel: int,
    trials: int,
    agent_timeout: float = 120,
    max_concurrency: int | None = None,
) -> EvalResult:
    task = load_task(
        list_files_task(tmp_path, agent_timeout=agent_timeout), purpose=Purpose.final_report
    )
    route = _route(ep, max_concurrency)
    agent = builtin_agent(f"slow/p{parallel}-{max_concurrency}", route=route, max_steps=4)
    specs = plan([task], agent, repeats=trials, state_dir=tmp_path / "state")
    return Scheduler(parallel=parallel).run(specs)


@pytest.fixture(autouse=True)
def _key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, "loopback-no-secret")


def test_calls_stay_at_parallel_while_more_trials_are_in_flight(tmp_path: Path) -> None:
    with SlowEndpoint(0.4) as ep:
        res = _run(tmp_path, ep, parallel=2, trials=8)
    assert [t.state for t in res.trials] == ["passed"] * 8
    assert [t.repeat_index for t in res.trials] == list(range(8))  # plan order kept
    assert ep.requests == 16 and all(t.model_calls == 2 for t in res.trials)
    assert ep.peak == 2  # never more calls than --parallel, and the slots were used
    assert 2 < ep.peak_open <= 2 * MODEL_BOUND_ADMIT  # more trials than calls in flight


def test_parallel_1_is_one_call_at_a_time_and_a_route_bound_wins_when_smaller(
    tmp_path: Path,
) -> None:
    with SlowEndpoint(0.2) as ep:
        one = _run(tmp_path / "p1", ep, parallel=1, trials=3)
        assert ep.peak == 1 and ep.peak_open == 1
        ep.reset_peaks()
        bounded = _run(tmp_path / "route1", ep, parallel=4, trials=4, max_concurrency=1)
    assert [t.state for t in [*one.trials, *bounded.trials]] == ["passed"] * 7
    assert ep.peak == 1  # the route's max_concurrency=1 holds at --parallel 4


def test_queueing_for_a_call_slot_is_not_the_trials_agent_time(tmp_path: Path) -> None:
    # 4 trials share 1 call slot of 1 s: the last one queues ~3 s for its first call and
    # more for its second, while its own time (2 calls, one tool) stays well under 2.5 s
    with SlowEndpoint(1.0) as ep:
        res = _run(tmp_path, ep, parallel=4, trials=4, agent_timeout=2.5, max_concurrency=1)
    assert ep.peak == 1 and ep.peak_open > 1
    assert [t.stop_reason for t in res.trials] == ["final_answer"] * 4
    assert max(t.wall_time_sec or 0 for t in res.trials) > 2.5  # it did queue past 2.5 s


def test_first_calls_at_once_leak_no_http_client() -> None:
    """litellm builds an HTTP client per route on a cache miss, unlocked: threads making a
    route's first call together each built one and the dropped ones leaked their sockets
    (7 ResourceWarnings for 8 threads, in CI a failed test). skillci's litellm shares one
    pooled session per process (providers/client.py:litellm_module)."""
    import gc
    import threading
    import warnings

    from skillci.providers.client import litellm_module

    litellm = litellm_module()
    assert litellm.client_session is not None
    with warnings.catch_warnings(record=True) as caught, SlowEndpoint(0.2) as ep:
        warnings.simplefilter("always")
        base = f"{ep.base_url}/leak-check"  # a route no earlier test made a client for

        def call() -> None:
            litellm.completion(
                model="openai/slow",
                api_base=base,
                api_key="loopback-no-secret",
                messages=[{"role": "user", "content": "hi"}],
                timeout=30,
            )

        threads = [threading.Thread(target=call) for _ in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        gc.collect()
    assert ep.requests == 8
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


def _complete(name: str, route: ModelRoute, max_retries: int = 4) -> str | None:
    from skillci.providers.client import ModelClient

    client = ModelClient(
        name, route, max_retries=max_retries, backoff_initial=0.01, backoff_max=0.02
    )
    return client.complete([{"role": "user", "content": "hi"}]).content


def test_an_http_routes_slot_is_held_for_the_exchange_only_and_given_back_on_errors() -> None:
    """After one whole call seen by the HTTP session, a route's calls hold their slot only
    during the HTTP exchange (design 280); an exchange that fails before its response gives
    the slot back (with a bound of 1, a leaked slot would hang the next call)."""
    import socket
    import threading

    from skillci.providers.client import route_limiter
    from skillci.providers.routes import resolve_route

    with SlowEndpoint(0.2) as ep:
        route = _route(ep, 1)
        limiter = route_limiter("exchange-check", 1)
        assert not limiter.at_exchange
        _complete("exchange-check", route)
        assert limiter.at_exchange and limiter.calls == 1  # learnt from the first call
        with socket.socket() as s:  # a port nobody listens on
            s.bind(("127.0.0.1", 0))
            dead = route.model_copy(
                update={"api_base": f"http://127.0.0.1:{s.getsockname()[1]}/v1"}
            )
        with pytest.raises(Exception, match="cannot connect to"):  # refused: not retried
            _complete("exchange-check", dead, max_retries=1)
        done: list[str | None] = []
        t = threading.Thread(
            target=lambda: done.append(_complete("exchange-check", route)), daemon=True
        )
        t.start()
        t.join(timeout=20)
        assert not t.is_alive() and len(done) == 1  # it was answered: the slot was free
        assert ep.requests == 2
    sim = route_limiter("sim/exchange-check", 1)
    _complete(
        "sim/exchange-check", resolve_route("sim/student").model_copy(update={"max_concurrency": 1})
    )
    assert not sim.at_exchange and sim.calls == 1  # no HTTP: held for the whole call
