"""The gate over graded tasks (issue 32, docs/design/364-366), end to end: a scratch git
repository whose validation tasks carry ``tests/graders.toml`` (test.sh's reward as one
grader, an assertion and a rubric on the final answer), the sim student on base (without
finish.report-success) and head (with it), the rubric judged by ``--judge``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
import yaml

from skillci.cli.main import main
from skillci.flows.context import RepoContext
from skillci.flows.gate import GateOptions, gate_id, run_gate
from skillci.gate.verdict import GateCheck, GateReport
from skillci.providers.sim.judge import judge_answer
from tests.conftest import ROOT
from tests.fakes.openai_server import FAKE_KEY_ENV, FakeOpenAI
from tests.integration.loop.conftest import SMALL_SUITES, git, write_suites

SKILL = "repo-debugger"
VALIDATION = SMALL_SUITES["validation"]
EXAMPLES = ROOT / "tests/fixtures/graded-tasks/evals/suites/judge-examples.yaml"
#: test.sh's reward (weight 1) + an assertion both sides pass + a rubric only a verified
#: report meets: base trials score 1/3 (verifier failed) or 2/3 (verifier passed), head 1
GRADERS = """\
[reward]
rule = "threshold"
threshold = 0.8

[[assertion]]
id = "names-a-file"
kind = "regex"
value = '[a-z]+/[a-z_]+\\.(py|ini)'

[[rubric]]
id = "verified-report"
criteria = [
  "Verified: the test command exited 0",
  "The git status shows only the changed file",
]
"""


@pytest.fixture(scope="module", autouse=True)
def _litellm_loaded() -> None:
    """Import litellm (seconds on a loaded machine; the judge's routes need it) once, in
    setup, not in a test's call (as tests/integration/graders does)."""
    from skillci.providers.client import litellm_module

    litellm_module()


def _pin_suites(repo: Path, validation: list[str], judge: dict[str, Any] | None = None) -> None:
    write_suites(repo, {"validation": validation})
    if judge is not None:
        path = repo / "evals/suites/validation.yaml"
        body = yaml.safe_load(path.read_text())
        path.write_text(yaml.safe_dump({**body, "judge": judge}, sort_keys=False))


@pytest.fixture
def graded(scratch: Path) -> Path:
    """main: the validation tasks graded (no security suite required, so the verdict is the
    validation suite's); branch ``restore``: finish.report-success put back."""
    for task in VALIDATION:
        (scratch / "evals/tasks" / task / "tests/graders.toml").write_text(GRADERS)
    shutil.copyfile(EXAMPLES, scratch / "evals/suites/judge-examples.yaml")
    manifest = scratch / "skills" / SKILL / "skillci.yaml"
    text = manifest.read_text().replace(
        "require_security_suite: true", "require_security_suite: false"
    )
    manifest.write_text(text)
    git(scratch, "add", "-A")
    git(scratch, "commit", "-qm", "graded validation tasks")
    return scratch


def _restore(repo: Path, **edit: str) -> None:
    """Branch ``restore`` from main: the rule back, and ``edit`` (path -> text) applied."""
    git(repo, "checkout", "-q", "-b", "restore")
    rules = Path("skills/repo-debugger/skillci/rules/finish.yaml")
    shutil.copyfile(ROOT / rules, repo / rules)
    for rel, text in edit.items():
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "restore finish.report-success")
    git(repo, "checkout", "-q", "main")


def _check(report: GateReport, name: str) -> GateCheck:
    return next(c for c in report.checks if c.name == name)


def _opts(**kw: Any) -> GateOptions:
    return GateOptions(skill=SKILL, base="main", head="restore", suites=("validation",),
                       repeat=1, **kw)  # fmt: skip


#: two python tasks (test.sh fails / passes on base) and a config task (a half-met rubric)
THREE = ["py-page-count", "py-cache-expiry", "cfg-two-typos-server"]


def _rewards(
    ctx: RepoContext, report: GateReport
) -> dict[tuple[str, str], tuple[float, bool, bool]]:
    """(task, side) -> (graded reward, passed, test.sh's grader passed)."""
    out = {}
    for task, sides in report.evidence.items():
        for side, (rid,) in sides.items():
            ev = ctx.store.get(rid).evaluation
            graders = {g["id"]: g for g in ev.details["graders"]["results"]}
            assert ev.reward is not None and ev.threshold == 0.8
            out[(task, side)] = (ev.reward, ev.passed, graders["verifier"]["passed"])
    return out


def test_scored_rewards_pair_on_the_tasks_pass_mark(graded: Path, capsys: Any) -> None:
    _pin_suites(graded, THREE)
    git(graded, "commit", "-qam", "three tasks")
    _restore(graded)
    ctx = RepoContext.open(graded)
    report = run_gate(ctx, _opts())

    rewards = _rewards(ctx, report)
    # partial rewards: on base the rubric fails (an unverified report) and test.sh decides
    # between 1/3 and 2/3; on head the sim judge passes one criterion of two on the config
    # task (its report names no test): 2.5/3, over the pass mark 0.8
    assert rewards[("py-page-count", "base")] == (pytest.approx(1 / 3, abs=1e-6), False, False)
    assert rewards[("py-page-count", "head")] == (1.0, True, True)
    # test.sh passed on base here, but the graded reward 2/3 is under the pass mark 0.8: a
    # failed trial, so a discordant pair — not a concordant pass
    assert rewards[("py-cache-expiry", "base")] == (pytest.approx(2 / 3, abs=1e-6), False, True)
    assert rewards[("py-cache-expiry", "head")] == (1.0, True, True)
    assert rewards[("cfg-two-typos-server", "head")] == (
        pytest.approx(2.5 / 3, abs=1e-6),
        True,
        True,
    )
    improvement = _check(report, "improvement")
    assert improvement.value.startswith("head won 3 of 3 discordant pair(s)")
    assert improvement.status == "not_measured"  # three pairs cannot reach the test's level
    val = report.suites[0].metrics.sides
    assert val["base"].pass_rate.pass_rate == 0.0 and val["head"].pass_rate.pass_rate == 1.0
    assert val["base"].pass_rate.mean_reward == pytest.approx(4 / 9, abs=1e-5)  # kept beside
    judge = _check(report, "judge_fit")
    assert judge.status == "not_applicable"
    assert judge.value == "sim/judge uncalibrated (a lexical simulator, not evidence)"

    # which grader moved each task (design 366): test.sh where it failed on base, the rubric
    # where the judge passed both criteria on head; the assertion held on both sides
    changes = {(g.task_id, g.grader): g for g in report.suites[0].grader_changes}
    assert set(changes) == {
        ("cfg-two-typos-server", "verifier"),
        ("py-cache-expiry", "verified-report"),
        ("py-page-count", "verified-report"),
        ("py-page-count", "verifier"),
    }
    rubric = changes[("py-cache-expiry", "verified-report")]
    assert (rubric.kind, rubric.base_passed, rubric.base_trials) == ("rubric", 0, 1)
    assert (rubric.head_passed, rubric.head_trials) == (1, 1)
    capsys.readouterr()
    assert main(["report", "show", report.gate_id, "--repo", str(graded)]) == 0
    shown = capsys.readouterr().out
    assert "**Grader changes** (trials passing it, base → head):" in shown
    assert "Rubric graders judged by `sim/judge` (a lexical simulator)." in shown
    assert "| `py-cache-expiry` | `verified-report` | rubric | 0/1 | 1/1 ▲ |" in shown


@pytest.mark.slow  # 16-29 s wall on the shared 2-core machine (2026-12-03): 12 trials
def test_a_graded_suite_with_partial_rewards_is_accepted(graded: Path) -> None:
    """Six graded tasks: the fewest discordant pairs the paired test accepts on at one
    round (design 290) — every one of them made by the pass mark, not by a verifier alone."""
    _restore(graded)
    ctx = RepoContext.open(graded)
    report = run_gate(ctx, _opts())
    rewards = _rewards(ctx, report)
    assert {rewards[(t, "head")][1] for t in VALIDATION} == {True}
    assert {rewards[(t, "base")][1] for t in VALIDATION} == {False}
    improvement = _check(report, "improvement")
    assert improvement.status == "pass"
    assert improvement.value.startswith("head won 6 of 6 discordant pair(s)")
    assert report.verdict == "accept", report.reasons


def _oracle_or_lexical(labels: dict[str, bool]) -> Any:
    """A judge behind a loopback OpenAI-compatible server: the human label for a labelled
    example's output (a perfectly calibrated judge), the sim judge's answer otherwise."""

    def answer(body: dict[str, Any]) -> str:
        user = body["messages"][-1]["content"]
        for output, label in labels.items():
            if json.dumps(output) in user:
                return json.dumps(
                    {"verdicts": [{"criterion": 1, "pass": label, "reason": "as labelled"}]}
                )
        return judge_answer(body["messages"])

    return answer


@pytest.fixture
def fake_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``fake/judge``: a route in a provider_routes.json pointing at a loopback server."""
    labels = {e["output"]: e["label"] for e in yaml.safe_load(EXAMPLES.read_text())["examples"]}
    with FakeOpenAI([_oracle_or_lexical(labels)]) as server:
        routes = tmp_path / "provider_routes.json"
        route = {"model": "openai/fake-judge", "api_base": server.base_url,
                 "api_key_env": FAKE_KEY_ENV, "timeout": 10}  # fmt: skip
        routes.write_text(json.dumps({"routes": {"fake/judge": route}}))
        monkeypatch.setenv("SKILLCI_PROVIDER_ROUTES", str(routes))
        monkeypatch.setenv(FAKE_KEY_ENV, "not-a-secret")
        yield server


_OUTPUT = re.compile(
    r"<<<UNTRUSTED-DATA output [0-9a-f]+>>>.*?<<<END-UNTRUSTED-DATA output [0-9a-f]+>>>", re.S
)


def test_the_judge_never_learns_the_side_and_is_part_of_the_gate_id(
    graded: Path, fake_judge: FakeOpenAI
) -> None:
    _pin_suites(graded, ["py-page-count", "py-cache-expiry"])
    git(graded, "commit", "-qam", "two tasks")
    _restore(graded)
    ctx = RepoContext.open(graded)
    report = run_gate(ctx, _opts(judge="fake/judge"))
    plain = run_gate(ctx, _opts())

    # a different judge is a different measurement: another gate, other trials
    assert report.gate_id != plain.gate_id
    assert report.gate_id == gate_id(
        _opts(judge="fake/judge"), report.base_sha or "", report.head_sha or ""
    )
    assert plain.gate_id == gate_id(
        _opts(judge="sim/judge"), plain.base_sha or "", plain.head_sha or ""
    )
    ids = {r for sides in report.evidence.values() for rs in sides.values() for r in rs}
    plain_ids = {r for sides in plain.evidence.values() for rs in sides.values() for r in rs}
    assert ids and not ids & plain_ids
    assert report.judge is not None and report.judge.route == "fake/judge"
    for rid in ids:
        assert ctx.store.get(rid).evaluation.details["graders"]["judge"]["route"] == "fake/judge"

    # every trial was judged by the server (base and head differ in output: no cache hit)
    prompts = [r["messages"][-1]["content"] for r in fake_judge.requests]
    assert len(prompts) == 4
    secrets_of_side = [report.base_sha, report.head_sha, "restore", "main", SKILL, *ids]
    pkg_hashes = {
        ctx.store.get(r).runtime.skill.content_hash for r in ids if ctx.store.get(r).runtime.skill
    }  # type: ignore[union-attr]
    assert len(pkg_hashes) == 2
    for text in prompts:
        outside = _OUTPUT.sub("", text)
        assert "finish.report-success" not in text
        for marker in [*secrets_of_side, *pkg_hashes]:
            assert marker and marker[:12] not in text, marker
        assert not re.search(r"\b(base|head|candidate|baseline|version)\b", outside, re.I)
    # base and head sent the same prompt but for the output (both tasks share their
    # instruction and rubric, so the four prompts are one text around four outputs)
    assert len({_OUTPUT.sub("", p) for p in prompts}) == 1
    assert len({m.group(0) for p in prompts for m in _OUTPUT.finditer(p)}) == 4


def test_an_unfit_judge_leaves_the_gate_inconclusive(graded: Path, capsys: Any) -> None:
    judge = {"examples": "judge-examples.yaml", "min_kappa": 0.6}
    _pin_suites(graded, ["py-page-count", "py-cache-expiry", "cfg-bool-flag"], judge)
    # a verifier-only task still gates; the graded ones are not run
    git(graded, "commit", "-qam", "three tasks, a judge minimum")
    # the pull request lowers the bar: the base's minimum holds
    lowered = (graded / "evals/suites/validation.yaml").read_text().replace("0.6", "-1.0")
    _restore(graded, **{"evals/suites/validation.yaml": lowered})

    argv = ["gate", "--repo", str(graded), "--skill", SKILL, "--base", "main", "--head",
            "restore", "--suites", "validation", "--repeat", "1", "--json"]  # fmt: skip
    assert main([*argv, "--judge", "nope/judge"]) == 2  # an unknown route, before any trial
    assert "unknown model route 'nope/judge'" in capsys.readouterr().err
    rc = main(argv)
    report = GateReport.model_validate_json(capsys.readouterr().out)
    assert rc == 5 and report.verdict == "inconclusive"
    check = _check(report, "judge_fit")
    assert check.status == "not_measured"
    # the calibration figures (tests/fixtures/graded-tasks: the lexical judge on 12 labels)
    assert check.value == "sim/judge: validation kappa -0.1667 (95% CI -0.7245..0.3912), n 12 < 0.6"
    assert "skillci judge calibrate --suite validation --judge ROUTE" in check.detail
    assert "py-cache-expiry, py-page-count" in check.detail
    assert any(r.startswith("judge_fit:") for r in report.reasons)
    assert report.judge is not None
    (suite,) = report.judge.suites
    assert suite.fit is False and suite.min_kappa == 0.6
    assert suite.left_out == ["py-cache-expiry", "py-page-count"]
    # the graded tasks never ran on either side; the verifier-only one did
    assert set(report.evidence) == {"cfg-bool-flag"}
    assert report.suites[0].tasks == ["cfg-bool-flag"]
    assert "reject" not in {c.status for c in report.checks}


def test_a_calibrated_judge_passes_judge_fit(graded: Path, fake_judge: FakeOpenAI) -> None:
    judge = {"examples": "judge-examples.yaml", "min_kappa": 0.6}
    _pin_suites(graded, ["py-page-count", "cfg-bool-flag"], judge)
    git(graded, "commit", "-qam", "a judge minimum")
    _restore(graded)
    report = run_gate(RepoContext.open(graded), _opts(judge="fake/judge"))
    check = _check(report, "judge_fit")
    assert check.status == "pass"
    assert check.value == "fake/judge: validation kappa 1.0 (95% CI 1.0..1.0), n 12"
    assert "judge fake/judge is fit" in check.detail
    assert set(report.evidence) == {"py-page-count", "cfg-bool-flag"}
    assert report.judge is not None and report.judge.suites[0].left_out == []
