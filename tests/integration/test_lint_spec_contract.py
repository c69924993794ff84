"""Contract: lint follows the Agent Skills spec's reference validator (``skills-ref``).

Every finding of ``skills_ref.validate`` on every skill of the corpora (and on variants
that break each of its rules) is a lint finding too, on the same field for the same
reason; and ``lint --strict`` fails exactly the skills the validator rejects.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import skills_ref  # the dev extra installs it; CI too

from skillci.skill.lint import Finding, lint
from skillci.skill.package import SkillPackage, read_executables, read_tree
from tests.conftest import ROOT

CORPORA = [
    ROOT / "tests" / "fixtures" / "real-skills",
    ROOT / "tests" / "fixtures" / "plain-skills",
    ROOT / "skills",
]
CORPUS_SKILLS = sorted(
    p.parent for corpus in CORPORA for p in corpus.rglob("SKILL.md") if ".git" not in p.parts
)

# each reason of skills_ref's messages, as (field, reasons skillci may give)
_MESSAGES: list[tuple[str, str, frozenset[str]]] = [
    (r"^Missing required field in frontmatter: (\w+)", "\\1", frozenset({"missing"})),
    (r"^Field '(\w+)' must be a non-empty string", "\\1", frozenset({"empty"})),
    (r"^Skill name '.*' exceeds", "name", frozenset({"too-long"})),
    (r"^Skill name '.*' must be lowercase", "name", frozenset({"uppercase"})),
    (r"^Skill name cannot start or end with a hyphen", "name", frozenset({"hyphen-edge"})),
    (r"^Skill name cannot contain consecutive hyphens", "name", frozenset({"double-hyphen"})),
    (r"^Skill name '.*' contains invalid characters", "name", frozenset({"invalid-chars"})),
    (r"^Directory name '.*' must match skill name", "name", frozenset({"folder-mismatch"})),
    (r"^Description exceeds", "description", frozenset({"too-long"})),
    (r"^Field 'compatibility' must be a string", "compatibility", frozenset({"not-string"})),
    (r"^Compatibility exceeds", "compatibility", frozenset({"too-long"})),
    (r"^SKILL.md must start with YAML frontmatter", "frontmatter", frozenset({"no-frontmatter"})),
    (r"^SKILL.md frontmatter not properly closed", "frontmatter", frozenset({"unclosed"})),
    (r"^SKILL.md frontmatter must be a YAML mapping", "frontmatter", frozenset({"not-mapping"})),
]
_YAML = frozenset({"yaml-syntax", "yaml-strict", "duplicate-key"})


def expected(message: str) -> list[tuple[str, frozenset[str]]]:
    """(field, acceptable reasons) for one skills_ref message; fails on one it never gave."""
    m = re.match(r"^Unexpected fields in frontmatter: (.*?)\. Only", message)
    if m:
        return [(f, frozenset({"unknown-field"})) for f in m.group(1).split(", ")]
    if message.startswith("Invalid YAML in frontmatter"):
        # the field is whatever StrictYAML stumbled on; skillci names the key if it can
        return [("*", _YAML)]
    for pattern, field, reasons in _MESSAGES:
        mm = re.match(pattern, message)
        if mm:
            return [(mm.expand(field), reasons)]
    raise AssertionError(f"skills_ref message this contract does not know: {message!r}")


def check(skill_dir: Path) -> tuple[list[str], list[Finding], int]:
    """Assert the contract on one skill folder; return (validator, findings, strict errors)."""
    problems = skills_ref.validate(skill_dir)
    pkg = SkillPackage(
        read_tree(skill_dir), root=str(skill_dir), executable=read_executables(skill_dir)
    )
    found = lint(pkg, strict=True, folder=skill_dir.name).findings
    spec = [(f.field, f.reason) for f in found if f.reason is not None]
    for message in problems:
        for field, reasons in expected(message):
            assert any((field in ("*", fld)) and r in reasons for fld, r in spec), (
                f"{skill_dir}: skills_ref says {message!r}; lint: {[f.format() for f in found]}"
            )
    return problems, found, sum(f.severity == "error" for f in found)


@pytest.mark.parametrize(
    "skill_dir", CORPUS_SKILLS, ids=[str(p.relative_to(ROOT)) for p in CORPUS_SKILLS]
)
def test_corpus_skill(skill_dir: Path) -> None:
    problems, _found, errors = check(skill_dir)
    assert bool(problems) == bool(errors), (skill_dir, problems)


def test_the_corpus_has_both_kinds() -> None:
    """The contract above means something: the corpora hold skills the validator rejects."""
    rejected = [d for d in CORPUS_SKILLS if skills_ref.validate(d)]
    assert len(CORPUS_SKILLS) >= 70 and 3 <= len(rejected) < len(CORPUS_SKILLS)


BODY = "\n# Skill\n\nRun `pytest -q` and read the first failure.\n"
VARIANTS: dict[str, str] = {
    "ok": "name: {d}\ndescription: Runs the tests.\nlicense: MIT\n",
    "no-license": "name: {d}\ndescription: Runs the tests.\n",
    "extension": "name: {d}\ndescription: d\nwhen_to_use: x\nargument-hint: '[file]'\n"
    "disable-model-invocation: true\nversion: 1.0.0\n",
    "missing-description": "name: {d}\n",
    "empty-description": "name: {d}\ndescription: ''\n",
    "missing-name": "description: d\n",
    "empty-name": "name:\ndescription: d\n",
    "upper": "name: My-Skill\ndescription: d\n",
    "hyphens": "name: -a--b\ndescription: d\n",
    "dot": "name: my.skill\ndescription: d\n",
    "long-name": "name: " + "a" * 65 + "\ndescription: d\n",
    "folder": "name: other-name\ndescription: d\n",
    "long-description": "name: {d}\ndescription: " + "x" * 1025 + "\n",
    "long-compat": "name: {d}\ndescription: d\ncompatibility: " + "c" * 501 + "\n",
    "compat-list": "name: {d}\ndescription: d\ncompatibility:\n  - a\n",
    "flow": "name: {d}\ndescription: d\nallowed-tools: [Bash, Read]\n",
    "anchor": "name: &n {d}\ndescription: d\n",
    "tag": "name: {d}\ndescription: !!str d\n",
    "duplicate": "name: {d}\ndescription: d\ndescription: e\n",
    "syntax": "name: {d}\ndescription: a: b\n",
    "scalar": "just text\n",
    "number-name": "name: 123\ndescription: d\n",
    "unicode-name": "name: 技能\ndescription: d\n",
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_variant(variant: str, tmp_path: Path) -> None:
    folder = {"unicode-name": "技能", "number-name": "123"}.get(variant, "skill-x")
    d = tmp_path / folder
    d.mkdir()
    fm = VARIANTS[variant].replace("{d}", d.name)
    (d / "SKILL.md").write_text(f"---\n{fm}---\n{BODY}", encoding="utf-8")
    problems, found, errors = check(d)
    assert bool(problems) == bool(errors), (problems, [f.format() for f in found])
    if variant in ("ok", "no-license", "number-name", "unicode-name"):
        assert problems == [] and found == []  # optional fields are never "missing"


def test_stricter_than_the_validator_where_harnesses_misread(tmp_path: Path) -> None:
    """StrictYAML reads ``description: null`` as the text "null"; every YAML 1.1/1.2
    parser a harness uses reads no description. The one documented divergence."""
    d = tmp_path / "s"
    d.mkdir()
    (d / "SKILL.md").write_text("---\nname: s\ndescription: null\n---\n" + BODY)
    problems, found, errors = check(d)
    assert problems == [] and errors == 1
    assert [(f.code, f.line) for f in found] == [("SK001", 3)]


def test_unclosed_bom_and_no_frontmatter(tmp_path: Path) -> None:
    texts = {
        "bom": "\ufeff---\nname: s\ndescription: d\n---\n",
        "none": "# Skill\n",
        "unclosed": "---\nname: s\ndescription: d\n",
    }
    for key, text in texts.items():
        d = tmp_path / key / "s"
        d.mkdir(parents=True)
        (d / "SKILL.md").write_text(text, encoding="utf-8")
        problems, _found, errors = check(d)
        assert problems and errors, key


def test_severity_says_who_it_breaks(tmp_path: Path) -> None:
    d = tmp_path / "s"
    d.mkdir()
    (d / "SKILL.md").write_text(
        "---\nname: s\ndescription: d\nwhen_to_use: on PRs\nversion: 2\n"
        "allowed-tools: [Bash]\n---\n" + BODY,
        encoding="utf-8",
    )
    pkg = SkillPackage(read_tree(d), root=str(d))
    loose = {f.field: f for f in lint(pkg, folder="s").findings if f.reason}
    assert loose["when_to_use"].severity == "warning"
    assert "Claude Code" in loose["when_to_use"].message
    assert "no harness" in loose["version"].message
    assert loose["frontmatter"].code == "SK007" and loose["frontmatter"].line == 6
    strict = [f for f in lint(pkg, strict=True, folder="s").findings if f.reason]
    assert {f.severity for f in strict} == {"error"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-m", "skillci", "skill", "lint", *args, str(d)]
        return subprocess.run(cmd, capture_output=True, text=True, check=False, timeout=120)

    assert cli().returncode == 0
    res = cli("--strict")
    assert res.returncode == 2 and "SK006" in res.stdout and "[Bash]" not in res.stdout
    assert "allowed-tools" not in res.stdout or "flow style ([a, b]" in res.stdout
