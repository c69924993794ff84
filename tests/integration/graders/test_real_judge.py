"""A real small model as the rubric judge: SmolLM2-135M on llama.cpp (the server fixture
of tests/integration/runners/test_real_model.py) calibrated on the graded fixture's
human-labelled examples.

Its verdicts are whatever a 135M model says; the point is the path: every example is a
real call through the route (tokens counted by the server), the calls are cached (the
second calibration calls nothing), and the calibration report says whether the judge is
fit — the exit code agreeing with it — so no gate would lean on an unfit judge.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from skillci.cli.main import main
from tests.integration.runners.test_real_model import server, use_smollm2  # noqa: F401

pytestmark = [pytest.mark.slow, pytest.mark.llama_server, pytest.mark.timeout(900)]
FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "graded-tasks"


def test_smollm2_as_judge_runs_costs_caches_and_is_judged_by_its_calibration(
    server: str,  # noqa: F811 - the imported fixture
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    use_smollm2(
        tmp_path,
        monkeypatch,
        server,
        max_tokens=48,
        input_cost_per_token=1e-7,
        output_cost_per_token=2e-7,
    )
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    repo = tmp_path / "r"
    shutil.copytree(FIXTURE, repo)
    argv = ["judge", "calibrate", "--suite", "plans-strict", "--judge", "local/smollm2"]
    argv += ["--repo", str(repo), "--json"]

    rc = main(argv)
    out, err = capsys.readouterr()
    report = json.loads(out)
    # it ran: one real call per labelled example, tokens and dollars counted
    usage = report["usage"]
    assert usage["model_calls"] == report["agreement"]["n"] == 12, err
    assert usage["cached_calls"] == 0
    assert usage["input_tokens"] > 12 * 50 and usage["usd"] > 0
    # its verdicts are what they are; the report judges them, and the exit code agrees
    fit = report["fit"]
    assert rc == (0 if fit["fit"] else 1)
    assert not fit["fit"], fit  # a 135M model is no judge: the report must say so
    assert "kappa" in fit["reason"] and "the suite needs kappa >= 0.6" in fit["reason"]
    # cached: the same calibration again calls nothing and reports the same figures
    assert main(argv) == rc
    again = json.loads(capsys.readouterr().out)
    assert again["usage"]["cached_calls"] == again["usage"]["model_calls"] == 12
    assert again["usage"]["input_tokens"] == 0
    assert again["agreement"] == report["agreement"] and again["fit"] == fit
