"""Trigger suites and the skill catalogue (pure)."""

from __future__ import annotations

import pytest

from skillci.errors import SkillFormatError
from skillci.skill.catalogue import (
    DECIDE,
    CatalogueEntry,
    parse_catalogue,
    parse_choice,
    render_catalogue,
)
from skillci.skill.package import TRIGGERS, SkillPackage
from skillci.skill.triggers import (
    TriggerQuery,
    TriggerSuite,
    package_suite,
    parse_suite,
    require_suite,
    seed_suite,
    split_of,
    suite_yaml,
)

ENTRIES = [
    CatalogueEntry(name="pdf", description='Fill <forms> & merge "PDF" files.'),
    CatalogueEntry(name="repo-debugger", description="Debug failing tests.\nNot for features."),
]


def test_suite_yaml_round_trips_and_errors_name_the_line() -> None:
    suite = TriggerSuite(
        skill="x",
        queries=[
            TriggerQuery(id="a", query="fix my test", should_trigger=True),
            TriggerQuery(id="b", query="a poem", should_trigger=False, near_miss="poetry"),
        ],
    )
    assert parse_suite(suite_yaml(suite), "t.yaml") == suite
    bad = "queries:\n- id: a\n  query: q\n  should_trigger: true\n- id: a\n  query: r\n  should_trigger: false\n"
    with pytest.raises(SkillFormatError, match="appears twice"):
        parse_suite(bad, "t.yaml")
    with pytest.raises(SkillFormatError, match=r"t.yaml:\d+"):
        parse_suite("queries:\n- id: Bad Id\n  query: q\n  should_trigger: true\n", "t.yaml")
    with pytest.raises(SkillFormatError, match="near_miss"):
        parse_suite("queries:\n- {id: a, query: q, should_trigger: true, near_miss: x}\n", "t")


def test_split_is_fixed_by_the_id_and_near_sixty_forty() -> None:
    ids = [f"q{i}" for i in range(1000)]
    train = sum(split_of(i) == "train" for i in ids)
    assert 550 < train < 650
    assert split_of("q1") == split_of("q1")
    q = TriggerQuery(id="q7", query="x", should_trigger=True)
    assert q.split == split_of("q7")


def test_package_suite_is_read_from_the_skillci_folder() -> None:
    files = {"SKILL.md": b"---\nname: x\ndescription: d\n---\n"}
    assert package_suite(SkillPackage(files)) is None
    with pytest.raises(SkillFormatError, match="no trigger suite"):
        require_suite(SkillPackage(files))
    text = "queries:\n- {id: a, query: q, should_trigger: true}\n"
    pkg = SkillPackage({**files, TRIGGERS: text.encode()})
    assert TRIGGERS == "skillci/evals/triggers.yaml"
    assert require_suite(pkg).queries[0].id == "a"


def test_seeded_suite_uses_the_description_clauses() -> None:
    s = seed_suite(
        "art",
        "Creating art with p5.js. Use this when users request generative art or flow fields. "
        "Not for photo editing or image retouching.",
    )
    should = [q.query for q in s.queries if q.should_trigger]
    shouldnt = [q for q in s.queries if not q.should_trigger]
    assert should == ["Help me: users request generative art or flow fields"]
    assert any("photo editing" in q.query and q.near_miss for q in shouldnt)
    assert s.note and "rewrite" in s.note
    assert seed_suite("x", "Lint YAML files.").queries[0].query == "Lint YAML files"


def test_a_skill_the_model_may_not_load_should_trigger_on_nothing() -> None:
    from skillci.skill.models import SkillFrontmatter

    fm = SkillFrontmatter.model_validate(
        {"name": "deploy", "description": "d", "disable-model-invocation": True}
    )
    assert not fm.model_invocable
    assert SkillFrontmatter.model_validate({"name": "x", "description": "d"}).model_invocable
    s = seed_suite("deploy", "Use when the user asks to deploy.", model_invocable=False)
    assert s.queries and not [q for q in s.queries if q.should_trigger]
    assert any(q.near_miss and "disable-model-invocation" in q.near_miss for q in s.queries)


@pytest.mark.parametrize("harness", ["builtin", "folder"])
def test_catalogue_round_trips_in_each_presentation(harness: str) -> None:
    prompt = render_catalogue(list(reversed(ENTRIES)), harness)  # type: ignore[arg-type]
    assert prompt.rstrip().endswith(DECIDE)
    assert prompt.index("pdf") < prompt.index("repo-debugger")  # sorted by name
    parsed = parse_catalogue(prompt)
    assert parsed is not None
    assert [e.name for e in parsed] == ["pdf", "repo-debugger"]
    assert parsed[1].description == "Debug failing tests. Not for features."
    if harness == "builtin":
        assert parsed[0].description == ENTRIES[0].description
    assert parse_catalogue("You are a software agent.") is None


def test_choice_is_the_first_catalogue_name_in_the_answer() -> None:
    names = ["pdf", "repo-debugger", "repo"]
    assert parse_choice("repo-debugger", names) == "repo-debugger"
    assert parse_choice("I would load `repo` then pdf", names) == "repo"
    assert parse_choice("None", names) is None
    assert parse_choice("", names) is None
    assert parse_choice("pdfs are nice", names) is None


def test_choice_declining_or_negated_is_none_and_paraphrased_names_match() -> None:
    names = ["pdf", "repo-debugger", "repo"]
    declined = "None of these fit; repo-debugger is for CI failures, not this."
    assert parse_choice(declined, names) is None
    assert parse_choice("No skill: pdf would be wrong here", names) is None
    assert parse_choice("repo-debugger is not for this; pdf fits", names) == "pdf"
    assert parse_choice("I'd use the repo debugger skill", names) == "repo-debugger"
    assert parse_choice("I'd use the repo debugger skill", list(reversed(names))) == (
        "repo-debugger"
    )
    assert parse_choice("I wouldn't load pdf", names) is None
