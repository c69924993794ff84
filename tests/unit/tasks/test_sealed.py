"""The final split is sealed: optimisation code cannot read it (enforced and scanned)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from skillci.errors import SealedSplitError, TaskFormatError
from skillci.tasks.loader import load_suite_tasks, load_task
from skillci.tasks.models import Purpose, Split
from skillci.tasks.suites import list_suites, load_suite, sealed_task_ids
from tests.unit.tasks.helpers import make_harbor_task, make_suites, write

ROOT = Path(__file__).resolve().parents[3]
#: Optimisation code paths that must never touch the final split.
OPTIMISATION_PACKAGES = ("analyze", "compile", "patch")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    tasks = tmp_path / "evals" / "tasks"
    for t in ("a", "b", "held-1", "held-2"):
        make_harbor_task(tasks, t)
    make_suites(
        tmp_path,
        {
            "discovery": ("discovery", ["a"]),
            "validation": ("validation", ["b"]),
            "final": ("final", ["held-1"]),
            "holdout": ("final", ["held-2"]),
        },
    )
    return tmp_path


def test_optimize_cannot_load_final_suite(repo: Path) -> None:
    with pytest.raises(SealedSplitError, match="sealed final split"):
        load_suite("final", repo, purpose=Purpose.optimize)


def test_optimize_cannot_load_a_final_split_under_another_name(repo: Path) -> None:
    with pytest.raises(SealedSplitError):
        load_suite("holdout", repo, purpose=Purpose.optimize)


def test_seal_is_checked_before_the_file_is_read(repo: Path) -> None:
    (repo / "evals" / "suites" / "final.yaml").write_text("{{{ not yaml")
    with pytest.raises(SealedSplitError):
        load_suite("final", repo, purpose=Purpose.optimize)


def test_final_report_reads_final(repo: Path) -> None:
    suite = load_suite("final", repo, purpose=Purpose.final_report)
    assert suite.split is Split.final
    assert suite.tasks == ["held-1"]
    tasks = load_suite_tasks(suite, repo, purpose=Purpose.final_report)
    assert [t.id for t in tasks] == ["held-1"]


def test_optimize_reads_other_splits(repo: Path) -> None:
    suite = load_suite("discovery", repo, purpose=Purpose.optimize)
    assert [t.id for t in load_suite_tasks(suite, repo, purpose=Purpose.optimize)] == ["a"]
    assert list_suites(repo) == ["discovery", "final", "holdout", "validation"]


def test_task_loader_refuses_sealed_tasks_for_optimisation(repo: Path) -> None:
    tdir = repo / "evals" / "tasks"
    for sealed in ("held-1", "held-2"):
        with pytest.raises(SealedSplitError, match=sealed):
            load_task(tdir / sealed)  # the default purpose is optimize
        assert load_task(tdir / sealed, purpose=Purpose.final_report).id == sealed
        assert load_task(tdir / sealed, purpose=Purpose.inspect).id == sealed
    assert load_task(tdir / "a").id == "a"


def test_explicit_suites_root_for_tasks_elsewhere(repo: Path, tmp_path: Path) -> None:
    elsewhere = make_harbor_task(tmp_path / "copy", "held-1")
    assert load_task(elsewhere).id == "held-1"  # no suites known next to it
    with pytest.raises(SealedSplitError):
        load_task(elsewhere, suites_root=repo)


def test_env_adds_sealed_ids(repo: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLCI_SEALED_TASKS", "a, private-x")
    assert sealed_task_ids(repo) == {"a", "held-1", "held-2", "private-x"}
    with pytest.raises(SealedSplitError):
        load_task(repo / "evals" / "tasks" / "a")


def test_optimisation_suite_may_not_list_a_final_task(repo: Path) -> None:
    make_suites(repo, {"validation": ("validation", ["b", "held-1"])})
    with pytest.raises(SealedSplitError, match="held-1"):
        load_suite("validation", repo, purpose=Purpose.optimize)


def test_suite_loaded_for_report_cannot_be_reused_for_optimisation(repo: Path) -> None:
    suite = load_suite("final", repo, purpose=Purpose.final_report)
    with pytest.raises(SealedSplitError):
        load_suite_tasks(suite, repo, purpose=Purpose.optimize)


def test_suite_format_errors(repo: Path) -> None:
    sdir = repo / "evals" / "suites"
    write(sdir / "bad.yaml", "split: discovery\ntasks: [a, a]\n")
    with pytest.raises(TaskFormatError, match="listed twice"):
        load_suite("bad", repo, purpose=Purpose.optimize)
    write(sdir / "bad2.yaml", "schema_version: 1\nsplit: training\ntasks: [a]\n")
    with pytest.raises(TaskFormatError) as ei:
        load_suite("bad2", repo, purpose=Purpose.optimize)
    assert ei.value.line == 2
    write(sdir / "bad3.yaml", "split: discovery\ntasks: [nope]\n")
    suite = load_suite("bad3", repo, purpose=Purpose.optimize)
    with pytest.raises(TaskFormatError, match="do not exist"):
        load_suite_tasks(suite, repo, purpose=Purpose.optimize)
    with pytest.raises(TaskFormatError, match="no suite 'missing'"):
        load_suite("missing", repo, purpose=Purpose.optimize)


# ---------------------------------------------------------------------------- static scan

_FINAL_PATH = re.compile(r"(^|[/\\])final\.ya?ml\b|suites[/\\]final\b")
_FORBIDDEN_ATTRS = {("Purpose", "final_report"), ("Split", "final")}
_FORBIDDEN_NAMES = {"SEALED_SPLIT", "sealed_task_ids"}


def sealed_violations(source: str, filename: str = "<src>") -> list[str]:
    """Reads of the final split in optimisation code: paths, enum members, purposes."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source, filename)):
        where = f"{filename}:{getattr(node, 'lineno', '?')}"
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            if _FINAL_PATH.search(node.value) or node.value == "final_report":
                out.append(f"{where}: string {node.value!r} names the final split")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if (node.value.id, node.attr) in _FORBIDDEN_ATTRS:
                out.append(f"{where}: {node.value.id}.{node.attr}")
        elif isinstance(node, ast.Name | ast.alias):
            name = node.id if isinstance(node, ast.Name) else node.name
            if name in _FORBIDDEN_NAMES:
                out.append(f"{where}: uses {name}")
        elif isinstance(node, ast.Call):
            for kw in node.keywords:
                ok = isinstance(kw.value, ast.Attribute) and kw.value.attr == "optimize"
                if kw.arg == "purpose" and not ok:
                    out.append(f"{where}: purpose= must be Purpose.optimize here")
            for arg in node.args:
                if isinstance(arg, ast.Constant) and arg.value == "final":
                    out.append(f"{where}: call with the literal 'final'")
    return out


@pytest.mark.parametrize(
    "bad",
    [
        "open('evals/suites/final.yaml').read()",
        "from pathlib import Path\nPath(root) / 'suites/final'",
        "load_suite('final', root, purpose=Purpose.optimize)",
        "load_suite(name, root, purpose=Purpose.final_report)",
        "load_suite(name, root, purpose=p)",
        "x = Split.final",
        "from skillci.tasks.suites import sealed_task_ids",
    ],
)
def test_scanner_catches_planted_reads(bad: str) -> None:
    assert sealed_violations(bad)


def test_scanner_allows_optimisation_reads() -> None:
    ok = "s = load_suite('validation', root, purpose=Purpose.optimize)\nfinal_answer = 1\n"
    assert sealed_violations(ok) == []


def test_optimisation_packages_never_read_the_final_split() -> None:
    files = [
        f for pkg in OPTIMISATION_PACKAGES for f in sorted((ROOT / "skillci" / pkg).rglob("*.py"))
    ]
    problems = [v for f in files for v in sealed_violations(f.read_text(), str(f))]
    assert problems == []


def test_broken_final_suite_fails_closed(repo: Path) -> None:
    write(repo / "evals" / "suites" / "holdout.yaml", "split: final\ntasks: [x, x]\n")
    with pytest.raises(TaskFormatError):
        load_task(repo / "evals" / "tasks" / "a")
