"""HarborEnvironment refuses before any trial: an unknown environment (exit 2) and a cloud
environment whose credentials are not set (exit 4), each with a one-line hint naming what to
set. No Harbor needed: the refusal comes before the executable is looked for."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.errors import ExitCode, SkillciError
from skillci.runners.harbor_remote import (
    ENVIRONMENTS,
    RUN_HERE,
    HarborEnvironment,
    missing_credentials,
)

CLOUD = sorted(set(ENVIRONMENTS) - RUN_HERE)


@pytest.fixture
def bare_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for groups in ENVIRONMENTS.values():
        for g in groups:
            for var in g:
                monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.modal.toml
    return tmp_path


@pytest.mark.parametrize("name", CLOUD)
def test_a_cloud_environment_without_credentials_is_refused_with_exit_4_and_the_names(
    name: str, bare_env: Path
) -> None:
    with pytest.raises(SkillciError) as err:
        HarborEnvironment(name, bare_env / "work", harbor=str(bare_env / "no-harbor"))
    assert err.value.exit_code == ExitCode.EXTERNAL
    message = f"{err.value} {err.value.hint}"
    assert "\n" not in message
    for var in ENVIRONMENTS[name][0]:
        assert var in str(err.value) and f"{var}=..." in (err.value.hint or "")
    assert not (bare_env / "work").exists()


def test_every_cloud_environment_names_credentials_and_docker_needs_none(bare_env: Path) -> None:
    assert set(ENVIRONMENTS) == {"docker", "daytona", "modal", "e2b", "runloop"}
    assert missing_credentials("docker") is None
    for name in CLOUD:
        assert missing_credentials(name) == list(ENVIRONMENTS[name][0])


def test_any_one_credential_group_is_enough_half_a_group_is_not(
    bare_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DAYTONA_JWT_TOKEN", "t")
    assert missing_credentials("daytona") == ["DAYTONA_API_KEY"]
    monkeypatch.setenv("DAYTONA_ORGANIZATION_ID", "o")
    assert missing_credentials("daytona") is None
    assert missing_credentials("modal") == ["MODAL_TOKEN_ID", "MODAL_TOKEN_SECRET"]
    (bare_env / ".modal.toml").write_text("[default]\n")  # what `modal token new` writes
    assert missing_credentials("modal") is None


def test_an_unknown_environment_is_invalid_input_listing_the_known_ones(bare_env: Path) -> None:
    with pytest.raises(SkillciError, match="unknown Harbor environment 'k8s'") as err:
        HarborEnvironment("k8s", bare_env / "work")
    assert err.value.exit_code == ExitCode.INVALID_INPUT
    assert "docker, daytona, modal, e2b, runloop" in (err.value.hint or "")


def test_credentials_present_then_a_missing_harbor_is_the_next_refusal(
    bare_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("E2B_API_KEY", "k")
    with pytest.raises(SkillciError, match="not found") as err:
        HarborEnvironment("e2b", bare_env / "work", harbor=str(bare_env / "no-harbor"))
    assert err.value.exit_code == ExitCode.EXTERNAL
