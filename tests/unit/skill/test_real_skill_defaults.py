"""Import accepts what exists; defaults fit real skills; every loaded file is counted."""

from __future__ import annotations

from pathlib import Path

from skillci.skill.lint import lint
from skillci.skill.package import read_tree
from skillci.skill.porting import export_plain, import_plain
from skillci.skill.render import render
from skillci.skill.vague import find_vague_instructions, instruction_spans
from tests.conftest import PLAIN_FIXTURES

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "real-skills"


def _plain(frontmatter: str, body: str = "# Skill\n\nRun the tests.\n") -> dict[str, bytes]:
    return {"SKILL.md": f"---\n{frontmatter}---\n{body}".encode()}


def test_spec_violations_import_and_lint_says_who_they_break() -> None:
    long = "Converts files. " * 67  # 1,072 chars, like a published skill's description
    files = _plain(f"name: PDF Tools\ndescription: {long}<b>\n")
    files["examples/sample.json"] = b'{"a": 1}\n'  # a skill's own examples/ folder
    pkg = import_plain(files, source="vendor/pdf-tools")
    assert pkg.manifest.name == "pdf-tools"
    assert export_plain(pkg) == files
    spec = [
        (f.line, f.field, f.reason, f.severity) for f in lint(pkg).findings if f.code == "SK005"
    ]
    # harnesses refuse both: errors; no "license is missing" (the spec makes it optional)
    assert spec == [
        (2, "name", "uppercase", "error"),
        (2, "name", "invalid-chars", "error"),
        (3, "description", "too-long", "error"),
    ]


def test_name_differing_from_the_folder_is_an_error() -> None:
    files = _plain("name: other-name\ndescription: d\n")
    pkg = import_plain(files, source="skills/my-skill")
    assert lint(pkg).findings == []  # lint was not told where the skill is installed
    (f,) = lint(pkg, folder="my-skill").findings
    assert (f.code, f.severity, f.line) == ("SK005", "error", 2)
    assert "'my-skill'" in f.message


def test_budgets_come_from_the_measured_skill_at_import() -> None:
    big = "Run step {i} of the procedure and record its exit code.\n" * 600
    pkg = import_plain(
        _plain("name: big\ndescription: d\nlicense: MIT\n", big.format(i=1)), source="big"
    )
    b = pkg.manifest.token_budget
    rendered = render(pkg)
    assert b.bootstrap >= rendered.bootstrap_tokens * 1.25 > 1800
    assert b.max_total >= rendered.total_tokens
    assert not [f for f in lint(pkg).findings if f.code.startswith("SK02")]
    small = import_plain(_plain("name: s\ndescription: d\nlicense: MIT\n"), source="s")
    assert small.manifest.token_budget.bootstrap == 1800  # never below the defaults


def test_reference_docs_are_counted_and_indexed_with_the_linking_sentence() -> None:
    src = PLAIN_FIXTURES / "anthropic-pdf"
    pkg = import_plain(read_tree(src), source=str(src))
    rendered = render(pkg, "builtin")
    forms = rendered.file("forms.md")
    assert forms is not None and forms.kind == "on_demand" and forms.tokens > 0
    assert (
        forms.when
        == "If you need to fill out a PDF form, read forms.md and follow its instructions."
    )
    assert rendered.file("LICENSE.txt").kind == "bundled"  # type: ignore[union-attr]
    assert rendered.total_tokens > rendered.bootstrap_tokens + forms.tokens
    index = rendered.file("skill.json")
    assert index is not None and b'"path": "reference.md"' in index.content
    assert export_plain(pkg) == read_tree(src)  # counting changes no byte


def test_vague_phrases_count_only_in_instruction_sentences() -> None:
    text = (
        "# Review if needed\n"
        "Word counts are approximate; go longer if needed.\n"
        "Extract the fields if needed.\n"
        "- You don't fully understand the issue\n"
        '- "I don\'t fully understand but this might work"\n'
        "- Generate backup slides if needed\n"
        "2. Merge the tables (convert if needed)\n"
        "```\n# only if needed\n```\n"
        "| col | retry if needed |\n"
        "必要时使用工具。\n"
    )
    hits = [(text.count("\n", 0, s) + 1, p) for s, _e, p, _ in find_vague_instructions(text)]
    assert hits == [(3, "if needed"), (6, "if needed"), (7, "if needed"), (12, "必要时使用工具")]
    assert all(text[s:e].strip() for s, e in instruction_spans(text))


def test_a_descriptive_vague_phrase_in_a_native_package_is_not_an_error() -> None:
    from tests.unit.skill.helpers import bundled, edit

    pkg = edit(
        bundled(), "SKILL.md", "Work in this order", "It works if needed. Work in this order"
    )
    assert lint(pkg).errors == 0
    pkg = edit(
        bundled(), "SKILL.md", "Work in this order", "Carefully analyze, then work in this order"
    )
    assert [f.code for f in lint(pkg).findings if f.severity == "error"] == ["SK010"]


def test_odd_modes_and_non_utf8_text_import_losslessly(tmp_path: Path) -> None:
    src = tmp_path / "odd"
    src.mkdir()
    (src / "SKILL.md").write_bytes(_plain("name: odd\ndescription: d\nlicense: MIT\n")["SKILL.md"])
    (src / "notes-latin1.md").write_bytes("Caf\xe9 cr\xe8me\n".encode("latin-1"))
    tool = src / "run.sh"
    tool.write_bytes(b"#!/bin/sh\necho hi\n")
    tool.chmod(0o4755)
    notes: list[str] = []
    files = read_tree(src, notes)
    assert notes == [f"{tool}: mode 4755: only the executable bit is kept"]
    pkg = import_plain(files, executable=frozenset({"run.sh"}), source=str(src))
    assert export_plain(pkg) == files and pkg.executable == {"run.sh"}
    assert lint(pkg).errors == 0
    rendered = render(pkg)
    assert rendered.file("notes-latin1.md").kind == "bundled"  # type: ignore[union-attr]
