"""Harbor's own ATIF model (in its venv: marker ``harness_venvs``) accepts what
``skillci trace export --format atif`` writes: every corpus trajectory after import → export,
a Claude Code session, and a trial skillci ran itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from skillci.trace.atif import to_atif
from skillci.trace.importers import harbor as hb_importer
from skillci.trace.importers.claude_code import import_session
from skillci.trace.models import RunRecord
from tests.integration.importers.test_claude_code_session import write

HERE = Path(__file__).parent
CORPUS = HERE.parents[1] / "fixtures" / "harness-results" / "harbor"


def test_harbor_validates_every_exported_trajectory(harbor: str, tmp_path: Path) -> None:
    written: dict[str, str] = {}
    for n, trial in enumerate(hb_importer.find_trials(CORPUS)):
        rec = hb_importer.import_trial(trial)
        if rec.atif is None:
            continue
        path = tmp_path / f"{n}.json"
        path.write_text(json.dumps(to_atif(rec)))
        written[str(path)] = trial.name
    native = RunRecord.model_validate(
        {
            "run_id": "run-1",
            "task_id": "t",
            "agent_role": "student",
            "model": {"route": "sim/student", "name": "sim"},
            "runtime": {"harness": "skillci-agent"},
            "evaluation": {"state": "failed"},
            "events": [
                {"step": 0, "kind": "message", "role": "system", "content": "rules"},
                {"step": 1, "kind": "message", "role": "user", "content": "fix it"},
                {"step": 2, "kind": "tool_call", "tool": "run", "call_id": "c1",
                 "arguments": {"command": "ls"}},
                {"step": 3, "kind": "tool_result", "call_id": "c1", "output": "a.py"},
                {"step": 4, "kind": "skill_load", "path": "SKILL.md"},
                {"step": 5, "kind": "error", "error_type": "BudgetExceeded", "message": "stop"},
            ],
        }
    )  # fmt: skip
    for name, rec in (("claude-code", import_session(write(tmp_path / "cc"))), ("native", native)):
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(to_atif(rec)))
        written[str(path)] = name
    assert len(written) >= 43
    python = Path(harbor).parent / "python"
    proc = subprocess.run(
        [str(python), str(HERE / "harbor_atif_probe.py"), *written],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    report = json.loads(proc.stdout)
    refused = {written[p]: why for p, why in report["verdicts"].items() if why is not None}
    assert refused == {}
