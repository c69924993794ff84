from __future__ import annotations

from pathlib import Path

import pytest

from skillci.compile.profile import (
    MeasuredTraits,
    ModelProfile,
    build_profile,
    config_profile,
    find_profile,
    load_profile,
    measure_traits,
    profile_path,
    profile_slug,
    save_profile,
)
from skillci.errors import ConfigError
from skillci.providers.routes import BUILTIN_ROUTES
from skillci.trace.models import MessageEvent, RunRecord, SkillLoadEvent
from tests.unit.analyze.traj import T

STUDENT = BUILTIN_ROUTES["sim/student"]


def _with_boot(rec: RunRecord, tokens: int, index: bool = False) -> RunRecord:
    sys_text = "skill" + (
        "\n- `skillci/workflows/x.md` — load when: you know the failing test" if index else ""
    )
    events = [
        MessageEvent(step=0, role="system", content=sys_text, untrusted=False),
        SkillLoadEvent(step=1, path="SKILL.md", on_demand=False, tokens=tokens),
    ]
    events += [e.model_copy(update={"step": e.step + 2}) for e in rec.events]
    return rec.model_copy(update={"events": events})


def skipper(i: int, tokens: int = 400) -> RunRecord:
    """Edits and claims success without running anything after the edit."""
    rec = T(run_id=f"run-skip-{i}").localize().patch().say("Fixed it.").build(final="Fixed it.")
    return _with_boot(rec, tokens)


def verifier(i: int, tokens: int = 400, loads: bool = False) -> RunRecord:
    t = T(run_id=f"run-ok-{i}").localize()
    if loads:
        t = t.load("skillci/workflows/x.md")
    rec = t.reproduce().patch().test(exit_code=0, output="1 passed").say("done").build(passed=True)
    return _with_boot(rec, tokens, index=True)


def test_slug() -> None:
    assert profile_slug("siliconflow/Qwen/Qwen3.5-27B") == "siliconflow-qwen-qwen3-5-27b"
    assert profile_slug("sim/student") == "sim-student"


def test_config_profile_is_unmeasured() -> None:
    p = config_profile("sim/student", STUDENT, "skillci-builtin")
    assert (p.context_window, p.quantization, p.source) == (32768, "int8", "config")
    assert not p.measured and not p.skips_verification and p.loads_on_demand is None
    assert p.bootstrap_budget(1800) == int(32768 * 0.05)


def test_traits_from_runs() -> None:
    recs = [skipper(0, 400), skipper(1, 400), verifier(2, 1200, loads=True), verifier(3, 1200)]
    t = measure_traits(recs)
    assert t.runs == 4 and t.pass_rate == 0.5
    assert t.verification_skip_rate == 0.5
    assert t.on_demand_load_rate == 0.5  # 2 runs offered an on-demand file, 1 loaded it
    assert [(p.tokens, p.runs, p.pass_rate) for p in t.bootstrap_points] == [
        (400, 2, 0.0),
        (1200, 2, 1.0),
    ]
    assert t.bootstrap_sensitivity is not None and t.bootstrap_sensitivity > 0
    assert sum(t.failure_classes.values()) == pytest.approx(0.5)


def test_build_profile_measures_only_its_route_and_decides() -> None:
    recs = [skipper(0), skipper(1), verifier(2)]
    other = T(role="teacher", run_id="run-t").localize().build(passed=True)
    p = build_profile("sim/student", STUDENT, "skillci-builtin", [*recs, other])
    assert p.measured and p.traits.runs == 3 and p.run_ids == sorted(r.run_id for r in recs)
    assert p.skips_verification


def test_negative_sensitivity_tightens_the_budget() -> None:
    p = ModelProfile(
        route="m",
        model="x/m",
        context_window=100_000,
        harness="h",
        source="runs",
        traits=MeasuredTraits(runs=4, bootstrap_sensitivity=-0.3),
    )
    assert p.bootstrap_budget(1800) == 1350


def test_yaml_roundtrip_and_lookup(tmp_path: Path) -> None:
    p = build_profile("sim/student", STUDENT, "skillci-builtin", [skipper(0), verifier(1)])
    path = profile_path(tmp_path, "sim/student")
    save_profile(path, p)
    assert path.name == "sim-student.yaml"
    back = load_profile(path)
    assert back == p and back.revision == p.revision
    assert find_profile("sim/student", [tmp_path / "nope", tmp_path]) == path
    assert find_profile("other/route", [tmp_path]) is None


def test_bad_profile_file_is_a_config_error(tmp_path: Path) -> None:
    bad = tmp_path / "p.yaml"
    bad.write_text("route: x\nunknown: 1\n")
    with pytest.raises(ConfigError, match="profile"):
        load_profile(tmp_path / "missing.yaml")
    with pytest.raises(ConfigError):
        load_profile(bad)
