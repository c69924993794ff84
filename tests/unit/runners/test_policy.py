"""The sandbox policy's default (docs/design/310): flag, then $SKILLCI_SANDBOX, then CI."""

from __future__ import annotations

import pytest

from skillci.errors import UsageError
from skillci.runners.policy import current_policy, default_policy, reset_policy, use_policy


@pytest.mark.parametrize(
    ("env", "want"),
    [
        ({}, "auto"),
        ({"CI": "true"}, "required"),
        ({"CI": "1"}, "required"),
        ({"CI": "false"}, "auto"),
        ({"CI": "true", "SKILLCI_SANDBOX": "none"}, "none"),
        ({"SKILLCI_SANDBOX": "required"}, "required"),
    ],
)
def test_default_policy(env: dict[str, str], want: str) -> None:
    assert default_policy(env) == want


def test_a_bad_policy_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="SKILLCI_SANDBOX='maybe'"):
        default_policy({"SKILLCI_SANDBOX": "maybe"})
    with pytest.raises(UsageError, match="unknown sandbox policy"):
        use_policy("sometimes")


def test_the_flag_wins_until_reset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    monkeypatch.delenv("SKILLCI_SANDBOX", raising=False)
    try:
        assert use_policy("none") == "none" and current_policy() == "none"
    finally:
        reset_policy()
    assert current_policy() == "required"
