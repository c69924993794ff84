"""``skillci bench`` on the bundled suite: the table in docs/bench.md is the one it prints."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.flows.bench import ARMS
from skillci.gate.bench import BenchRow
from skillci.present.bench import markdown_table
from skillci.tasks.models import Purpose
from skillci.tasks.suites import load_suite
from tests.conftest import ROOT

DOC = ROOT / "docs" / "bench.md"
#: the bench suite's size: every real arm runs each of its tasks once
TASKS = len(load_suite("validation", ROOT, purpose=Purpose.optimize).tasks)


#: The loop arms (skillci and the 8 ablations), then the generated baselines, in groups:
#: each test runs one group on the module's state dir (the first also the references), so
#: no test runs for long and the table test finds every trial in the cache.
LOOP_GROUPS = (
    "skillci",
    "no-teacher-diff,no-taxonomy,no-patch-limits,no-regression-suite",
    "no-token-budget,no-lifecycle,llm-only-verification,random-patches",
)
GROUPS = (*LOOP_GROUPS, "teacher-only,trajectory-only", "prompt-opt")


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("bench") / "home"


def argv(home: Path) -> list[str]:
    return ["bench", "--repo", str(ROOT), "--home", str(home), "--parallel", "1"]


def test_unknown_arm_is_refused_with_the_choices(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "--repo", str(ROOT), "--arms", "skillci,no-such-arm"]) == 2
    err = capsys.readouterr().err
    assert "no-such-arm" in err and all(a[0] in err for a in ARMS)


@pytest.mark.slow  # one group of arms: 1-5 min of sim trials on a shared 2-core machine
@pytest.mark.timeout(900)
@pytest.mark.parametrize("arms", GROUPS)
def test_arm_groups_run(arms: str, home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv(home), "--arms", arms, "--json"]) == 0
    out = capsys.readouterr()
    rows = json.loads(out.out)
    assert [r["arm"] for r in rows] == arms.split(",")
    loop_arms = {a for half in LOOP_GROUPS for a in half.split(",")}
    for r in rows:
        assert r["status"] == "real" and r["trials"] == r["tasks"] == TASKS, r
        if r["arm"] in loop_arms:
            assert re.match(r"\d+ cluster\(s\), \d+ proposed, \d+ accepted", r["note"]), r
            assert f"bench: loop arm {r['arm']}" in out.err  # progress lines on stderr


@pytest.mark.slow  # after the groups every trial is cached (still ~1-3 min of gates)
@pytest.mark.timeout(900)
def test_bench_table_matches_the_docs(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*argv(home), "--json", "--quiet"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # `--markdown` prints markdown_table of these rows (one run instead of two)
    table = markdown_table([BenchRow.model_validate(r) for r in rows])
    doc = DOC.read_text()
    m = re.search(r"<!-- bench:begin -->\n(.*)<!-- bench:end -->", doc, re.S)
    assert m is not None, "docs/bench.md lost its bench markers"
    if os.environ.get("SKILLCI_REGENERATE_DOCS") == "1":
        DOC.write_text(doc[: m.start(1)] + table + doc[m.end(1) :])
    else:
        assert m.group(1) == table, "docs/bench.md differs: SKILLCI_REGENERATE_DOCS=1 rewrites it"
    # every arm of the seed is a row; the measured ones have numbers, the others none
    assert [r["arm"] for r in rows] == [a[0] for a in ARMS]
    assert sum(r["kind"] == "baseline" for r in rows) == 8  # 7 + the teacher reference
    assert sum(r["kind"] == "ablation" for r in rows) == 8
    for r in rows:
        if r["status"] == "real":
            assert r["trials"] == r["tasks"] == TASKS and r["success"] is not None
        else:
            assert r["reason"] and r["success"] is None and r["tokens"] is None
    real = {r["arm"]: r for r in rows if r["status"] == "real"}
    loop_arms = {a for half in LOOP_GROUPS for a in half.split(",")}
    assert {"no-skill", "original", "teacher"} | loop_arms <= set(real)
    generated = {"teacher-only", "trajectory-only", "prompt-opt"}
    assert generated <= set(real)
    assert all(real[a]["note"] for a in ("trajectory-only", "prompt-opt"))
    assert real["prompt-opt"]["note"].startswith("0: the skill as given: train pass")
    assert real["no-skill"]["gcr"]["value"] == 0.0 and real["teacher"]["gcr"]["value"] == 1.0
    assert real["original"]["regression"]["value"] == 0.0  # measured against itself
