"""Textual rule-file edits: other rules keep their bytes, layouts and line endings."""

from __future__ import annotations

import pytest
import yaml

from skillci.errors import InternalError, PatchError
from skillci.patch.rulefile import RuleFileText, dump_rule, verify
from skillci.skill.models import Rule, RuleFile

LIST_FILE = """\
# Rules about recovery.
schema_version: 1
rules:
# the first rule
- id: a.one
  scope: {workflow: null, tools: [run]}
  instruction:
    steps:
      - "quoted: step"
      - |
        a block
        scalar

# the second rule
- id: a.two   # trailing comment
  instruction: {steps: [x]}
# the third rule
- id: a.three
  instruction:
    steps: [y]
other_key: kept
"""


def _rule(rid: str, *steps: str) -> Rule:
    return Rule.model_validate({"id": rid, "instruction": {"steps": list(steps) or ["s"]}})


def _ids(text: str) -> list[str]:
    return [r.id for r in RuleFile.model_validate(yaml.safe_load(text)).rules]


def test_replace_middle_item_keeps_everything_else_byte_exact() -> None:
    f = RuleFileText.parse("skillci/rules/r.yaml", LIST_FILE)
    out = f.replace(1, [_rule("a.two", "new")])
    assert out is not None
    head = LIST_FILE[: LIST_FILE.index("# the second rule")]
    tail = LIST_FILE[LIST_FILE.index("# the third rule") :]
    assert out.startswith(
        head + "# the second rule\n- id: a.two\n"
    )  # comment above travels with it
    assert out.endswith(tail)
    assert _ids(out) == ["a.one", "a.two", "a.three"]
    assert yaml.safe_load(out)["other_key"] == "kept"


def test_delete_first_and_last_items() -> None:
    f = RuleFileText.parse("skillci/rules/r.yaml", LIST_FILE)
    first = f.replace(0, [])
    assert first is not None and "# the first rule" not in first and "a block" not in first
    assert _ids(first) == ["a.two", "a.three"]
    last = f.replace(2, [])
    assert last is not None and _ids(last) == ["a.one", "a.two"]
    assert last.endswith("other_key: kept\n") and "# the third rule" not in last


def test_split_inserts_items_at_the_same_place_with_the_files_indentation() -> None:
    f = RuleFileText.parse("skillci/rules/r.yaml", LIST_FILE)
    out = f.replace(1, [_rule("a.two-a"), _rule("a.two-b")])
    assert out is not None
    assert _ids(out) == ["a.one", "a.two-a", "a.two-b", "a.three"]
    assert "\n- id: a.two-a\n  status: candidate\n" in out  # dash at column 0 like the file


def test_append_after_last_item_before_other_keys() -> None:
    out = RuleFileText.parse("skillci/rules/r.yaml", LIST_FILE).append([_rule("a.four")])
    assert _ids(out) == ["a.one", "a.two", "a.three", "a.four"]
    assert out.startswith(LIST_FILE[: LIST_FILE.index("other_key")].rstrip("\n"))


def test_crlf_files_stay_crlf() -> None:
    crlf = "schema_version: 1\r\nrules:\r\n  - id: a.one\r\n    instruction: {steps: [x]}\r\n"
    out = RuleFileText.parse("skillci/rules/r.yaml", crlf).append([_rule("a.two")])
    assert "\n" not in out.replace("\r\n", "")
    assert _ids(out) == ["a.one", "a.two"]


def test_removing_last_rule_of_a_file_with_other_keys_is_refused() -> None:
    text = "rules:\n  - id: a.one\n    instruction: {steps: [x]}\nowner: me\n"
    with pytest.raises(PatchError, match="other keys"):
        RuleFileText.parse("skillci/rules/r.yaml", text).replace(0, [])
    assert (
        RuleFileText.parse("skillci/rules/r.yaml", text.replace("owner: me\n", "")).replace(0, [])
        is None
    )


def test_flow_style_rules_list_is_refused() -> None:
    with pytest.raises(PatchError, match="not a block list"):
        RuleFileText.parse(
            "skillci/rules/r.yaml", "rules: [{id: a.b, instruction: {steps: [x]}}]\n"
        )


def test_dump_rule_is_canonical_and_minimal() -> None:
    r = Rule.model_validate({"id": "a.b", "instruction": {"steps": ["x"]}, "custom": {"k": 1}})
    assert dump_rule(r, top_level=True) == (
        "schema_version: 1\nid: a.b\nstatus: candidate\nscope:\n  workflow: null\n"
        "instruction:\n  steps:\n    - x\ncustom:\n  k: 1\n"
    )


def test_verify_catches_a_wrong_edit() -> None:
    with pytest.raises(InternalError, match="did not produce the intended rules"):
        verify("skillci/rules/r.yaml", "id: a.b\ninstruction: {steps: [x]}\n", [_rule("a.c")])
    with pytest.raises(InternalError, match="removed the file"):
        verify("skillci/rules/r.yaml", None, [_rule("a.c")])
