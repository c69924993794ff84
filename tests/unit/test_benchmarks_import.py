"""Every benchmark script imports: they reach into flows' and runners' names, and a rename
there must fail here, not the next time someone runs a benchmark by hand."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_every_benchmark_module_imports() -> None:
    names = sorted(p.stem for p in (ROOT / "benchmarks").glob("*.py") if p.stem != "__init__")
    assert len(names) >= 20
    code = "import importlib, sys\nfor n in sys.argv[1:]:\n    importlib.import_module('benchmarks.' + n)\n"
    out = subprocess.run(
        [sys.executable, "-c", code, *names], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert out.returncode == 0, out.stderr[-2000:]
