"""Textual manifest edits and the compatibility matrix (pure)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.errors import SkillFormatError
from skillci.release import compat
from skillci.release.manifest_text import set_compatibility, set_version
from skillci.skill.models import CompatEntry, Compatibility
from skillci.skill.package import SkillPackage


def _manifest(repo_debugger: Path) -> str:
    return (repo_debugger / "skillci.yaml").read_text()


def test_set_version_keeps_every_other_byte(repo_debugger: Path) -> None:
    text = _manifest(repo_debugger)
    out = set_version(text, "0.8.0")
    diff = [(a, b) for a, b in zip(text.splitlines(), out.splitlines(), strict=True) if a != b]
    assert diff == [("version: 0.7.0", "version: 0.8.0")]


def test_set_version_keeps_quotes_and_comment() -> None:
    text = "# head\nname: x\nversion: '1.2.3'  # bumped by skillci\ntarget_runtime:\n  model_family: f\n  agent_harness: h\n"
    assert "version: '1.3.0'  # bumped by skillci\n" in set_version(text, "1.3.0")


def test_set_version_without_version_line_is_a_format_error() -> None:
    with pytest.raises(SkillFormatError, match="version"):
        set_version("name: x\n", "1.0.0")


def test_set_compatibility_replaces_only_that_block(repo_debugger: Path) -> None:
    text = _manifest(repo_debugger)
    pkg = SkillPackage.from_dir(repo_debugger)
    new = compat.record_verified(
        pkg.manifest.compatibility,
        model="sim/student",
        quantization="int8",
        harness="skillci-builtin-v1",
        score=0.8333333,
        eval_id="gate-1",
        version="0.8.0",
    )
    out = set_compatibility(text, new)
    before, after = text.split("compatibility:")[0], out.split("compatibility:")[0]
    assert before == after  # comments and keys above are untouched
    assert out.endswith(text[text.index("patch_limits:") :])
    assert (
        "compatibility:\n  verified:\n    - model: sim/student\n      quantization: int8\n"
        "      harness: skillci-builtin-v1\n      score: 0.8333\n      eval_id: gate-1\n"
        "      version: 0.8.0\n  unverified:\n    - harness: repo-agent-v4\n" in out
    )


def test_record_verified_replaces_the_same_runtime_in_any_list() -> None:
    c = Compatibility(
        verified=[CompatEntry(model="a", harness="h", score=0.5, eval_id="g0")],
        unverified=[CompatEntry(model="b", harness="h")],
        incompatible=[CompatEntry(model="c", harness="h", reason="no tools")],
    )
    out = compat.record_verified(
        c, model="b", quantization=None, harness="h", score=0.9, eval_id="g1", version="1.0.0"
    )
    assert [r.model for r in out.verified] == ["a", "b"]
    assert out.unverified == [] and [r.model for r in out.incompatible] == ["c"]
    again = compat.record_verified(
        out, model="a", quantization=None, harness="h", score=0.7, eval_id="g2", version="1.1.0"
    )
    assert [(r.model, r.eval_id) for r in again.verified] == [("a", "g2"), ("b", "g1")]


def test_mark_rolled_back_moves_rows_of_that_version() -> None:
    c = Compatibility(
        verified=[
            CompatEntry(model="a", harness="h", score=0.5, eval_id="g0", version="1.0.0"),
            CompatEntry(model="b", harness="h", score=0.6, eval_id="g1", version="1.1.0"),
        ]
    )
    out = compat.mark_rolled_back(c, "1.1.0", "canary failed")
    assert [r.model for r in out.verified] == ["a"]
    assert out.incompatible[0].reason == "rolled back 1.1.0: canary failed"
    assert out.incompatible[0].score is None
    assert compat.mark_rolled_back(c, "9.9.9", "x") is c


def test_compatibility_markdown_table() -> None:
    c = Compatibility(
        verified=[
            CompatEntry(
                model="sim/student",
                quantization="int8",
                harness="h1",
                score=0.8,
                eval_id="g1",
                version="0.8.0",
            )
        ],
        unverified=[CompatEntry(harness="h2")],
        incompatible=[CompatEntry(harness="h3", reason="missing_structured_tool_results")],
    )
    md = compat.render_markdown("s", "0.8.0", c)
    assert md.splitlines()[-3:] == [
        "| sim/student | int8 | h1 | verified | 80.0% | g1 (0.8.0) |",
        "| any | any | h2 | unverified | |  |",
        "| any | any | h3 | incompatible | | missing_structured_tool_results |",
    ]
    assert compat.describe(c.verified[0]) == "sim/student int8 / h1"
    assert compat.describe_all(c.unverified) == "h2" and compat.describe_all([]) == "none"
