"""The simulator's documented trigger model (docs/simulator.md, "Trigger decisions")."""

from __future__ import annotations

from skillci.providers.sim.provider import respond, trigger_answer
from skillci.providers.sim.trigger import MIN_SCORE, choose, score, stem, stems
from skillci.skill.catalogue import CatalogueEntry, render_catalogue

DEBUG = CatalogueEntry(
    name="repo-debugger",
    description="Fix a failing test in a Python repository. Not for writing new features.",
)
PDF = CatalogueEntry(name="pdf", description="Fill and merge PDF forms.")


def test_stems_cut_suffixes_keep_five_characters_and_drop_stop_words() -> None:
    assert stem("debugging") == "debug"
    assert stem("tests") == "test"
    assert stem("failing") == "fail"
    assert stems("Please use the skill when tests fail") == {"test", "fail"}


def test_score_counts_shared_stems_and_subtracts_excluded_ones() -> None:
    assert score("my python test is failing", DEBUG) == 3  # python, test, fail
    assert score("write new features in python", DEBUG) == 1 - 2  # python; write, features
    assert choose("my python test is failing", [PDF, DEBUG]) == "repo-debugger"
    assert choose("write new features in python", [PDF, DEBUG]) is None
    assert MIN_SCORE == 2
    assert choose("python", [DEBUG]) is None  # one shared stem is not enough


def test_ties_go_to_the_first_name_in_catalogue_order() -> None:
    a = CatalogueEntry(name="b-skill", description="merge forms")
    b = CatalogueEntry(name="a-skill", description="merge forms")
    assert choose("merge these forms", [a, b]) == "a-skill"


def test_the_sim_answers_a_catalogue_prompt_with_a_name_and_ignores_the_seed() -> None:
    prompt = render_catalogue([PDF, DEBUG], "folder")
    msgs = [{"role": "system", "content": prompt}, {"role": "user", "content": "merge pdf forms"}]
    assert trigger_answer(msgs) == "pdf"
    for seed in (0, 7):
        out = respond("sim/student", msgs, {"seed": seed})
        assert out["choices"][0]["message"]["content"] == "pdf"
        assert out["choices"][0]["finish_reason"] == "stop"
    msgs[1]["content"] = "a poem about autumn"
    assert respond("sim/student", msgs, {})["choices"][0]["message"]["content"] == "none"
    assert trigger_answer([{"role": "system", "content": "You are an agent."}]) is None


def test_cjk_text_is_read_as_character_pairs() -> None:
    assert stems("调试代码") == {"调试", "试代", "代码"}
    zh = CatalogueEntry(name="zh-debug", description="调试失败的测试用例，修复代码。")
    ja = CatalogueEntry(name="ja-review", description="コードレビューを行います。")
    assert choose("帮我调试这个失败的测试", [PDF, zh, ja]) == "zh-debug"
    assert choose("このコードをレビューして", [PDF, zh, ja]) == "ja-review"
    assert choose("今天天气怎么样", [PDF, zh, ja]) is None


def test_a_query_in_a_script_it_does_not_read_is_refused_not_answered_none() -> None:
    import pytest

    from skillci.providers.sim.provider import OutOfDomain
    from skillci.providers.sim.trigger import unread_script

    assert unread_script("Почини падающий тест в этом репозитории") == "Cyrillic"
    assert unread_script("أصلح الاختبار الفاشل") == "Arabic"
    assert unread_script("Fix the failing test: Ωmega") is None  # mostly Latin
    assert unread_script("帮我调试这个失败的测试") is None  # CJK is read (as pairs)
    assert unread_script("Corrige le test qui échoue") is None  # accented Latin is Latin
    assert unread_script("123 !?") is None  # no letters: nothing to read
    prompt = render_catalogue([PDF, DEBUG], "folder")
    msgs = [{"role": "system", "content": prompt}, {"role": "user", "content": "Объедини PDF"}]
    with pytest.raises(OutOfDomain, match="cannot read Cyrillic text"):
        respond("sim/student", msgs, {})
