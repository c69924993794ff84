from __future__ import annotations

from skillci.schemas import schema_files
from tests.conftest import ROOT


def test_committed_schemas_match_models() -> None:
    expected = schema_files()
    on_disk = {p.name: p.read_bytes() for p in (ROOT / "schemas").glob("*.schema.json")}
    stale = sorted(n for n in expected if on_disk.get(n) != expected[n])
    extra = sorted(set(on_disk) - set(expected))
    assert (stale, extra) == ([], []), "run `skillci skill schemas` and commit schemas/"


def test_every_saved_model_has_schema_version() -> None:
    from skillci.schemas import saved_models

    for name, model in saved_models().items():
        if name == "skill-frontmatter":  # Anthropic's format, not ours
            continue
        assert "schema_version" in model.model_fields, name
