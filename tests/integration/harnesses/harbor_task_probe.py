"""Run with the Python of Harbor's own venv (not skillci's): what Harbor's task loader says.

    <harbor venv>/bin/python harbor_task_probe.py TASK_DIR...

Prints one JSON document: for every task dir, whether ``harbor.models.task.task.Task``
loads it (and why not), and the field names of each of Harbor's task config models, so
skillci's contract test can check both directions. Imports only Harbor and the standard
library; it is data for the test, not part of skillci.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path


def main(argv: list[str]) -> int:
    from harbor.models.task import config as hc
    from harbor.models.task.task import Task

    warnings.simplefilter("ignore")
    tasks = {}
    for arg in argv:
        try:
            Task(Path(arg))
            tasks[arg] = {"accepted": True, "error": None}
        except Exception as exc:  # any refusal is data here
            tasks[arg] = {"accepted": False, "error": f"{type(exc).__name__}: {exc}"[:300]}
    models = {
        name: sorted(getattr(hc, name).model_fields)
        for name in (
            "TaskConfig",
            "EnvironmentConfig",
            "VerifierConfig",
            "AgentConfig",
            "SolutionConfig",
            "PackageInfo",
            "HealthcheckConfig",
            "TpuSpec",
            "MCPServerConfig",
            "ArtifactConfig",
            "VerifierCollectConfig",
            "StepConfig",
        )
        if hasattr(hc, name)
    }
    json.dump({"tasks": tasks, "models": models}, sys.stdout)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
