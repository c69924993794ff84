"""An assertion kind from a package outside skillci: one class plus one ``skillci.graders``
entry point makes ``kind = "word-count"`` valid in ``tests/graders.toml``, checks it in real
trials and records it in the grade report — with no edit to skillci's own files
(docs/design/403)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.integration.plugins.conftest import install_plugin, run_skillci

ROOT = Path(__file__).resolve().parents[3]
FIXTURE = ROOT / "tests" / "fixtures" / "graded-tasks"
TASK = "plan-json-export"
PLAN = "docs/plans/json-export.md"

TOY_GRADER = '''
import json
import os

from skillci.graders.kinds import AssertionKind, InvalidAssertion


class WordCount(AssertionKind):
    """Between params.min and params.max words."""

    def validate(self, a):
        if not a.params or set(a.params) - {"min", "max"}:
            raise InvalidAssertion("word-count takes params = { min = N, max = N }", field="params")

    def check(self, a, subject):
        n = len(subject.text.split())
        lo, hi = a.params.get("min", 0), a.params.get("max", 10**9)
        with open(os.environ["TOY_LOG"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"id": a.id, "words": n}) + "\\n")
        return lo <= n <= hi, f"{subject.where}: {n} words (want {lo}..{hi})"


class Boom(AssertionKind):
    """A kind with a bug."""

    def check(self, a, subject):
        raise KeyError("oops")


class NotAKind:
    pass
'''

ENTRY_POINTS = (
    "[skillci.graders]\nword-count = toy_grader:WordCount\nboom = toy_grader:Boom\n"
    "broken = toy_grader:NotAKind\nregex = toy_grader:WordCount\n"
)

WORD_COUNT = f"""
[[assertion]]
id = "plan-length"
kind = "word-count"
target = "file:{PLAN}"
params = {{ min = 50, max = 400 }}
"""


def _repo(tmp_path: Path, extra: str) -> Path:
    """The graded-tasks fixture with ``extra`` appended to the task's graders.toml."""
    repo = tmp_path / "repo"
    shutil.copytree(FIXTURE, repo)
    toml = repo / "evals" / "tasks" / TASK / "tests" / "graders.toml"
    toml.write_text(toml.read_text() + extra, encoding="utf-8")
    return repo


def _eval(site: Path, repo: Path, agent: str, log: Path):  # type: ignore[no-untyped-def]
    argv = ["eval", "run", "--root", str(repo), "--home", str(repo / ".skillci"), "--task"]
    argv += [TASK, "--agent", agent, "--json"]
    return run_skillci(site, *argv, env={"TOY_LOG": str(log)})


def _log(path: Path) -> list[dict[str, object]]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def _graders(home: Path, run_id: str) -> dict[str, dict[str, object]]:
    (record,) = [
        json.loads(p.read_text())
        for p in home.rglob("record.json")
        if json.loads(p.read_text())["run_id"] == run_id
    ]
    report = record["evaluation"]["details"]["graders"]
    return {r["id"]: r for r in report["results"]}


def test_a_plugin_kind_is_validated_checked_in_trials_and_recorded(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", "toy_grader", {"toy_grader": TOY_GRADER}, ENTRY_POINTS)
    repo = _repo(tmp_path, WORD_COUNT)
    log = tmp_path / "toy.log"

    done = _eval(site, repo, "oracle", log)
    assert done.returncode == 0, done.stderr
    (trial,) = json.loads(done.stdout)["trials"]
    assert (trial["state"], trial["cached"]) == ("passed", False), trial
    g = _graders(repo / ".skillci", trial["run_id"])
    (line,) = _log(log)  # the plug-in ran once, in the trial, on the plan the oracle wrote
    assert line["id"] == "plan-length" and 50 <= int(str(line["words"])) <= 400
    assert g["plan-length"] == {
        "id": "plan-length",
        "kind": "word-count",
        "passed": True,
        "score": 1.0,
        "weight": 1.0,
        "detail": f"{PLAN}: {line['words']} words (want 50..400)",
        "criteria": [],
    }
    # the built-in regex kind still checked the header: a plug-in cannot take its name
    assert g["plan-header"]["passed"] and g["plan-header"]["kind"] == "regex"
    # the trial's cache key names the package that checked the plug-in kind
    (base,) = [json.loads(p.read_text()) for p in repo.joinpath(".skillci").rglob("regrade.json")]
    assert base["key_data"]["grader_kinds"] == {"word-count": "toy_grader==0.1"}

    nothing = _eval(site, repo, "noop", log)
    assert nothing.returncode == 0, nothing.stderr
    (trial,) = json.loads(nothing.stdout)["trials"]
    assert trial["state"] == "failed"
    g = _graders(repo / ".skillci", trial["run_id"])
    assert (g["plan-length"]["passed"], g["plan-length"]["detail"]) == (False, f"{PLAN} is missing")
    assert len(_log(log)) == 1  # a missing target fails before the kind's check is called


def test_bad_plugin_assertions_are_one_line_errors_at_their_line(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", "toy_grader", {"toy_grader": TOY_GRADER}, ENTRY_POINTS)
    log = tmp_path / "toy.log"
    toml = f"evals/tasks/{TASK}/tests/graders.toml"
    cases = {
        "unknown": (
            WORD_COUNT.replace('"word-count"', '"word-counts"'),
            "kind",
            "unknown assertion kind 'word-counts'; registered: exact, contains, regex, "
            "json-schema, file-exists, command-exit, word-count, boom, broken",
        ),
        "params": (
            WORD_COUNT.replace("min = 50", "least = 50"),
            "params",
            "word-count takes params = { min = N, max = N }",
        ),
        "broken": (
            WORD_COUNT.replace('"word-count"', '"broken"'),
            None,
            "assertion kind 'broken' (toy_grader:NotAKind) made a NotAKind, not an AssertionKind",
        ),
    }
    for name, (extra, key, message) in cases.items():
        repo = _repo(tmp_path / name, extra)
        bad = _eval(site, repo, "oracle", log)
        assert bad.returncode == 2, (name, bad.stdout, bad.stderr)
        err = " ".join(bad.stderr.split())
        assert message in err, (name, err)
        lines = (repo / toml).read_text().splitlines()
        if key is not None:  # the last line of that key: the appended assertion's
            at = max(i for i, x in enumerate(lines, start=1) if x.startswith(key))
            assert f"{toml}:{at}:" in err, (name, err)
        else:
            assert f"{toml}:" in err, (name, err)
        assert not list(repo.joinpath(".skillci").rglob("record.json")), name
    assert not log.exists()


def test_a_kind_that_raises_makes_the_trial_an_infra_error_not_a_failure(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", "toy_grader", {"toy_grader": TOY_GRADER}, ENTRY_POINTS)
    repo = _repo(tmp_path, '\n[[assertion]]\nid = "kaboom"\nkind = "boom"\n')
    done = _eval(site, repo, "oracle", tmp_path / "toy.log")
    assert done.returncode == 4  # the trial measured nothing: an external failure, said so
    assert "(kind boom) raised KeyError" in " ".join(done.stderr.split())
    (trial,) = json.loads(done.stdout)["trials"]
    assert trial["state"] == "infra_error" and not trial["passed"], trial
    (record,) = [json.loads(p.read_text()) for p in repo.joinpath(".skillci").rglob("record.json")]
    assert record["evaluation"]["failure_class"] == "grader_error"
    assert record["evaluation"]["details"]["grader_error"] == (
        "assertion 'kaboom' (kind boom) raised KeyError: 'oops'"
    )
