"""``skillci bench`` on the bundled suite: the table in docs/bench.md is the one it prints."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.flows.bench import ARMS
from tests.conftest import ROOT

DOC = ROOT / "docs" / "bench.md"


@pytest.mark.slow  # ~66 sim trials (18 references, 48 for the generated baselines)
def test_bench_table_matches_the_docs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    home = tmp_path / "home"
    argv = ["bench", "--repo", str(ROOT), "--home", str(home), "--parallel", "1"]
    assert main([*argv, "--markdown"]) == 0
    table = capsys.readouterr().out
    doc = DOC.read_text()
    m = re.search(r"<!-- bench:begin -->\n(.*)<!-- bench:end -->", doc, re.S)
    assert m is not None, "docs/bench.md lost its bench markers"
    assert m.group(1) == table, "docs/bench.md differs: paste `skillci bench --markdown`"
    # every arm of the seed is a row; the measured ones have numbers, the others none
    assert main([*argv, "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["arm"] for r in rows] == [a[0] for a in ARMS]
    assert sum(r["kind"] == "baseline" for r in rows) == 8  # 7 + the teacher reference
    assert sum(r["kind"] == "ablation" for r in rows) == 8
    for r in rows:
        if r["status"] == "real":
            assert r["trials"] == r["tasks"] == 6 and r["success"] is not None
        else:
            assert r["reason"] and r["success"] is None and r["tokens"] is None
    real = {r["arm"]: r for r in rows if r["status"] == "real"}
    generated = {"teacher-only", "trajectory-only", "prompt-opt"}
    assert {"no-skill", "original", "teacher"} | generated <= set(real)
    assert all(real[a]["notes"] for a in ("trajectory-only", "prompt-opt"))
    assert real["prompt-opt"]["notes"][0].startswith("0: the skill as given: train pass")
    assert real["no-skill"]["gcr"]["value"] == 0.0 and real["teacher"]["gcr"]["value"] == 1.0
    assert real["original"]["regression"]["value"] == 0.0  # measured against itself
