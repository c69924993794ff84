"""Which forge a command uses: --forge > $SKILLCI_FORGE > detected > local."""

from __future__ import annotations

import pytest

from skillci.errors import ConfigError
from skillci.forge.select import choose_forge

ACTIONS = {"GITHUB_ACTIONS": "true", "GITHUB_TOKEN": "t", "GITHUB_REPOSITORY": "o/r"}


def test_default_is_local_even_with_a_token_outside_actions() -> None:
    assert choose_forge(None, {}).kind == "local"
    assert choose_forge(None, {"GITHUB_TOKEN": "t"}).source == "default"


def test_detected_inside_actions_with_a_token() -> None:
    c = choose_forge(None, ACTIONS)
    assert (c.kind, c.repository) == ("github", "o/r")
    assert c.source.startswith("detected")
    assert choose_forge(None, {"GITHUB_ACTIONS": "true"}).kind == "local"  # no token


def test_env_then_flag_win() -> None:
    assert choose_forge(None, {**ACTIONS, "SKILLCI_FORGE": "local"}).kind == "local"
    assert choose_forge("github", {"SKILLCI_FORGE": "local"}).source == "--forge"
    assert choose_forge("LOCAL", ACTIONS).kind == "local"


def test_unknown_forge_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match="not a forge"):
        choose_forge("gitlab", {})
    with pytest.raises(ConfigError, match=r"\$SKILLCI_FORGE"):
        choose_forge(None, {"SKILLCI_FORGE": "x"})
