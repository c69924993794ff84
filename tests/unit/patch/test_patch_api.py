"""The public API of skillci.patch: ``__all__`` names exist; saved shapes carry schema_version."""

from __future__ import annotations

import skillci.patch


def test_all_names_exist() -> None:
    missing = [n for n in skillci.patch.__all__ if not hasattr(skillci.patch, n)]
    assert missing == []


def test_saved_shapes_are_versioned() -> None:
    for name, model in skillci.patch.SAVED_MODELS.items():
        assert model.model_fields["schema_version"].default == 1, name
