"""``apply(package, patch) -> package``: pure, deterministic, all ops or an error.

Ops run in order, each on the package the previous one produced. A failed precondition
raises :class:`PatchError` naming the op index and the reason; nothing is partially
applied because packages are immutable values. New and changed rules enter as
``candidate`` with provenance from the patch; split/merge results also carry their
sources' supporting runs and name the sources (``provenance.sources``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import yaml

import skillci.patch.markdown as markdown
from skillci.errors import InternalError, PatchError
from skillci.patch.models import (
    AddExample,
    AddRegressionTest,
    AddRule,
    ChangeDescription,
    ChangeLoadingScope,
    DeleteRule,
    MergeRules,
    Op,
    Patch,
    ReplaceRule,
    SplitRule,
)
from skillci.patch.rulefile import RuleFileText, dump_rule, file_for_new_rule, verify
from skillci.skill import yamlio
from skillci.skill.models import EvalList, Lifecycle, Provenance, Rule
from skillci.skill.package import (
    EXAMPLES_DIR,
    RULES_DIR,
    SKILL_MD,
    LocatedRule,
    SkillPackage,
    check_relpath,
    eval_list_path,
    is_example_file,
    is_on_demand_file,
    is_rule_file,
)

REGRESSION_FILE = eval_list_path("regression")
ChangeKind = Literal["added", "modified", "removed"]


@dataclass(frozen=True)
class RuleDelta:
    """One rule-level effect of an op."""

    kind: ChangeKind
    rule_id: str
    old: Rule | None
    new: Rule | None
    detail: str


@dataclass(frozen=True)
class OpEffect:
    """What one op did: the files it declares and the rules it added/changed/removed."""

    index: int
    op: Op
    files: frozenset[str]
    rules: tuple[RuleDelta, ...] = ()
    moved_text: str | None = None  # section text moved by change_loading_scope
    moved_from: str | None = None
    moved_to: str | None = None


@dataclass(frozen=True)
class Applied:
    """A patch applied in memory: before, after and per-op effects."""

    patch: Patch
    before: SkillPackage
    after: SkillPackage
    effects: tuple[OpEffect, ...] = field(default=())

    @property
    def declared_files(self) -> frozenset[str]:
        return frozenset().union(*(e.files for e in self.effects))

    @property
    def changed_files(self) -> list[str]:
        """Files whose bytes differ between before and after (added, changed, removed)."""
        b, a = self.before.files, self.after.files
        return sorted(r for r in set(b) | set(a) if b.get(r) != a.get(r))

    @property
    def new_rule_ids(self) -> list[str]:
        before = {lr.rule.id for lr in self.before.rules}
        return sorted(lr.rule.id for lr in self.after.rules if lr.rule.id not in before)


def apply(pkg: SkillPackage, patch: Patch) -> SkillPackage:
    """The package with every op of ``patch`` applied (raises PatchError on a bad op)."""
    return apply_detailed(pkg, patch).after


def apply_detailed(pkg: SkillPackage, patch: Patch) -> Applied:
    cur = pkg
    effects: list[OpEffect] = []
    for i, op in enumerate(patch.ops):
        cur, eff = _Op(i, op, patch, cur).run()
        effects.append(eff)
    return Applied(patch, pkg, cur, tuple(effects))


# ---------------------------------------------------------------------------- helpers


def _union(*runs: Iterable[str]) -> list[str]:
    return sorted({r for rs in runs for r in rs})


def _runs(rule: Rule) -> list[str]:
    return list(rule.provenance.supporting_runs) if rule.provenance else []


def same_behaviour(a: Rule, b: Rule) -> bool:
    """Rules equal apart from lifecycle status and provenance."""
    skip = {"status", "provenance"}
    return a.model_dump(mode="json", exclude=skip) == b.model_dump(mode="json", exclude=skip)


class _Op:
    """Applies one op to one package."""

    def __init__(self, index: int, op: Op, patch: Patch, pkg: SkillPackage) -> None:
        self.i = index
        self.op = op
        self.patch = patch
        self.pkg = pkg

    def fail(self, reason: str, hint: str | None = None) -> PatchError:
        return PatchError(f"op {self.i} ({self.op.op}): {reason}", hint=hint)

    def stamp(
        self, rule: Rule, *, sources: list[str] | None = None, runs: Iterable[str] = ()
    ) -> Rule:
        data: dict[str, object] = {
            "introduced_by": self.patch.pid,
            "supporting_runs": _union(self.patch.supporting_runs, runs),
        }
        if self.patch.primary_failure_class:
            data["failure_class"] = self.patch.primary_failure_class
        if sources:
            data["sources"] = sources
        prov = Provenance.model_validate(data)
        return rule.model_copy(update={"status": Lifecycle.candidate, "provenance": prov})

    def located(self, rule_id: str) -> LocatedRule:
        lr = self.pkg.rule(rule_id)
        if lr is None:
            raise self.fail(
                f"unknown rule id {rule_id!r}", hint="`skillci skill lint` lists the rules"
            )
        return lr

    def free(self, rule_id: str, allowed: Iterable[str] = ()) -> None:
        if rule_id not in allowed and self.pkg.rule(rule_id) is not None:
            where = self.pkg.rule(rule_id)
            assert where is not None
            raise self.fail(
                f"rule id {rule_id!r} already exists in {where.file}",
                hint="choose a new id or use replace_rule",
            )

    def unreferenced(self, removed: Iterable[str], keep: Iterable[str] = ()) -> None:
        gone = set(removed) - set(keep)
        for lr in self.pkg.rules:
            if lr.rule.id in gone:
                continue
            hit = gone & set(lr.rule.references)
            if hit:
                raise self.fail(
                    f"rule {lr.rule.id!r} references {sorted(hit)[0]!r}, which this op removes",
                    hint="update the referencing rule in the same patch first",
                )

    def file_rules(self, rel: str) -> list[Rule]:
        return [lr.rule for lr in self.pkg.rules_in(rel)] if rel in self.pkg.files else []

    def edit_file(
        self, rel: str, text: str | None, expected: list[Rule]
    ) -> dict[str, bytes | None]:
        verify(rel, text, expected)
        return {rel: None if text is None else text.encode("utf-8")}

    def done(
        self, changes: dict[str, bytes | None], deltas: Iterable[RuleDelta] = (), **kw: str | None
    ) -> tuple[SkillPackage, OpEffect]:
        after = self.pkg.with_files(changes)
        return after, OpEffect(self.i, self.op, frozenset(changes), tuple(deltas), **kw)

    # ------------------------------------------------------------------ dispatch

    def run(self) -> tuple[SkillPackage, OpEffect]:
        try:
            return self._run()
        except PatchError as exc:
            if exc.message.startswith(f"op {self.i} ("):
                raise
            where = f"{exc.file}: " if exc.file else ""
            raise self.fail(where + exc.message, hint=exc.hint) from None

    def _run(self) -> tuple[SkillPackage, OpEffect]:
        op = self.op
        if isinstance(op, AddRule):
            return self.add_rule(op)
        if isinstance(op, ReplaceRule):
            return self.replace_rule(op)
        if isinstance(op, DeleteRule):
            return self.delete_rule(op)
        if isinstance(op, SplitRule):
            return self.split_rule(op)
        if isinstance(op, MergeRules):
            return self.merge_rules(op)
        if isinstance(op, ChangeLoadingScope):
            return self.section_move(op) if op.section is not None else self.scope_rule(op)
        if isinstance(op, AddExample):
            return self.add_example(op)
        if isinstance(op, AddRegressionTest):
            return self.add_regression_test(op)
        if isinstance(op, ChangeDescription):
            return self.change_description(op)
        raise InternalError(f"op {self.i}: no handler for {type(op).__name__}")  # pragma: no cover

    # ------------------------------------------------------------------ rule ops

    def add_rule(self, op: AddRule) -> tuple[SkillPackage, OpEffect]:
        self.free(op.rule.id)
        rule = self.stamp(op.rule)
        delta = RuleDelta("added", rule.id, None, rule, "added")
        if op.file is None:
            rel = file_for_new_rule(rule.id)
            if rel in self.pkg.files:
                raise self.fail(f"{rel} already exists", hint="name the target file with `file:`")
            text = dump_rule(rule, top_level=True)
            return self.done(self.edit_file(rel, text, [rule]), [delta])
        rel = self.rules_file(op.file)
        if rel not in self.pkg.files:
            raise self.fail(
                f"unknown file {rel}", hint=f"omit `file` to create {RULES_DIR}/<id>.yaml"
            )
        text = RuleFileText.parse(rel, self.pkg.text(rel)).append([rule])
        return self.done(self.edit_file(rel, text, [*self.file_rules(rel), rule]), [delta])

    def rules_file(self, rel: str) -> str:
        try:
            check_relpath(rel)
        except Exception:
            raise self.fail(f"unsafe path {rel!r}") from None
        if not is_rule_file(rel):
            raise self.fail(f"{rel!r} is not a {RULES_DIR}/*.yaml file")
        return rel

    def _replace_in_file(self, lr: LocatedRule, new_rules: list[Rule]) -> dict[str, bytes | None]:
        current = self.file_rules(lr.file)
        expected = current[: lr.index] + new_rules + current[lr.index + 1 :]
        text = RuleFileText.parse(lr.file, self.pkg.text(lr.file)).replace(lr.index, new_rules)
        return self.edit_file(lr.file, text, expected)

    def replace_rule(self, op: ReplaceRule) -> tuple[SkillPackage, OpEffect]:
        lr = self.located(op.rule_id)
        if op.rule.id != op.rule_id:
            self.free(op.rule.id)
            self.unreferenced([op.rule_id])
        if same_behaviour(lr.rule, op.rule):
            raise self.fail(f"the new content of {op.rule_id!r} is the same as the old")
        rule = self.stamp(op.rule)
        delta = RuleDelta("modified", op.rule_id, lr.rule, rule, "replaced")
        return self.done(self._replace_in_file(lr, [rule]), [delta])

    def delete_rule(self, op: DeleteRule) -> tuple[SkillPackage, OpEffect]:
        lr = self.located(op.rule_id)
        self.unreferenced([op.rule_id])
        delta = RuleDelta("removed", op.rule_id, lr.rule, None, "deleted")
        return self.done(self._replace_in_file(lr, []), [delta])

    def split_rule(self, op: SplitRule) -> tuple[SkillPackage, OpEffect]:
        lr = self.located(op.rule_id)
        ids = [r.id for r in op.into]
        if len(set(ids)) != len(ids):
            raise self.fail("the resulting rules repeat an id")
        for rid in ids:
            self.free(rid, allowed=[op.rule_id])
        self.unreferenced([op.rule_id], keep=ids)
        runs = _runs(lr.rule)
        new = [self.stamp(r, sources=[op.rule_id], runs=runs) for r in op.into]
        deltas = [
            RuleDelta(
                "modified" if r.id == op.rule_id else "added",
                r.id,
                lr.rule if r.id == op.rule_id else None,
                r,
                f"split from {op.rule_id}",
            )
            for r in new
        ]
        if op.rule_id not in ids:
            deltas.append(
                RuleDelta("removed", op.rule_id, lr.rule, None, f"split into {', '.join(ids)}")
            )
        return self.done(self._replace_in_file(lr, new), deltas)

    def merge_rules(self, op: MergeRules) -> tuple[SkillPackage, OpEffect]:
        sources = [self.located(rid) for rid in op.rule_ids]
        self.free(op.into.id, allowed=op.rule_ids)
        self.unreferenced(op.rule_ids, keep=[op.into.id])
        workflows = {s.rule.scope.workflow for s in sources}
        if op.target_scope is not None:
            scope = op.target_scope
        elif len(workflows) > 1:
            names = ", ".join(sorted(w or "bootstrap" for w in workflows))
            raise self.fail(
                f"the rules to merge live in different scopes ({names})",
                hint="set target_scope to say where the merged rule loads",
            )
        else:
            (wf,) = workflows
            if "scope" in op.into.model_fields_set and op.into.scope.workflow != wf:
                raise self.fail(
                    "into.scope differs from the sources' scope", hint="set target_scope to move it"
                )
            scope = op.into.scope.model_copy(update={"workflow": wf})
        merged = self.stamp(
            op.into.model_copy(update={"scope": scope}),
            sources=list(op.rule_ids),
            runs=[r for s in sources for r in _runs(s.rule)],
        )
        # Remove the later sources first (bottom-up within a file keeps indices valid),
        # then put the merged rule in the first source's place.
        pkg = self.pkg
        changes: dict[str, bytes | None] = {}
        for s in sorted(sources[1:], key=lambda s: (s.file, -s.index)):
            step = _Op(self.i, self.op, self.patch, pkg)
            cur = step.pkg.rule(s.rule.id)
            assert cur is not None
            ch = step._replace_in_file(cur, [])
            changes.update(ch)
            pkg = pkg.with_files(ch)
        first = _Op(self.i, self.op, self.patch, pkg)
        cur0 = pkg.rule(sources[0].rule.id)
        assert cur0 is not None
        ch = first._replace_in_file(cur0, [merged])
        changes.update(ch)
        deltas = [
            RuleDelta(
                "modified",
                merged.id,
                next(s.rule for s in sources if s.rule.id == merged.id),
                merged,
                f"merged from {', '.join(op.rule_ids)}",
            )
            if merged.id in op.rule_ids
            else RuleDelta(
                "added", merged.id, None, merged, f"merged from {', '.join(op.rule_ids)}"
            )
        ]
        deltas += [
            RuleDelta("removed", s.rule.id, s.rule, None, f"merged into {merged.id}")
            for s in sources
            if s.rule.id != merged.id
        ]
        return self.done(changes, deltas)

    # ------------------------------------------------------------------ loading scope

    def _workflow_of(self, to: str) -> str | None:
        if to in (SKILL_MD, "bootstrap"):
            return None
        base = self.pkg.manifest.entrypoints.workflows.rstrip("/")
        if not (
            to.startswith(base + "/")
            and to.endswith(".md")
            and to.count("/") == base.count("/") + 1
        ):
            raise self.fail(
                f"a rule can load from SKILL.md or a {base}/*.md file, not {to!r}",
                hint="move a markdown section instead, or pick a workflow",
            )
        if to not in self.pkg.files:
            raise self.fail(f"unknown file {to}", hint="create the workflow file first")
        return to[len(base) + 1 : -len(".md")]

    def scope_rule(self, op: ChangeLoadingScope) -> tuple[SkillPackage, OpEffect]:
        assert op.rule_id is not None
        lr = self.located(op.rule_id)
        wf = self._workflow_of(op.to)
        if lr.rule.scope.workflow == wf:
            raise self.fail(f"{op.rule_id!r} already loads from {op.to}")
        moved = lr.rule.model_copy(
            update={"scope": lr.rule.scope.model_copy(update={"workflow": wf})}
        )
        rule = self.stamp(moved, sources=[op.rule_id], runs=_runs(lr.rule))
        old_where = (
            "bootstrap" if lr.rule.scope.workflow is None else f"workflow {lr.rule.scope.workflow}"
        )
        new_where = "bootstrap" if wf is None else f"workflow {wf}"
        delta = RuleDelta(
            "modified", op.rule_id, lr.rule, rule, f"loading scope {old_where} -> {new_where}"
        )
        return self.done(self._replace_in_file(lr, [rule]), [delta])

    def _doc(self, rel: str) -> str:
        try:
            check_relpath(rel)
        except Exception:
            raise self.fail(f"unsafe path {rel!r}") from None
        if rel != SKILL_MD and not is_on_demand_file(rel):
            raise self.fail(
                f"{rel!r} is neither SKILL.md nor an on-demand workflow/tool/recovery file"
            )
        if rel not in self.pkg.files:
            raise self.fail(f"unknown file {rel}")
        return rel

    def section_move(self, op: ChangeLoadingScope) -> tuple[SkillPackage, OpEffect]:
        assert op.section is not None and op.from_file is not None
        src, dst = self._doc(op.from_file), self._doc(op.to)
        if src == dst or SKILL_MD not in (src, dst):
            raise self.fail("a section moves between SKILL.md and an on-demand file")
        text = self.pkg.text(src)
        offset = len(text) - len(self.pkg.skill_md.body) if src == SKILL_MD else 0
        found = markdown.find_sections(text, op.section, offset)
        if not found:
            raise self.fail(f"no section titled {op.section!r} in {src}")
        if len(found) > 1:
            raise self.fail(f"{len(found)} sections are titled {op.section!r} in {src}")
        sec = found[0]
        if sec.level == 1:
            raise self.fail("a level-1 section is a whole document; move its subsections")
        changes: dict[str, bytes | None] = {
            src: markdown.cut(text, sec).encode("utf-8"),
            dst: markdown.append(self.pkg.text(dst), sec.text).encode("utf-8"),
        }
        return self.done(changes, moved_text=sec.text, moved_from=src, moved_to=dst)

    # ------------------------------------------------------------------ examples and evals

    def add_example(self, op: AddExample) -> tuple[SkillPackage, OpEffect]:
        rel = op.file
        try:
            check_relpath(rel)
        except Exception:
            raise self.fail(f"unsafe path {rel!r}") from None
        if not is_example_file(rel):
            raise self.fail(f"{rel!r} is not a {EXAMPLES_DIR}/*.jsonl file")
        line = json.dumps(op.example, ensure_ascii=False)
        old = self.pkg.text(rel) if rel in self.pkg.files else ""
        if line in old.splitlines():
            raise self.fail(f"{rel} already holds this example")
        text = (old if not old or old.endswith("\n") else old + "\n") + line + "\n"
        return self.done({rel: text.encode("utf-8")})

    def add_regression_test(self, op: AddRegressionTest) -> tuple[SkillPackage, OpEffect]:
        rel = REGRESSION_FILE
        current = self.pkg.eval_list("regression")
        if op.task_id in current.tasks:
            raise self.fail(f"{op.task_id!r} is already in {rel}")
        item = yaml.safe_dump(
            [op.task_id], default_flow_style=False, allow_unicode=True, width=4096
        )
        if rel not in self.pkg.files:
            text = f"schema_version: 1\ntasks:\n  {item}"
        else:
            text = _add_list_item(self.pkg.text(rel), "tasks", item, rel)
        data, node = yamlio.load(text, rel)
        got = yamlio.validate(EvalList, data or {}, node, rel)
        if got.tasks != [*current.tasks, op.task_id]:
            raise InternalError(f"{rel}: adding {op.task_id!r} did not produce the intended list")
        return self.done({rel: text.encode("utf-8")})

    def change_description(self, op: ChangeDescription) -> tuple[SkillPackage, OpEffect]:
        text = self.pkg.text(SKILL_MD)
        if self.pkg.frontmatter.description == op.description:
            raise self.fail("the description is already this text")
        new = replace_description(text, op.description, SKILL_MD)
        return self.done({SKILL_MD: new.encode("utf-8")})


def replace_description(text: str, description: str, rel: str) -> str:
    """SKILL.md ``text`` with the frontmatter's ``description`` value replaced by
    ``description`` (as a double-quoted YAML scalar); every other byte unchanged."""
    fm = yamlio.split_frontmatter(text)
    if not fm.present:
        raise PatchError(f"{rel} has no frontmatter", file=rel)
    node = yamlio.compose(fm.yaml_text, rel, line_offset=1)
    if not isinstance(node, yaml.MappingNode):
        raise PatchError(f"{rel}: the frontmatter is not a mapping", file=rel)
    start = text.index(fm.yaml_text)
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == "description":
            a, b = v.start_mark.index, v.end_mark.index
            body = fm.yaml_text
            while b > a and body[b - 1] == "\n":  # block scalars end after their newline
                b -= 1
            quoted = json.dumps(description, ensure_ascii=False)
            return text[: start + a] + quoted + text[start + b :]
    raise PatchError(f"{rel}: the frontmatter has no description", file=rel)


def _add_list_item(text: str, key: str, item: str, rel: str) -> str:
    """Append ``item`` (``- value\\n``) to the top-level list ``key`` without rewriting the rest."""
    node = yamlio.compose(text, rel)
    if node is None:
        return text + ("" if not text or text.endswith("\n") else "\n") + f"{key}:\n  {item}"
    if not isinstance(node, yaml.MappingNode):
        raise PatchError(f"{rel} is not a mapping", file=rel)
    for k, v in node.value:
        if not (isinstance(k, yaml.ScalarNode) and k.value == key):
            continue
        if not isinstance(v, yaml.SequenceNode):
            raise PatchError(f"{rel}: `{key}` is not a list", file=rel, line=v.start_mark.line + 1)
        if v.flow_style or not v.value:
            # `tasks: []` or `tasks: [a, b]`: rewrite just this value as a block list
            values = [str(x.value) for x in v.value if isinstance(x, yaml.ScalarNode)]
            block = "".join(
                "  "
                + yaml.safe_dump([val], default_flow_style=False, allow_unicode=True, width=4096)
                for val in values
            )
            after = text[v.end_mark.index :].lstrip(" ")
            after = after[1:] if after.startswith("\n") else after
            return text[: v.start_mark.index].rstrip(" ") + "\n" + block + "  " + item + after
        last = v.value[-1]
        lines = text.splitlines(keepends=True)
        first = v.value[0]
        head = lines[first.start_mark.line][: first.start_mark.column]
        indent = head.rstrip()[:-1] if head.rstrip().endswith("-") else "  "
        end_line = last.end_mark.line + 1
        if end_line > len(lines):
            lines[-1] = lines[-1] if lines[-1].endswith("\n") else lines[-1] + "\n"
        lines.insert(min(end_line, len(lines)), indent + item)
        return "".join(lines)
    return text + ("" if not text or text.endswith("\n") else "\n") + f"{key}:\n  {item}"
