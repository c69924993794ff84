"""Textual edits of ``skillci/rules/*.yaml`` that leave every other rule's bytes alone.

A rules file holds one rule mapping or ``rules: [...]``. Re-dumping a whole file would
rewrite the other rules (quotes, flow lists, comments, indentation), so edits splice text
instead: PyYAML's node marks give each list item's line range, the edited item is replaced
by freshly dumped YAML indented like its neighbours, and comment lines directly above an
item travel with it. Every edit is re-parsed and compared with the intended rules; a
mismatch is an internal error, never a silently wrong file. (ruamel.yaml round-trip was
tried and rejected: it re-indents untouched items, see docs/design/010-patch-language.md.)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml

from skillci.errors import InternalError, PatchError
from skillci.skill import yamlio
from skillci.skill.models import SCHEMA_VERSION, Rule, RuleFile
from skillci.skill.package import rule_file_path

_FIELD_ORDER = (
    "id",
    "status",
    "scope",
    "trigger",
    "instruction",
    "validation",
    "failure_policy",
    "anti_patterns",
    "provenance",
    "references",
)


class _IndentDumper(yaml.SafeDumper):
    """Indents block sequences under their key (``key:\\n  - x``), as humans write them."""

    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)


def rule_data(rule: Rule, *, top_level: bool) -> dict[str, Any]:
    """A rule as a plain mapping in the canonical key order; defaults and empties dropped."""
    full = rule.model_dump(mode="json", by_alias=True)
    lean = _prune(rule.model_dump(mode="json", by_alias=True, exclude_defaults=True))
    out: dict[str, Any] = {}
    if top_level:
        out["schema_version"] = full.get("schema_version", SCHEMA_VERSION)
    out["id"] = full["id"]
    out["status"] = full["status"]
    scope = {"workflow": full["scope"]["workflow"]}
    if full["scope"].get("tools"):
        scope["tools"] = full["scope"]["tools"]
    out["scope"] = {**scope, **{k: v for k, v in lean.get("scope", {}).items() if k not in scope}}
    for key in _FIELD_ORDER:
        if key not in out and key in lean:
            out[key] = lean[key]
    out.setdefault("instruction", full["instruction"])
    for key, value in lean.items():  # unknown keys the rule carried
        if key not in out and key != "schema_version":
            out[key] = value
    return out


def _prune(value: Any) -> Any:
    if isinstance(value, dict):
        pruned = {k: _prune(v) for k, v in value.items()}
        return {k: v for k, v in pruned.items() if v not in (None, [], {})}
    return value


def dump_rule(rule: Rule, *, top_level: bool) -> str:
    """YAML text of one rule (a whole file when ``top_level``)."""
    text = yaml.dump(
        rule_data(rule, top_level=top_level),
        Dumper=_IndentDumper,
        sort_keys=False,
        allow_unicode=True,
        width=4096,
        default_flow_style=False,
    )
    return str(text)


def _is_comment(line: str) -> bool:
    return line.lstrip().startswith("#")


def _is_blank(line: str) -> bool:
    return not line.strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


@dataclass(frozen=True)
class _Item:
    start: int  # first line (leading comments included)
    dash: int  # the `- id:` line
    content_end: int  # one past the last line of the item itself
    end: int  # one past the separator (blank lines) that follows it


@dataclass
class RuleFileText:
    """A parsed rules file, ready for splicing edits."""

    rel: str
    lines: list[str]
    form: str  # "single" | "list"
    items: list[_Item]
    dash_col: int
    key_col: int
    newline: str
    other_keys: bool  # top-level keys besides schema_version and rules

    @classmethod
    def parse(cls, rel: str, text: str) -> RuleFileText:
        newline = "\r\n" if "\r\n" in text else "\n"
        lines = text.splitlines(keepends=True)
        if lines and not lines[-1].endswith(("\n", "\r")):
            lines[-1] += newline
        node = yamlio.compose(text, rel)
        if not isinstance(node, yaml.MappingNode):
            raise PatchError("rules file is not a mapping", file=rel, hint="fix the file first")
        keys = {k.value: v for k, v in node.value if isinstance(k, yaml.ScalarNode)}
        if "rules" not in keys:
            return cls(rel, lines, "single", [], 0, 0, newline, False)
        seq = keys["rules"]
        if not isinstance(seq, yaml.SequenceNode) or seq.flow_style:
            raise PatchError(
                "cannot edit a `rules:` value that is not a block list",
                file=rel,
                hint="write the rules as `- id: ...` items",
            )
        other = bool(set(keys) - {"schema_version", "rules"})
        items: list[_Item] = []
        dash_col = key_col = 2
        starts: list[int] = []
        dashes: list[int] = []
        for idx, item in enumerate(seq.value):
            line = item.start_mark.line
            col = item.start_mark.column
            head = lines[line][:col]
            if not isinstance(item, yaml.MappingNode) or not head.rstrip().endswith("-"):
                raise PatchError(
                    f"rule {idx} is not written as `- id: ...`",
                    file=rel,
                    line=line + 1,
                    hint="put the first key on the dash line",
                )
            if idx == 0:
                dash_col = head.rstrip().rindex("-")
                key_col = col
            start = line
            while start > 0 and _is_comment(lines[start - 1]):
                start -= 1
            starts.append(start)
            dashes.append(line)
        last_end = seq.value[-1].end_mark if seq.value else seq.end_mark
        tail = last_end.line + (1 if last_end.column else 0)
        tail = min(tail, len(lines))
        for i, start in enumerate(starts):
            nxt = starts[i + 1] if i + 1 < len(starts) else tail
            content_end = nxt
            while content_end > start + 1 and (
                _is_blank(lines[content_end - 1])
                or (
                    _is_comment(lines[content_end - 1])
                    and _indent(lines[content_end - 1]) <= dash_col
                )
            ):
                content_end -= 1
            end = nxt if i + 1 < len(starts) else content_end
            items.append(_Item(start, dashes[i], content_end, end))
        return cls(rel, lines, "list", items, dash_col, key_col, newline, other)

    # ------------------------------------------------------------------ rendering

    def _leading(self) -> str:
        out = []
        for line in self.lines:
            if _is_comment(line) or _is_blank(line):
                out.append(line)
            else:
                break
        while out and _is_blank(out[-1]):
            out.pop()
        return "".join(out)

    def _item_text(self, rule: Rule) -> str:
        body = dump_rule(rule, top_level=False).splitlines()
        first = " " * self.dash_col + "-" + " " * (self.key_col - self.dash_col - 1) + body[0]
        rest = [(" " * self.key_col + ln) if ln else "" for ln in body[1:]]
        return self.newline.join([first, *rest]) + self.newline

    def _fix_nl(self, text: str) -> str:
        return text.replace("\n", self.newline) if self.newline != "\n" else text

    def _whole_file(self, rules: list[Rule]) -> str:
        lead = self._leading()
        if len(rules) == 1:
            return lead + self._fix_nl(dump_rule(rules[0], top_level=True))
        self.dash_col, self.key_col = 2, 4
        head = self._fix_nl(f"schema_version: {SCHEMA_VERSION}\nrules:\n")
        return lead + head + "".join(self._item_text(r) for r in rules)

    # ------------------------------------------------------------------ edits

    def replace(self, index: int, rules: list[Rule]) -> str | None:
        """Text with rule ``index`` replaced by ``rules`` (none: removed). None: no file left."""
        if self.form == "single":
            return self._whole_file(rules) if rules else None
        item = self.items[index]
        if not rules and len(self.items) == 1:
            if self.other_keys:
                raise PatchError(
                    "removing the last rule would leave `rules:` empty in a file with other keys",
                    file=self.rel,
                    hint="move the other keys out first",
                )
            return None
        new = "".join(self._item_text(r) for r in rules)
        if rules:  # comment lines above the item stay (they may describe the group)
            lo, hi = item.dash, item.content_end
        elif index + 1 < len(self.items):
            lo, hi = item.start, item.end
        else:  # last item: take the separator before it instead
            lo, hi = self.items[index - 1].content_end, item.content_end
        return "".join(self.lines[:lo]) + new + "".join(self.lines[hi:])

    def append(self, rules: list[Rule]) -> str:
        if self.form == "single":
            raise PatchError(
                "this file holds a single rule mapping; it cannot take another rule",
                file=self.rel,
                hint="omit `file` (one rule per file) or name a `rules: [...]` file",
            )
        at = self.items[-1].content_end if self.items else len(self.lines)
        new = "".join(self._item_text(r) for r in rules)
        return "".join(self.lines[:at]) + new + "".join(self.lines[at:])


def verify(rel: str, text: str | None, expected: list[Rule]) -> None:
    """Re-parse an edited file and check it holds exactly ``expected`` (internal check)."""
    if text is None:
        if expected:
            raise InternalError(f"{rel}: an edit removed the file but rules should remain")
        return
    data, _node = yamlio.load(text, rel)
    try:
        got = RuleFile.model_validate(data).rules
    except Exception as exc:
        raise InternalError(f"{rel}: an edit produced an invalid rules file: {exc}") from None
    want = [r.model_dump(mode="json") for r in expected]
    have = [r.model_dump(mode="json") for r in got]
    if want != have:
        raise InternalError(f"{rel}: an edit did not produce the intended rules")


def file_for_new_rule(rule_id: str) -> str:
    """Default home of a new rule: skillci/rules/<id with dots as dashes>.yaml."""
    return rule_file_path(rule_id)
