"""Loaders never crash: arbitrary bytes and mutated YAML give a SkillciError with file and line."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skillci.errors import SkillciError
from skillci.skill.lint import lint
from skillci.skill.package import SkillPackage
from tests.unit.skill.helpers import bundled

BASE = bundled()
TARGETS = [
    "skillci.yaml",
    "skillci/rules/finish.yaml",
    "skillci/rules/recovery.yaml",
    "SKILL.md",
    "skillci/evals/smoke.yaml",
]


def _load_all(pkg: SkillPackage) -> None:
    _ = pkg.manifest
    _ = pkg.frontmatter
    _ = pkg.rules
    _ = pkg.eval_list("smoke")


def _check(pkg: SkillPackage) -> None:
    try:
        _load_all(pkg)
    except SkillciError as err:
        located = err.file is not None and err.line is not None and err.line >= 1
        assert located, err  # noqa: PT017 - a failure here names the unlocated error
    report = lint(pkg)  # lint never raises for the package's own content
    for f in report.findings:
        assert f.line >= 1 and f.file


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(target=st.sampled_from(TARGETS), data=st.binary(max_size=400))
def test_arbitrary_bytes(target: str, data: bytes) -> None:
    _check(BASE.with_files({target: data}))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    target=st.sampled_from(TARGETS),
    edits=st.lists(
        st.tuples(
            st.integers(0, 10_000),
            st.integers(0, 8),
            st.sampled_from(
                [
                    "",
                    ":",
                    "- ",
                    "  ",
                    "\n",
                    "[",
                    "{",
                    "'",
                    '"',
                    "&a",
                    "*a",
                    "!!python/object",
                    "\t",
                    "---\n",
                    "\x00",
                    "é",
                    "1e999",
                    "? ",
                ]
            ),
        ),
        min_size=1,
        max_size=4,
    ),
)
def test_mutated_yaml(target: str, edits: list[tuple[int, int, str]]) -> None:
    text = BASE.files[target].decode()
    for pos, cut, ins in edits:
        pos %= len(text) + 1
        text = text[:pos] + ins + text[pos + cut :]
    _check(BASE.with_files({target: text.encode("utf-8", "surrogatepass")}))
