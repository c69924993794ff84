from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.tasks.models import RewardState
from skillci.tasks.reward import (
    logs_layout,
    primary_reward,
    read_reward,
    rewrite_logs_paths,
    verifier_env,
)


def _logs(tmp_path: Path, **files: str) -> Path:
    layout = logs_layout(tmp_path / "trial").ensure()
    for name, text in files.items():
        (layout.verifier / name.replace("_", ".")).write_text(text)
    return layout.root


@pytest.mark.parametrize(
    ("text", "value", "passed"),
    [("1", 1.0, True), ("1.0\n", 1.0, True), ("0", 0.0, False), (" 0.5 ", 0.5, False)],
)
def test_reward_txt(tmp_path: Path, text: str, value: float, passed: bool) -> None:
    r = read_reward(_logs(tmp_path, reward_txt=text))
    assert r.state is RewardState.ok
    assert r.value == value
    assert r.passed is passed
    assert r.source is not None
    assert r.source.name == "reward.txt"


def test_threshold_is_configurable(tmp_path: Path) -> None:
    logs = _logs(tmp_path, reward_txt="0.5")
    assert read_reward(logs).passed is False
    assert read_reward(logs, threshold=0.5).passed is True


@pytest.mark.parametrize("text", ["", "  \n", "pass", "1 0", "nan", "inf", "1.0\nextra"])
def test_unreadable_txt_is_an_explicit_state_not_a_fail(tmp_path: Path, text: str) -> None:
    r = read_reward(_logs(tmp_path, reward_txt=text))
    assert r.state is RewardState.parse_error
    assert r.value is None
    assert r.passed is None
    assert r.error
    assert "reward.txt" in r.error


def test_missing_reward(tmp_path: Path) -> None:
    r = read_reward(_logs(tmp_path))
    assert r.state is RewardState.missing
    assert r.passed is None
    assert r.error is not None
    assert "no reward.txt or reward.json" in r.error


@pytest.mark.parametrize(
    ("doc", "value", "details"),
    [
        ({"reward": 1.0, "tests": {"a": True}}, 1.0, {"tests": {"a": True}}),
        ({"reward": 0}, 0.0, {}),
        ({"score": 0.75}, 0.75, {"score": 0.75}),
        (1, 1.0, {}),
    ],
)
def test_reward_json(tmp_path: Path, doc: object, value: float, details: dict[str, object]) -> None:
    r = read_reward(_logs(tmp_path, reward_json=json.dumps(doc)))
    assert r.state is RewardState.ok
    assert r.value == value
    assert r.details == details


@pytest.mark.parametrize(
    "text",
    [
        "{",
        '{"a": 1, "b": 2}',
        '{"a": "x", "b": null}',
        '{"reward": "1"}',
        '{"reward": true}',
        "[1]",
        '{"reward": null}',
    ],
)
def test_bad_reward_json(tmp_path: Path, text: str) -> None:
    r = read_reward(_logs(tmp_path, reward_json=text))
    assert r.state is RewardState.parse_error
    assert r.passed is None


def test_txt_and_json_must_agree(tmp_path: Path) -> None:
    r = read_reward(_logs(tmp_path, reward_txt="1", reward_json='{"reward": 0}'))
    assert r.state is RewardState.parse_error
    assert r.error is not None
    assert "says" in r.error
    r = read_reward(_logs(tmp_path / "b", reward_txt="1", reward_json='{"reward": 1, "n": 3}'))
    assert r.state is RewardState.ok
    assert r.details == {"n": 3}


def test_layout_and_env(tmp_path: Path) -> None:
    layout = logs_layout(tmp_path / "t1")
    assert layout.verifier == tmp_path / "t1" / "logs" / "verifier"
    assert layout.agent == tmp_path / "t1" / "logs" / "agent"
    assert layout.reward_txt.name == "reward.txt"
    env = verifier_env(layout)
    assert env == {"LOGS_DIR": str(layout.root), "SKILLCI_LOGS_DIR": str(layout.root)}
    assert not layout.root.exists()
    layout.ensure()
    assert layout.verifier.is_dir()
    assert layout.agent.is_dir()


@pytest.mark.parametrize(
    ("script", "expected"),
    [
        ("echo 1 > /logs/verifier/reward.txt", "echo 1 > /T/logs/verifier/reward.txt"),
        ('mkdir -p "/logs/verifier" /logs/agent', 'mkdir -p "/T/logs/verifier" /T/logs/agent'),
        ("cd /logs", "cd /T/logs"),
        ("open('/logs/verifier/reward.json','w')", "open('/T/logs/verifier/reward.json','w')"),
        ("/var/logs/x ./logs/x $X/logs ${X}/logs /logsfoo", None),
        ('"${LOGS_DIR:-/logs}/verifier"', None),
    ],
)
def test_rewrite_logs_paths(script: str, expected: str | None) -> None:
    assert rewrite_logs_paths(script, Path("/T/logs")) == (expected or script)


def test_named_rewards_are_named_unless_a_primary_metric_is_declared(tmp_path: Path) -> None:
    text = '{"correctness": 1, "performance": 0.5}'
    plain = read_reward(_logs(tmp_path / "a", reward_json=text))
    assert plain.state is RewardState.parse_error and "multi-dimensional" in (plain.error or "")
    picked = read_reward(_logs(tmp_path / "b", reward_json=text), primary="performance")
    assert picked.state is RewardState.ok and picked.value == 0.5
    assert picked.details["correctness"] == 1 and "performance" in picked.details["primary_reward"]
    wrong = read_reward(_logs(tmp_path / "c", reward_json=text), primary="speed")
    assert wrong.state is RewardState.parse_error and "speed" in (wrong.error or "")


def test_primary_reward_rule() -> None:
    assert primary_reward({"correctness": 1.0, "performance": 0.4}) == (
        0.4,
        "minimum of 2 named rewards (correctness, performance)",
    )
    assert primary_reward({"correctness": 1.0, "performance": 0.4}, "correctness")[0] == 1.0
    assert primary_reward({"reward": 0.5, "x": 1})[0] == 0.5
    assert primary_reward({"only": 0.25})[0] == 0.25
    assert primary_reward({"a": "n/a"})[0] is None
