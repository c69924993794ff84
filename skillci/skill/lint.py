"""``skillci skill lint``: everything precisely wrong with a package, file:line:col each.

Pure: takes a :class:`SkillPackage`, returns findings. Codes:

========  ========  ==========================================================
code      severity  problem
========  ========  ==========================================================
SK001     error     file does not parse or does not match its schema
SK002     error     a required file is missing (skillci.yaml, SKILL.md)
SK003     error     SKILL.md frontmatter name differs from manifest name
SK004     error     an entry point leaves the package (absolute path, ``..``) or is missing
SK005     error     SKILL.md frontmatter breaks the Agent Skills spec: name or description
                    missing, empty or too long, a name the spec refuses or that differs from
                    its folder, compatibility over 500 chars (docs/design/330)
SK006     warning   a frontmatter field outside the spec (the message names the harnesses that
                    read it); an error under --strict
SK007     warning   frontmatter YAML the spec's validator (StrictYAML) refuses and harnesses
                    read: flow style, anchors, tags; an error under --strict
SK010     error     vague phrase in an instruction sentence (SKILL.md, on-demand files, rule
                    steps); a warning in an imported skill's own text
SK020     error     bootstrap over token_budget.bootstrap
SK021     error     an on-demand file over token_budget.per_workflow
SK022     error     everything loadable over token_budget.max_total
SK023     error     bootstrap + the largest on-demand file over 25% of the target runtime's
                    context window (target_runtime.context_window; the skill's size aside)
SK030     error     duplicate rule id
SK031     error     a rule step is another active rule's anti-pattern (conflict)
SK032     error     a rule uses a tool that is not in required_tools
SK033     error     a rule without provenance
SK034     error     lifecycle misuse: a retired/quarantined rule is still referenced
SK035     error     a rule's scope names a workflow with no skillci/workflows/<name>.md
SK040     warning   an on-demand file has no "Load when:" guidance
SK041     warning   an example line is not a JSON object
SK050     warning   a relative link or #anchor in a loadable document points at nothing
SK051     warning   a bundled file nothing points to (no link, no mention by name)
SK052     warning   a script without a shebang, or with one but without the executable bit
========  ========  ==========================================================
"""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import Iterator
from typing import Literal

from pydantic import BaseModel, Field, ValidationError

import skillci.skill.yamlio as yamlio
from skillci.errors import SkillciError
from skillci.skill.models import (
    EVAL_LIST_FILES,
    NAME_RE,
    Lifecycle,
    Manifest,
    RuleFile,
    SkillFrontmatter,
)
from skillci.skill.package import (
    MANIFEST,
    SKILL_MD,
    LocatedRule,
    SkillPackage,
    check_relpath,
    eval_list_path,
    is_loadable_doc,
    is_on_demand_file,
    is_skillci_owned,
    single_rule_prefix,
)
from skillci.skill.references import (
    anchors,
    is_script,
    link_problem,
    links,
    may_be_orphan,
    mentioned,
    run_directly,
    script_problem,
)
from skillci.skill.spec import SpecProblem, spec_problems
from skillci.skill.vague import find_vague, find_vague_instructions

LINT_SCHEMA_VERSION = 1
Severity = Literal["error", "warning"]


class Finding(BaseModel):
    """One lint finding."""

    code: str = Field(description="Stable finding code, e.g. SK010.")
    severity: Severity
    file: str = Field(description="Path as given on the command line + relative path.")
    line: int = Field(description="1-based line (1 when the whole file is meant).")
    col: int = Field(default=1, description="1-based column.")
    message: str
    hint: str
    field: str | None = Field(
        default=None,
        description="SKILL.md frontmatter field an Agent Skills spec finding is about.",
    )
    reason: str | None = Field(
        default=None,
        description="Stable reason of a spec finding (skillci.skill.spec), e.g. folder-mismatch.",
    )

    def format(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.severity} {self.code} {self.message} (hint: {self.hint})"


class LintReport(BaseModel):
    """Findings for one package."""

    schema_version: int = LINT_SCHEMA_VERSION
    package: str
    findings: list[Finding]

    @property
    def errors(self) -> int:
        return sum(f.severity == "error" for f in self.findings)

    @property
    def warnings(self) -> int:
        return sum(f.severity == "warning" for f in self.findings)


def _norm(s: str) -> str:
    return re.sub(r"[\s_\-]+", " ", s.strip().casefold())


def _line_col(text: str, offset: int, base_line: int = 1) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + base_line
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, col


# spec reasons that mean the frontmatter could not be read at all (SK001)
# the share of the target runtime's context window one skill may take at once (design 330)
CONTEXT_SHARE = 0.25
MD_SUFFIXES = (".md", ".markdown", ".mdx")
_PARSE_REASONS = frozenset({"no-frontmatter", "unclosed", "yaml-syntax", "not-mapping"})
_SPEC_CODES = {
    **dict.fromkeys(_PARSE_REASONS, "SK001"),
    "unknown-field": "SK006",
    "yaml-strict": "SK007",
}


class _Linter:
    def __init__(
        self, pkg: SkillPackage, *, strict: bool, folder: str | None, modes_known: bool
    ) -> None:
        self.pkg = pkg
        self.modes_known = modes_known
        self.strict = strict
        self.folder = folder
        self.findings: list[Finding] = []

    def add(
        self, code: str, sev: Severity, rel: str, line: int, col: int, msg: str, hint: str
    ) -> None:
        self.findings.append(
            Finding(
                code=code,
                severity=sev,
                file=self.pkg.display_path(rel),
                line=line,
                col=col,
                message=msg,
                hint=hint,
            )
        )

    def from_error(self, err: SkillciError, rel: str) -> None:
        self.findings.append(
            Finding(
                code="SK001",
                severity="error",
                file=err.file or self.pkg.display_path(rel),
                line=err.line or 1,
                col=err.col or 1,
                message=err.message,
                hint=err.hint,
            )
        )

    # -------------------------------------------------------------- schema checks

    def schema(
        self, rel: str, model: type[BaseModel], *, line_offset: int = 0, text: str | None = None
    ) -> tuple[object, object] | None:
        try:
            src = self.pkg.text(rel) if text is None else text
            data, node = yamlio.load(src, self.pkg.display_path(rel), line_offset=line_offset)
        except SkillciError as err:
            self.from_error(err, rel)
            return None
        strip = single_rule_prefix(data) if model is RuleFile else ()
        try:
            model.model_validate(data)
        except ValidationError as exc:
            for p in yamlio.problems(exc, node, line_offset=line_offset, strip_prefix=strip):
                self.add(
                    "SK001",
                    "error",
                    rel,
                    p.line,
                    p.col,
                    p.message,
                    "fix the field to match the schema (schemas/)",
                )
            return None
        return data, node

    def run(self) -> list[Finding]:
        pkg = self.pkg
        # a plain Agent Skills folder (SKILL.md, no skillci.yaml) is a skill too
        required = (MANIFEST, SKILL_MD) if SKILL_MD not in pkg.files else (SKILL_MD,)
        for req in required:
            if req not in pkg.files:
                self.add(
                    "SK002",
                    "error",
                    req,
                    1,
                    1,
                    f"{req} is missing",
                    "create it (see skills/repo-debugger)",
                )
        manifest: Manifest | None = None
        if MANIFEST in pkg.files and self.schema(MANIFEST, Manifest) is not None:
            manifest = pkg.manifest
        if manifest is not None:
            self.entrypoints(manifest)
        fm_name = None
        if SKILL_MD in pkg.files:
            fm_name = self.skill_md()
        if (
            manifest is not None
            and fm_name is not None
            and fm_name != manifest.name
            and NAME_RE.match(fm_name)  # a name that breaks the spec is SK005, not SK003
        ):
            self.add(
                "SK003",
                "error",
                SKILL_MD,
                2,
                1,
                f"frontmatter name {fm_name!r} differs from manifest name {manifest.name!r}",
                f"make SKILL.md name: equal to {MANIFEST} name:",
            )
        for name in EVAL_LIST_FILES:
            rel = eval_list_path(name)
            if rel in pkg.files:
                from skillci.skill.models import EvalList

                self.schema(rel, EvalList)
        rules = self.rules()
        self.on_demand(manifest)
        if SKILL_MD in pkg.files:
            self.references()
        self.examples()
        if manifest is not None:
            self.rule_checks(rules, manifest)
            if SKILL_MD in pkg.files and all(f.code != "SK001" for f in self.findings):
                self.budgets(manifest)
        return sorted(self.findings, key=lambda f: (f.file, f.line, f.col, f.code))

    def entrypoints(self, manifest: Manifest) -> None:
        _data, node = self.pkg.yaml_doc(MANIFEST)
        for key, value in manifest.entrypoints.model_dump().items():
            if not isinstance(value, str):
                continue
            rel = value.rstrip("/")
            try:
                check_relpath(rel)
                problem = None
            except SkillciError:
                problem = (
                    "points outside the package",
                    "use a relative path inside the skill folder",
                )
            if problem is None and key == "default" and rel not in self.pkg.files:
                problem = ("is not a file of the package", f"use {SKILL_MD}")
            if problem is not None:
                line, col = yamlio.locate(node, ["entrypoints", key])
                msg = f"entrypoints.{key} {value!r} {problem[0]}"
                self.add("SK004", "error", MANIFEST, line + 1, col + 1, msg, problem[1])

    def skill_md(self) -> str | None:
        try:
            text = self.pkg.text(SKILL_MD)
        except SkillciError as err:
            self.from_error(err, SKILL_MD)
            return None
        fm = yamlio.split_frontmatter(text)
        problems = self.spec()
        parsed = not any(p.reason in _PARSE_REASONS for p in problems)
        name = None
        if parsed and fm.present:
            # skillci's own schema, for what the spec does not cover; a field the spec
            # already reported is not reported twice
            spec_fields = {p.field for p in problems}
            before = len(self.findings)
            res = self.schema(SKILL_MD, SkillFrontmatter, line_offset=1, text=fm.yaml_text)
            self.findings[before:] = [
                f
                for f in self.findings[before:]
                if f.message.split(":", 1)[0].split(".", 1)[0] not in spec_fields
            ]
            if res is not None and isinstance(res[0], dict):
                name = str(res[0].get("name"))
        self.vague(SKILL_MD, fm.body, fm.body_line)
        return name

    def spec(self) -> list[SpecProblem]:
        """SK001/SK005/SK006/SK007: every problem the spec's reference validator reports."""
        raw = self.pkg.files[SKILL_MD]
        # the validator reads the file as UTF-8 text with universal newlines, BOM kept
        text = raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
        problems = spec_problems(text, self.folder, strict=self.strict)
        for p in problems:
            code = _SPEC_CODES.get(p.reason, "SK005")
            self.findings.append(
                Finding(
                    code=code,
                    severity=p.severity,
                    file=self.pkg.display_path(SKILL_MD),
                    line=p.line,
                    col=p.col,
                    message=p.message + ("" if code == "SK001" else " (Agent Skills spec)"),
                    hint=p.hint,
                    field=p.field,
                    reason=p.reason,
                )
            )
        return problems

    def _texts(self) -> dict[str, str]:
        """Every file of the package that decodes as UTF-8 text."""
        out: dict[str, str] = {}
        for rel, data in self.pkg.files.items():
            if b"\0" in data[:8192]:
                continue
            try:
                out[rel] = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                continue
        return out

    def references(self) -> None:
        """SK050 broken links and anchors, SK051 unreachable files, SK052 scripts."""
        texts = self._texts()
        docs = [
            rel
            for rel in texts
            if rel == SKILL_MD or is_loadable_doc(rel) or is_on_demand_file(rel)
        ]
        md = {rel: anchors(texts[rel]) for rel in docs if rel.lower().endswith(MD_SUFFIXES)}
        for rel in sorted(docs):
            for link in links(rel, texts[rel]):
                problem = link_problem(link, rel, self.pkg.files, md)
                if problem is not None:
                    self.add(
                        "SK050",
                        "warning",
                        rel,
                        link.line,
                        link.col,
                        problem,
                        "fix the path or the #anchor (GitHub heading slug), or drop the link",
                    )
        # what SKILL.md leads to, through links and names, transitively
        candidates = [r for r in self.pkg.bundled_files() if may_be_orphan(r)]
        dirs = {r.rsplit("/", 1)[0] + "/" for r in candidates if "/" in r}
        reached: set[str] = set()
        frontier = [r for r in texts if r == SKILL_MD or is_skillci_owned(r)]
        seen = set(frontier)
        while frontier:
            rel = frontier.pop()
            text = texts.get(rel, "")
            targets = {lk.path for lk in links(rel, text)} if rel in docs else set()
            hit_dirs = {
                d
                for d in dirs
                if d.rstrip("/") in targets
                or re.search(re.escape(d) + r"(?![\w.-])", text) is not None
            }
            for cand in candidates:
                if cand in reached or cand == rel:
                    continue
                if (
                    cand in targets
                    or any(cand.startswith(d) for d in hit_dirs)
                    or mentioned(cand, text)
                ):
                    reached.add(cand)
                    if cand not in seen:
                        seen.add(cand)
                        frontier.append(cand)
        for rel in candidates:
            if rel not in reached:
                self.add(
                    "SK051",
                    "warning",
                    rel,
                    1,
                    1,
                    f"{rel} is bundled but nothing in the skill links to it or names it",
                    "link it from SKILL.md where it is needed, or delete it",
                )
        for rel in self.pkg.bundled_files():
            if is_script(rel):
                problem = script_problem(
                    rel,
                    self.pkg.files[rel],
                    rel in self.pkg.executable,
                    self.modes_known,
                    run_directly(rel, {d: texts[d] for d in docs}),
                )
                if problem is not None:
                    self.add(
                        "SK052",
                        "warning",
                        rel,
                        1,
                        1,
                        f"{rel} {problem}",
                        "start it with #!/usr/bin/env <interpreter> and chmod +x it, or "
                        "tell the agent to run it with its interpreter",
                    )

    def vague(self, rel: str, text: str, base_line: int) -> None:
        # The publisher's own prose of an imported skill gets warnings; text skillci
        # manages (a native package, rules, skillci/ docs) gets errors (docs/design/141).
        # A plain skill (no skillci.yaml) is all publisher's prose too.
        origin = None
        plain = MANIFEST not in self.pkg.files
        with contextlib.suppress(SkillciError):
            origin = None if plain else self.pkg.manifest.origin
        own = (plain or origin is not None) and not is_skillci_owned(rel)
        for start, _end, phrase, suggestion in find_vague_instructions(text):
            line, col = _line_col(text, start, base_line)
            self.add(
                "SK010",
                "warning" if own else "error",
                rel,
                line,
                col,
                f"vague phrase {phrase!r} gives the student no action",
                suggestion,
            )

    def rules(self) -> list[LocatedRule]:
        out: list[LocatedRule] = []
        for rel in self.pkg.rule_files():
            res = self.schema(rel, RuleFile)
            if res is None:
                continue
            rules = self.pkg.rules_in(rel)
            data, node = res
            multi = isinstance(data, dict) and "rules" in data
            for lr in rules:
                prefix: list[int | str] = ["rules", lr.index] if multi else []
                for j, step in enumerate(lr.rule.instruction.steps):
                    line, col = yamlio.locate(node, [*prefix, "instruction", "steps", j])  # type: ignore[arg-type]
                    for _s, _e, phrase, suggestion in find_vague(step):
                        self.add(
                            "SK010",
                            "error",
                            rel,
                            line + 1,
                            col + 1,
                            f"rule {lr.rule.id} step {j + 1}: vague phrase {phrase!r}",
                            suggestion,
                        )
            out.extend(rules)
        return out

    def on_demand(self, manifest: Manifest | None) -> None:
        for rel in self.pkg.on_demand_files():
            try:
                text = self.pkg.text(rel)
            except SkillciError as err:
                self.from_error(err, rel)
                continue
            self.vague(rel, text, 1)
            if not re.search(r"load when\s*:", text, re.IGNORECASE):
                self.add(
                    "SK040",
                    "warning",
                    rel,
                    1,
                    1,
                    "no 'Load when:' guidance",
                    "add a line '> Load when: <trigger>' under the title",
                )

    def examples(self) -> None:
        for rel in self.pkg.example_files():
            try:
                text = self.pkg.text(rel)
            except SkillciError as err:
                self.from_error(err, rel)
                continue
            for i, line in enumerate(text.splitlines(), 1):
                if not line.strip():
                    continue
                try:
                    ok = isinstance(json.loads(line), dict)
                except (ValueError, RecursionError):  # 100k-deep nesting is not an example
                    ok = False
                if not ok:
                    self.add(
                        "SK041",
                        "warning",
                        rel,
                        i,
                        1,
                        "example line is not a JSON object",
                        "one JSON object per line",
                    )

    def _rule_loc(self, lr: LocatedRule, *path: int | str) -> tuple[int, int]:
        data, node = self.pkg.yaml_doc(lr.file)
        prefix: list[int | str] = (
            ["rules", lr.index] if isinstance(data, dict) and "rules" in data else []
        )
        line, col = yamlio.locate(node, [*prefix, *path])
        return line + 1, col + 1

    def rule_checks(self, rules: list[LocatedRule], manifest: Manifest) -> None:
        # long: one block per rule-file check code (SK0xx), in code order
        seen: dict[str, LocatedRule] = {}
        for lr in rules:
            if lr.rule.id in seen:
                first = seen[lr.rule.id]
                self.add(
                    "SK030",
                    "error",
                    lr.file,
                    lr.line,
                    1,
                    f"duplicate rule id {lr.rule.id!r} (first defined in {first.file}:{first.line})",
                    "give each rule a unique id, or merge them with a merge_rules patch",
                )
            else:
                seen[lr.rule.id] = lr
        active = [lr for lr in rules if lr.rule.status is Lifecycle.active]
        anti: dict[str, LocatedRule] = {}
        for lr in active:
            for a in lr.rule.anti_patterns:
                anti.setdefault(_norm(a), lr)
        tools = set(manifest.required_tools)
        dead = {
            lr.rule.id
            for lr in rules
            if lr.rule.status in (Lifecycle.retired, Lifecycle.quarantined)
        }
        workflows_dir = manifest.entrypoints.workflows.rstrip("/")
        for lr in rules:
            r = lr.rule
            if r.status in (Lifecycle.retired, Lifecycle.quarantined):
                continue
            for j, step in enumerate(r.instruction.steps):
                other = anti.get(_norm(step))
                if other is not None and other.rule.id != r.id:
                    line, col = self._rule_loc(lr, "instruction", "steps", j)
                    self.add(
                        "SK031",
                        "error",
                        lr.file,
                        line,
                        col,
                        f"rule {r.id} step {j + 1} {step!r} is an anti-pattern of active rule {other.rule.id}",
                        f"remove the step or change {other.rule.id} ({other.file}:{other.line})",
                    )
            for k, tool in enumerate(r.scope.tools):
                if tool not in tools:
                    line, col = self._rule_loc(lr, "scope", "tools", k)
                    self.add(
                        "SK032",
                        "error",
                        lr.file,
                        line,
                        col,
                        f"rule {r.id} uses tool {tool!r}, which is not in required_tools",
                        "add the tool to manifest required_tools (needs approval) or change the rule",
                    )
            prov = r.provenance
            if prov is None or not prov.introduced_by:
                self.add(
                    "SK033",
                    "error",
                    lr.file,
                    lr.line,
                    1,
                    f"rule {r.id} has no provenance",
                    "add provenance.introduced_by (a patch id or 'human') and supporting_runs",
                )
            for k, ref in enumerate(r.references):
                if ref in dead:
                    line, col = self._rule_loc(lr, "references", k)
                    self.add(
                        "SK034",
                        "error",
                        lr.file,
                        line,
                        col,
                        f"rule {r.id} references {ref!r}, which is retired/quarantined",
                        "drop the reference or restore the rule",
                    )
            if (
                r.scope.workflow is not None
                and f"{workflows_dir}/{r.scope.workflow}.md" not in self.pkg.files
            ):
                line, col = self._rule_loc(lr, "scope", "workflow")
                self.add(
                    "SK035",
                    "error",
                    lr.file,
                    line,
                    col,
                    f"rule {r.id} is scoped to workflow {r.scope.workflow!r} but {workflows_dir}/{r.scope.workflow}.md does not exist",
                    "create the workflow file or fix scope.workflow",
                )
        # retired ids mentioned in rendered text
        if dead:
            texts = [(SKILL_MD, self.pkg.text(SKILL_MD))] + [
                (rel, self.pkg.text(rel)) for rel in self.pkg.on_demand_files()
            ]
            for rel, text in texts:
                for rid in sorted(dead):
                    for m in re.finditer(re.escape(rid) + r"(?![\w.-])", text):
                        line, col = _line_col(text, m.start())
                        self.add(
                            "SK034",
                            "error",
                            rel,
                            line,
                            col,
                            f"{rid!r} is retired/quarantined but still referenced here",
                            "remove the reference",
                        )

    def budgets(self, manifest: Manifest) -> None:
        from skillci.skill.render import render

        try:
            rendered = render(self.pkg, "folder")
        except SkillciError as err:
            self.from_error(err, SKILL_MD)
            return
        b = manifest.token_budget
        if rendered.bootstrap_tokens > b.bootstrap:
            self.add(
                "SK020",
                "error",
                SKILL_MD,
                1,
                1,
                f"bootstrap is {rendered.bootstrap_tokens} tokens, over token_budget.bootstrap {b.bootstrap} by {rendered.bootstrap_tokens - b.bootstrap}",
                "move sections or rules to on-demand files (change_loading_scope)",
            )
        for f in rendered.files:
            if f.kind == "on_demand" and f.tokens > b.per_workflow:
                rel = f.path if f.path in self.pkg.files else (f.source[0] if f.source else f.path)
                self.add(
                    "SK021",
                    "error",
                    rel,
                    1,
                    1,
                    f"{f.path} renders to {f.tokens} tokens, over token_budget.per_workflow {b.per_workflow} by {f.tokens - b.per_workflow}",
                    "split the file or move rules elsewhere",
                )
        window = manifest.target_runtime.context_window
        largest = max((f.tokens for f in rendered.files if f.kind == "on_demand"), default=0)
        at_once = rendered.bootstrap_tokens + largest
        if window is not None and at_once > window * CONTEXT_SHARE:
            self.add(
                "SK023",
                "error",
                SKILL_MD,
                1,
                1,
                f"bootstrap + largest on-demand file is {at_once} tokens, over "
                f"{CONTEXT_SHARE:.0%} of target_runtime.context_window {window} "
                f"({int(window * CONTEXT_SHARE)})",
                "the task, tools and conversation need the rest: move or split content",
            )
        if rendered.total_tokens > b.max_total:
            self.add(
                "SK022",
                "error",
                MANIFEST,
                1,
                1,
                f"all loadable content is {rendered.total_tokens} tokens, over token_budget.max_total {b.max_total} by {rendered.total_tokens - b.max_total}",
                "retire never-hit rules or merge overlapping ones",
            )


def lint(
    pkg: SkillPackage,
    *,
    strict: bool = False,
    folder: str | None = None,
    modes_known: bool = False,
) -> LintReport:
    """Lint a package; never raises for problems in the package's own files.

    ``strict``: what the Agent Skills spec's validator refuses and harnesses read (SK006,
    SK007) is an error too. ``folder``: the name of the directory the skill is installed
    in; when given, SKILL.md's name must equal it (harnesses find skills by folder).
    ``modes_known``: ``pkg.executable`` was read from disk, so a script's missing
    executable bit is a finding (a package read from git or memory does not know).
    """
    linter = _Linter(pkg, strict=strict, folder=folder, modes_known=modes_known)
    return LintReport(package=pkg.root, findings=linter.run())


def iter_codes() -> Iterator[str]:
    for line in (__doc__ or "").splitlines():
        m = re.match(r"^(SK\d{3})\s", line)
        if m:
            yield m.group(1)
