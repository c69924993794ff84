"""The public API of skillci.patch: ``__all__`` names exist; saved shapes carry schema_version."""

from __future__ import annotations

import skillci.patch


def test_all_names_exist() -> None:
    missing = [n for n in skillci.patch.__all__ if not hasattr(skillci.patch, n)]
    assert missing == []


def test_saved_shapes_are_versioned() -> None:
    from skillci.patch.check import CHECK_SCHEMA_VERSION

    want = {"patch": 1, "change-list": 1, "patch-check-report": CHECK_SCHEMA_VERSION}
    assert CHECK_SCHEMA_VERSION == 2  # 2: guard_models, one opinion per route (design 458)
    for name, model in skillci.patch.SAVED_MODELS.items():
        assert model.model_fields["schema_version"].default == want[name], name
