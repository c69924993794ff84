from __future__ import annotations

import types

import skillci.gate


def test_all_matches_public_names() -> None:
    # submodules (impact, verdict, html, ...) become attributes of the package once any test
    # imports them, so they are told apart by type, not by a list of names
    public = {
        name
        for name, value in vars(skillci.gate).items()
        if not name.startswith("_")
        and name != "annotations"
        and not isinstance(value, types.ModuleType)
    }
    assert sorted(skillci.gate.__all__) == sorted(public)
