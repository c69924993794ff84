"""The gate's one decision procedure (docs/design/290): independent pairs, the paired test
decides the improvement, and `inconclusive` when the evidence cannot decide."""

from __future__ import annotations

import random

from skillci.errors import ExitCode
from skillci.gate.decision import suite_result
from skillci.gate.evidence import OnlineTest, paired_test
from skillci.gate.metrics import TrialOutcome
from skillci.gate.outcomes import Comparability
from skillci.gate.sequential import SequentialConfig
from skillci.gate.stats import fisher_less
from skillci.gate.verdict import Complexity, GateCheck, SuiteResult, decide, reasons, verdict_of
from skillci.skill.models import ReleaseGate

CX = Complexity(
    bootstrap_tokens=500,
    total_tokens=900,
    avg_loaded_tokens=None,
    rules=3,
    conflicting_rules=0,
    never_hit_rules=[],
    lint_errors=0,
)
GATE = ReleaseGate(require_security_suite=False)


def o(task: str, side: str, r: int, ok: bool, fp: str | None = None) -> TrialOutcome:
    return TrialOutcome(
        task_id=task,
        side=side,  # type: ignore[arg-type]
        repeat=r,
        reward=float(ok),
        passed=ok,
        fingerprint=fp,
    )


def table(
    rows: dict[str, tuple[list[bool], list[bool]]], *, same_fp: bool = False
) -> list[TrialOutcome]:
    """Outcomes; ``same_fp``: every repeat of a (task, side) has one trajectory per result
    (deterministic decoding), else each trial is distinct."""
    out = []
    for task, (base, head) in rows.items():
        for side, runs in (("base", base), ("head", head)):
            for r, ok in enumerate(runs):
                fp = f"{task}-{side}-{ok}" if same_fp else f"{task}-{side}-{r}"
                out.append(o(task, side, r, ok, fp))
    return out


def gate(rows: dict[str, tuple[list[bool], list[bool]]], *, same_fp: bool = False, **kw):  # type: ignore[no-untyped-def]
    suite = suite_result("validation", table(rows, same_fp=same_fp), n_boot=0)
    return decide(
        gate=GATE.model_copy(update=kw),
        suites=[suite],
        comparability=Comparability(comparable=True),
        base=CX,
        head=CX,
        guard_verdict="pass",
        same_instance=None,
    )


def check(checks: list[GateCheck], name: str) -> GateCheck:
    return next(c for c in checks if c.name == name)


def test_repeats_with_identical_trajectories_are_one_observation() -> None:
    rows = {f"t{i}": ([False] * 5, [True] * 5) for i in range(4)}
    independent = paired_test(table(rows), SequentialConfig(max_rounds=5))
    copies = paired_test(table(rows, same_fp=True), SequentialConfig(max_rounds=5))
    assert independent.decision.outcome == "accept"
    assert copies.pairs == 4 and copies.copies == 32 and copies.effective_repeats == 1
    assert copies.decision.head_wins == 4 and copies.decision.outcome == "reject"
    assert not copies.attainable  # 4 of 4 can never reach the exact level: 1/16 > 0.05
    verdict, checks = gate(rows, same_fp=True)
    imp = check(checks, "improvement")
    assert verdict == "inconclusive" and imp.status == "not_measured"
    assert "32 repeated trial(s) counted once" in imp.detail
    assert gate(rows)[0] == "accept"


def test_zero_to_zero_and_all_to_all_are_inconclusive_not_reject() -> None:
    for ok in (False, True):
        rows = {f"t{i}": ([ok] * 3, [ok] * 3) for i in range(6)}
        verdict, checks = gate(rows)
        imp = check(checks, "improvement")
        assert verdict == "inconclusive" and imp.status == "not_measured"
        assert "no discordant outcome" in imp.detail
        assert reasons(checks)[0].startswith("improvement:")
    # and min_validation_gain 0 changes nothing: no evidence is no evidence
    assert gate({"t": ([False], [False])}, min_validation_gain=0.0)[0] == "inconclusive"


def test_a_pooled_gain_never_overrides_a_test_that_kept_no_improvement() -> None:
    # head ahead on the pooled rate (+10%), but discordant pairs 6 vs 4: not shown
    rows = {
        **{f"w{i}": ([False], [True]) for i in range(6)},
        **{f"l{i}": ([True], [False]) for i in range(4)},
        **{f"p{i}": ([True], [True]) for i in range(10)},
    }
    verdict, checks = gate(rows)
    imp = check(checks, "improvement")
    assert imp.status != "pass" and verdict != "accept"


def test_head_losing_the_discordant_pairs_is_a_reject() -> None:
    rows = {f"t{i}": ([True, True], [False, i % 3 == 0]) for i in range(9)}
    verdict, checks = gate(rows, max_regression_rate=1.0)
    assert check(checks, "improvement").status == "fail" and verdict == "reject"


def test_errored_trials_make_the_gate_inconclusive_with_the_first_cause() -> None:
    rows = {f"t{i}": ([False] * 3, [True] * 3) for i in range(8)}
    suite = suite_result("validation", table(rows), n_boot=0)
    verdict, checks = decide(
        gate=GATE,
        suites=[suite],
        comparability=Comparability(comparable=True),
        base=CX,
        head=CX,
        guard_verdict="pass",
        same_instance=None,
        errors={"head": ["t9 (infra_error): ModelError: OPENAI_API_KEY is not set"]},
    )
    m = check(checks, "measured")
    assert verdict == "inconclusive" and m.status == "not_measured"
    assert "OPENAI_API_KEY is not set" in m.detail and m.value.startswith("1 trial(s)")


def test_a_failing_check_rejects_even_when_another_is_unmeasured() -> None:
    verdict, checks = gate({"t": ([False], [False])})
    assert verdict == "inconclusive"
    failed = [c.model_copy(update={"status": "fail", "passed": False}) for c in checks[:1]]
    assert verdict_of([*failed, *checks[1:]]) == "reject"
    assert ExitCode.of_verdict("inconclusive") == 5 and ExitCode.of_verdict("reject") == 1


def test_a_noisy_task_is_tested_for_regression_not_switched_off() -> None:
    # 5/5 -> 0/5 on a task whose base repeats agree: a regression (Fisher p = 0.004)
    assert fisher_less(5, 5, 0, 5) < 0.05
    # 3/5 -> 2/5 on a flaky task: within its noise
    assert fisher_less(3, 5, 2, 5) == 0.5
    rows = {
        "broken": ([True] * 5, [False] * 5),
        "noisy": ([True, True, True, False, False], [True, True, False, False, False]),
        **{f"f{i}": ([False] * 5, [True] * 5) for i in range(3)},
    }
    reg = check(gate(rows, max_regression_rate=0.6)[1], "regression_rate")
    assert reg.value == "50.0% (1/2 base-passing tasks)" and reg.detail.startswith("broken")
    assert "within repeat noise (Fisher p >= alpha): noisy" in reg.detail


def test_nothing_passing_on_base_cannot_regress_and_is_not_called_pass() -> None:
    reg = check(gate({f"t{i}": ([False], [True]) for i in range(6)})[1], "regression_rate")
    assert reg.status == "not_applicable" and reg.value.startswith("n/a")


def test_the_online_test_and_the_replay_agree() -> None:
    rng = random.Random(7)
    for _ in range(50):
        rows = {
            f"t{i}": (
                [rng.random() < 0.4 for _ in range(4)],
                [rng.random() < 0.6 for _ in range(4)],
            )
            for i in range(6)
        }
        outs = table(rows)
        online = OnlineTest(SequentialConfig(max_rounds=4))
        for r in range(4):
            if online.update([x for x in outs if x.repeat == r]).outcome != "continue":
                break
        assert online.evidence(rows) == paired_test(outs, SequentialConfig(max_rounds=4))


def test_coin_students_are_accepted_at_most_at_the_tests_level() -> None:
    """A student that ignores the skill (each trial a coin) over many gates: the share
    accepted stays within the 5% level (binomial slack for 300 gates)."""
    rng = random.Random(3)
    accepted = 0
    n = 300
    for _ in range(n):
        rows = {
            f"t{i}": (
                [rng.random() < 0.5 for _ in range(5)],
                [rng.random() < 0.5 for _ in range(5)],
            )
            for i in range(8)
        }
        accepted += gate(rows, max_regression_rate=1.0)[0] == "accept"
    assert accepted / n <= 0.08


def test_old_reports_without_status_read_their_passed_flag() -> None:
    verdict, checks = gate({"t": ([False], [True])})
    data = checks[0].model_dump()
    del data["status"]
    data["passed"] = False
    assert type(checks[0]).model_validate(data).status == "fail"
    assert (
        SuiteResult.model_validate(
            {**suite_result("v", table({"t": ([False], [True])})).model_dump(), "evidence": None}
        ).evidence
        is None
    )
    assert verdict == "inconclusive"


def test_an_empty_security_suite_is_n_a_and_an_unmeasured_one_is_not_measured() -> None:
    rows = {f"t{i}": ([False], [True]) for i in range(6)}
    val = suite_result("validation", table(rows), n_boot=0)
    empty = suite_result("security", [], n_boot=0)
    errored = suite_result("security", [], tasks=["sec-a"], n_boot=0)
    for sec, status, verdict in (
        (empty, "not_applicable", "accept"),
        (errored, "not_measured", "inconclusive"),
    ):
        v, checks = decide(
            gate=ReleaseGate(),
            suites=[val, sec],
            comparability=Comparability(comparable=True),
            base=CX,
            head=CX,
            guard_verdict="pass",
            same_instance=None,
        )
        assert check(checks, "security_suite").status == status and v == verdict


def test_scored_rewards_pair_on_the_tasks_pass_mark_not_on_the_reward() -> None:
    """docs/design/365: weighted graders give rewards in [0, 1]; the task's pass mark (0.8
    here) made ``passed`` when the trial was graded, and the pairs count that alone."""
    from skillci.gate.evidence import improvement_evidence

    def g(task: str, side: str, reward: float) -> TrialOutcome:
        return TrialOutcome(
            task_id=task,
            side=side,  # type: ignore[arg-type]
            repeat=0,
            reward=reward,
            passed=reward >= 0.8,
        )

    crossed = [x for i in range(5) for x in (g(f"up{i}", "base", 0.5), g(f"up{i}", "head", 0.85))]
    under = [x for i in range(3) for x in (g(f"rise{i}", "base", 0.2), g(f"rise{i}", "head", 0.75))]
    ev = paired_test(crossed + under, SequentialConfig(max_rounds=1))
    # rises under the mark are concordant failures, not wins
    assert (ev.decision.head_wins, ev.decision.base_wins, ev.pairs) == (5, 0, 8)
    assert improvement_evidence(ev, 5 / 8, 0.02).status == "pass"

    only_under = paired_test(under, SequentialConfig(max_rounds=1))
    f = improvement_evidence(only_under, 0.0, 0.02)
    # the mean reward rose by 0.55 on every task, yet nothing tells the sides apart
    assert f.status == "not_measured" and "no discordant outcome" in f.detail
    m = suite_result("v", under).metrics
    assert m.sides["head"].pass_rate.mean_reward - m.sides["base"].pass_rate.mean_reward > 0.5
