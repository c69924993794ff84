"""A failed measurement is never a failed skill (issue 28, docs/design/300-302).

``skillci eval run`` as a user runs it (a subprocess, a real trial cache and trace store)
against a route that cannot work — no API key, a refused port, a 401 from the loopback
OpenAI-compatible server — and the simulator on a task it does not model: every trial ends
``infra_error`` without running the verifier, the command exits 4 with the first cause on
one line, nothing is cached, and a later run that can reach the model calls it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from skillci.errors import ModelError
from skillci.providers import health
from skillci.providers.client import ModelClient
from skillci.providers.routes import ModelRoute
from skillci.trace.models import RunRecord
from tests.fakes.openai_server import FAKE_KEY_ENV, FakeOpenAI

from .helpers import TASKS

TASK = TASKS / "py-cache-expiry"


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])  # closed again on exit: connecting is refused


def _routes(tmp_path: Path, api_base: str) -> Path:
    path = tmp_path / "provider_routes.json"
    route = {"model": "openai/fake-student", "api_base": api_base, "api_key_env": FAKE_KEY_ENV}
    path.write_text(json.dumps({"schema_version": 1, "routes": {"fake/student": route}}))
    return path


def _eval(
    tmp_path: Path, *args: str, routes: Path | None = None, key: bool = True
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    env = {k: v for k, v in os.environ.items() if k != FAKE_KEY_ENV}
    env["COLUMNS"] = "300"
    if routes is not None:
        env["SKILLCI_PROVIDER_ROUTES"] = str(routes)
    if key:
        env[FAKE_KEY_ENV] = "not-a-secret"
    cmd = [sys.executable, "-m", "skillci", "eval", "run", "--home", str(tmp_path / "home")]
    cmd += ["--max-steps", "3", "--json", *args]
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600, check=False)
    try:
        result = json.loads(done.stdout)
    except json.JSONDecodeError:
        pytest.fail(f"no JSON (exit {done.returncode}): {done.stdout[-800:]} {done.stderr[-1500:]}")
    return done, result


def _record(trial: dict[str, Any]) -> RunRecord:
    return RunRecord.model_validate_json((Path(trial["trial_dir"]) / "record.json").read_text())


def _assert_error_trials(done: subprocess.CompletedProcess[str], result: dict[str, Any]) -> None:
    assert done.returncode == 4, done.stderr
    errors = [ln for ln in done.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, done.stderr
    assert "measured nothing" in errors[0]
    assert result["errors"] == len(result["trials"]) > 0
    for t in result["trials"]:
        assert t["state"] == "infra_error"
        assert not t["passed"]
        assert t["error"].startswith("model error:")
        rec = _record(t)
        assert rec.stop_reason == "model_error"
        assert rec.evaluation.verifier_exit_code is None  # the verifier never ran
        assert not (Path(t["trial_dir"]) / "logs" / "verifier" / "reward.txt").exists()
        assert not (Path(t["trial_dir"]) / "regrade.json").exists()  # no verdict to regrade
    assert result["tasks"][0]["pass_rate"] is None  # not counted: no verdict at all


@pytest.mark.slow  # > 20 s: five `eval run` commands, 120 s on 2 busy cores (2026-12-03)
def test_no_key_is_an_error_not_cached_and_a_run_with_the_key_calls_the_model(
    tmp_path: Path,
) -> None:
    with FakeOpenAI(["I changed nothing."]) as server:
        routes = _routes(tmp_path, server.base_url)
        args = ("--task", str(TASK), "--model", "fake/student", "--repeat", "2")
        done, result = _eval(tmp_path, *args, routes=routes, key=False)
        _assert_error_trials(done, result)
        assert f"${FAKE_KEY_ENV} is not set" in done.stderr
        assert server.requests == []
        cmd = [sys.executable, "-m", "skillci", "eval", "run", "--home", str(tmp_path / "home")]
        dry = subprocess.run(
            [*cmd, *args, "--dry-run", "--json"],
            capture_output=True,
            text=True,
            env={**os.environ, "SKILLCI_PROVIDER_ROUTES": str(routes)},
            check=True,
        )
        assert [r["cached"] for r in json.loads(dry.stdout)] == [False, False]

        done, result = _eval(tmp_path, *args, routes=routes, key=True)
        assert done.returncode == 0, done.stderr
        assert result["cached"] == 0 and result["ran"] == 2 and result["errors"] == 0
        assert [t["state"] for t in result["trials"]] == ["failed", "failed"]
        assert len(server.requests) == 2  # one final answer per trial

        # complete trials are reused; --rerun all runs them again
        done, result = _eval(tmp_path, *args, routes=routes)
        assert (result["cached"], result["ran"]) == (2, 0)
        done, result = _eval(tmp_path, *args, "--rerun", "all", routes=routes)
        assert (result["cached"], result["ran"]) == (0, 2)
        assert len(server.requests) == 4


def test_a_refused_port_fails_fast_once_per_route(tmp_path: Path) -> None:
    routes = _routes(tmp_path, f"http://127.0.0.1:{_closed_port()}/v1")
    args = ("--task", str(TASK), "--model", "fake/student", "--repeat", "3")
    done, result = _eval(tmp_path, *args, routes=routes)
    _assert_error_trials(done, result)
    assert "cannot connect to" in done.stderr
    for t in result["trials"]:
        rec = _record(t)
        kinds = [e.error_type for e in rec.events if e.kind == "error"]  # type: ignore[union-attr]
        assert kinds == ["ModelError"]  # no retry of a refused connection
        # it took 17 s through the backoff before; now one refused connect at most
        assert rec.cost.wall_time_sec < 5, rec.cost.wall_time_sec


@pytest.mark.slow  # > 20 s: two `eval run` commands, 38 s on 2 busy cores (2026-12-03)
def test_a_401_is_an_error_asked_once_per_command_and_never_cached(tmp_path: Path) -> None:
    with FakeOpenAI(["unused"], status=401) as server:
        routes = _routes(tmp_path, server.base_url)
        args = ("--task", str(TASK), "--model", "fake/student", "--repeat", "3")
        done, result = _eval(tmp_path, *args, routes=routes)
        _assert_error_trials(done, result)
        assert "HTTP 401" in done.stderr
        assert len(server.requests) == 1  # the route is down for the rest of the command
        done, result = _eval(tmp_path, *args, routes=routes)
        _assert_error_trials(done, result)
        assert result["cached"] == 0
        assert len(server.requests) == 2  # retried by the next command


def _scratch_task(root: Path) -> Path:
    """A task the simulator does not model: write a CSV report (no CI log, no check)."""
    task = root / "csv-report"
    (task / "environment").mkdir(parents=True)
    (task / "tests").mkdir()
    (task / "environment" / "sales.csv").write_text("region,amount\nnorth,3\nsouth,4\n")
    (task / "instruction.md").write_text(
        "Write report.csv with the total amount per region from sales.csv.\n"
    )
    (task / "task.toml").write_text(
        'version = "1.0"\n\n[verifier]\ntimeout_sec = 60\n\n[agent]\ntimeout_sec = 120\n'
    )
    (task / "tests" / "test.sh").write_text(
        "#!/usr/bin/env bash\nmkdir -p /logs/verifier\ntouch /logs/verifier/ran\n"
        "test -f report.csv && echo 1 > /logs/verifier/reward.txt "
        "|| echo 0 > /logs/verifier/reward.txt\n"
    )
    return task


@pytest.mark.slow  # > 20 s: imports litellm (the simulator's path), ~25-40 s on 2 busy cores
def test_sim_student_on_a_task_it_does_not_model_is_an_error(tmp_path: Path) -> None:
    task = _scratch_task(tmp_path)
    done, result = _eval(tmp_path, "--task", str(task), "--model", "sim/student")
    assert done.returncode == 4, done.stderr
    assert "sim/student models only the bundled repair tasks" in done.stderr
    assert "docs/models.md" in done.stderr
    (trial,) = result["trials"]
    assert trial["state"] == "infra_error"
    assert not (Path(trial["trial_dir"]) / "logs" / "verifier" / "ran").exists()
    rec = _record(trial)
    assert rec.stop_reason == "model_error"


def test_model_retries_stop_at_the_trial_time_limit_and_each_is_recorded() -> None:
    health.reset()
    with FakeOpenAI(["unused"], status=503) as server:
        route = ModelRoute(model="openai/fake-student", api_base=server.base_url, timeout=30)
        client = ModelClient("fake/busy", route, max_retries=50, backoff_initial=0.2)
        seen: list[str] = []
        deadline = time.monotonic() + 5.0
        start = time.monotonic()
        with pytest.raises(ModelError, match="the trial's time limit") as err:
            client.complete(
                [{"role": "user", "content": "hi"}],
                time_left=lambda: deadline - time.monotonic(),
                on_retry=seen.append,
            )
        assert time.monotonic() - start < 6.5  # 50 retries allowed, the trial's 5 s decide
        assert len(server.requests) == len(seen) + 1 >= 2
        assert all("HTTP 503" in line and "retrying in" in line for line in seen)
        assert f"after {len(server.requests)} attempts" in err.value.message
    # a 503 is transient: it does not mark the route down
    health.check("fake/busy", route.fingerprint())
