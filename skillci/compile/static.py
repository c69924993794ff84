"""Static compile: rewrite a skill for one student, from its profile, without a run.

Four rewrites, in this order (docs/design/101):

1. **Steps.** A paragraph of two or more imperative sentences becomes a numbered list,
   one instruction per step (sentences kept word for word; a non-imperative sentence
   stays with the step before it, or in a lead-in before the list).
2. **Vague phrases -> concrete checks** from the curated table (``skillci.compile.checks``),
   everywhere outside code.
3. **Over-budget bootstrap -> on-demand files.** When the rendered bootstrap is over the
   profile's budget, reference-like sections move to ``workflows/<name>.md`` with a
   ``change_loading_scope`` op each (largest first; procedure sections stay).
4. **Verification / stop rules** where the profile shows the student skips verification
   or repeats failing calls: one ``add_rule`` op each, unless a rule already covers it.

Rewrites 1-2 are checked section by section by the semantic guard
(``skillci.compile.static_guard``); a section that fails goes back to its original text.
Rewrites 3-4 are bounded patches checked by ``check_patch`` (limits, guard, lint).
Frontmatter, code blocks and protected literals never change. Hybrid mode replaces the
deterministic choice of steps and moves with a :class:`StaticPlan` from a planning model
(``skillci.compile.planner``); the same rewriting and guards apply. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from skillci.analyze.coverage import covers
from skillci.analyze.taxonomy import FailureClass
from skillci.compile.check import PatchCheck, check_patch
from skillci.compile.checks import VagueHit, find_hits, rewrite_vague
from skillci.compile.mdtext import (
    Block,
    Section,
    SkillDoc,
    code_span_ranges,
    parse,
    parse_doc,
    split_sentences,
)
from skillci.compile.profile import ModelProfile
from skillci.compile.static_guard import guard_section
from skillci.patch.models import AddRule, Author, ChangeLoadingScope, Patch
from skillci.skill.lint import lint
from skillci.skill.models import Instruction, Rule, Trigger, Validation
from skillci.skill.package import SKILL_MD, SkillPackage
from skillci.skill.render import render

STATIC_SCHEMA_VERSION = 1
Mode = Literal["deterministic", "hybrid"]

IMPERATIVES = frozenset(
    [
        "add",
        "analyse",
        "analyze",
        "apply",
        "ask",
        "avoid",
        "build",
        "call",
        "change",
        "check",
        "choose",
        "clean",
        "click",
        "close",
        "collect",
        "commit",
        "compare",
        "compute",
        "configure",
        "confirm",
        "convert",
        "copy",
        "count",
        "create",
        "cut",
        "define",
        "delete",
        "describe",
        "determine",
        "do",
        "download",
        "edit",
        "enable",
        "ensure",
        "export",
        "extract",
        "fill",
        "find",
        "fix",
        "follow",
        "format",
        "generate",
        "get",
        "give",
        "go",
        "identify",
        "import",
        "include",
        "insert",
        "inspect",
        "install",
        "keep",
        "launch",
        "list",
        "load",
        "locate",
        "look",
        "make",
        "mark",
        "merge",
        "move",
        "note",
        "open",
        "parse",
        "paste",
        "pick",
        "place",
        "prefer",
        "prepare",
        "print",
        "put",
        "read",
        "record",
        "reduce",
        "re-run",
        "refer",
        "remove",
        "rename",
        "render",
        "repeat",
        "replace",
        "report",
        "reproduce",
        "restart",
        "retry",
        "return",
        "review",
        "run",
        "save",
        "search",
        "select",
        "send",
        "set",
        "skip",
        "sort",
        "split",
        "start",
        "stop",
        "submit",
        "summarize",
        "take",
        "test",
        "trace",
        "try",
        "type",
        "unpack",
        "update",
        "upload",
        "use",
        "validate",
        "verify",
        "wait",
        "write",
    ]
)
_LEAD = re.compile(
    r"^(?:(?:first|then|next|finally|afterwards|after that|also|now|lastly|second|third|"
    r"before (?:that|anything)|once done|otherwise|carefully|thoroughly|please|just)\b,?\s*)+",
    re.IGNORECASE,
)
_NEG = re.compile(r"^(?:do not|don't|never|always|only)\s+", re.IGNORECASE)
_WIDE_END = re.compile(r"[\u3000-\u9fff\uff00-\uffef]$")
#: Section titles that carry the procedure: never moved out of the bootstrap.
CORE_TITLES = re.compile(
    r"workflow|step|procedure|process|rule|instruction|overview|quick ?start|when to use|"
    r"usage|getting started|guideline|verif|how to|checklist|important|must",
    re.IGNORECASE,
)

VERIFY_RULE = Rule(
    id="static.verify-before-done",
    trigger=Trigger(any=["the_work_product_was_changed"]),
    instruction=Instruction(
        steps=[
            "rerun_the_check_the_task_names_after_every_edit",
            "if_the_check_fails_revert_or_change_the_edit_and_rerun_it",
            "report_success_only_after_the_check_passes",
        ]
    ),
    validation=Validation(success=["the_named_check_passes_after_the_last_edit"]),
    anti_patterns=["reported_success_without_verification"],
)
STOP_RULE = Rule(
    id="static.stop-repeating-failures",
    trigger=Trigger(any=["a_command_failed_twice_with_the_same_output"]),
    instruction=Instruction(
        steps=[
            "stop_repeating_a_command_that_failed_twice_with_the_same_output",
            "change_one_input_before_running_it_again",
        ]
    ),
    anti_patterns=["repeated_identical_call"],
)


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# ---------------------------------------------------------------------------- plan


class ParagraphPlan(_Strict):
    """How one paragraph becomes steps: sentence numbers (0-based, in the paragraph)."""

    section: int = Field(ge=0, description="Section index in the parsed file.")
    block: int = Field(ge=0, description="Block index within the section.")
    intro: list[int] = Field(default_factory=list, description="Sentences kept as a lead-in.")
    steps: list[list[int]] = Field(
        default_factory=list, description="Steps in order; each lists its sentences in order."
    )


class StaticPlan(_Strict):
    """Which paragraphs become steps and which sections may move on demand."""

    schema_version: int = Field(default=STATIC_SCHEMA_VERSION, description="Plan schema.")
    source: Literal["deterministic", "model"] = Field(description="Who made the plan.")
    file: str = Field(default=SKILL_MD, description="The markdown file the plan is about.")
    paragraphs: list[ParagraphPlan] = Field(default_factory=list)
    move: list[str] = Field(
        default_factory=list,
        description="Section titles to move first when the bootstrap is over budget.",
    )


def _bare(sentence: str) -> str:
    s = sentence.strip().lstrip("*_\"'(")
    s = _LEAD.sub("", s)
    s = _NEG.sub("", s)
    return s


def is_imperative(sentence: str) -> bool:
    """The sentence starts with an instruction verb (after First,/Then/Never/... leads)."""
    s = _bare(sentence)
    m = re.match(r"[A-Za-z][A-Za-z-]*", s)
    return m is not None and m.group(0).lower() in IMPERATIVES


def paragraph_plan(
    section: int, block: int, text: str, *, min_imperative: int = 2
) -> ParagraphPlan | None:
    """The deterministic plan for one paragraph (None: leave it a paragraph).

    It qualifies with at least ``min_imperative`` imperative sentences that are at least
    half of its sentences (the share is not required when ``min_imperative`` is 1)."""
    sentences, _ = split_sentences(text)
    imp = [is_imperative(s) for s in sentences]
    if sum(imp) < min_imperative or (min_imperative > 1 and sum(imp) * 2 < len(sentences)):
        return None
    plan = ParagraphPlan(section=section, block=block)
    for i, is_imp in enumerate(imp):
        if is_imp:
            plan.steps.append([i])
        elif plan.steps:
            plan.steps[-1].append(i)
        else:
            plan.intro.append(i)
    return plan


def deterministic_plan(text: str, file: str = SKILL_MD) -> StaticPlan:
    """Steps for every qualifying paragraph of a markdown file (frontmatter skipped)."""
    doc = parse_doc(text)
    out = StaticPlan(source="deterministic", file=file)
    for sec in doc.sections:
        for bi, b in enumerate(sec.blocks):
            if b.kind == "para":
                p = paragraph_plan(sec.index, bi, b.text)
                if p is not None:
                    out.paragraphs.append(p)
    return out


# ---------------------------------------------------------------------------- rewriting


def rewrite_vague_text(text: str) -> tuple[str, list[VagueHit]]:
    """Replace vague phrases outside code spans; add each check after its sentence."""
    sentences, seps = split_sentences(text)
    hits_all: list[VagueHit] = []
    out: list[str] = []
    for s, sep in zip(sentences, seps, strict=True):
        hits = find_hits(s, code_span_ranges(s))
        new = s
        for h in reversed(hits):
            new = new[: h.start] + h.replacement + new[h.end :]
        checks = list(dict.fromkeys(h.check for h in hits if h.check))
        for c in checks:
            if c not in new:
                tight = _WIDE_END.search(new.rstrip()) is not None
                new = new.rstrip() + ("" if tight else " ") + c
        hits_all += hits
        out.append(new + sep)
    return "".join(out), hits_all


def _list_rewrite(text: str) -> tuple[str, list[VagueHit]]:
    lines = text.splitlines(keepends=True)
    hits_all: list[VagueHit] = []
    out = []
    for line in lines:
        m = re.match(r"^(\s*(?:[-*+]|\d{1,9}[.)])?\s*)(.*?)(\r?\n)?$", line, re.DOTALL)
        assert m is not None
        head, body, nl = m.group(1), m.group(2), m.group(3) or ""
        new, hits = rewrite_vague_text(body)
        hits_all += hits
        out.append(head + new + nl)
    return "".join(out), hits_all


def _table_rewrite(text: str) -> tuple[str, list[VagueHit]]:
    """Vague phrases in table cells get their replacement (no check sentence: it would
    break the row)."""
    hits_all: list[VagueHit] = []
    out = []
    for line in text.splitlines(keepends=True):
        new, hits = rewrite_vague(line, code_span_ranges(line))
        hits_all += hits
        out.append(new)
    return "".join(out), hits_all


def steps_text(text: str, plan: ParagraphPlan) -> tuple[str, list[VagueHit]]:
    sentences, _ = split_sentences(text)
    n = len(sentences)

    def pick(ids: list[int]) -> list[str]:
        return [sentences[i].strip() for i in ids if 0 <= i < n]

    hits_all: list[VagueHit] = []
    parts: list[str] = []
    if plan.intro:
        intro, hits = rewrite_vague_text(" ".join(pick(plan.intro)))
        hits_all += hits
        parts.append(intro.strip() + "\n\n")
    for k, ids in enumerate(plan.steps, 1):
        step, hits = rewrite_vague_text(" ".join(pick(ids)))
        hits_all += hits
        parts.append(f"{k}. " + step.strip().replace("\n", "\n   ") + "\n")
    trailing = text[len(text.rstrip("\r\n")) :]
    body = "".join(parts)
    return body.rstrip("\n") + (trailing or "\n"), hits_all


@dataclass
class SectionOutcome:
    """What happened to one section (internal; reported as :class:`SectionReport`)."""

    section: Section
    result: Section
    changes: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)


def rewrite_section(sec: Section, plans: dict[int, ParagraphPlan]) -> SectionOutcome:
    """Apply steps (by ``plans``, keyed by block index) and vague-phrase rewriting to one
    section, then guard it; a failing section comes back unchanged with the reasons."""
    blocks: list[Block] = []
    changes: list[str] = []
    for bi, b in enumerate(sec.blocks):
        if b.kind == "para" and bi in plans and plans[bi].steps:
            text, hits = steps_text(b.text, plans[bi])
            changes.append(f"paragraph {bi}: {len(plans[bi].steps)} numbered steps")
        elif b.kind in ("para", "quote"):
            text, hits = rewrite_vague_text(b.text)
        elif b.kind == "list":
            text, hits = _list_rewrite(b.text)
        elif b.kind == "table":
            text, hits = _table_rewrite(b.text)
        else:
            text, hits = b.text, []
        changes += [f"vague {h.phrase!r} -> curated check {h.check_id}" for h in hits]
        blocks.append(Block(b.kind, text))
    # re-parse: a paragraph may have become a paragraph plus a list
    new_text = sec.heading + "".join(b.text for b in blocks)
    flat = tuple(b for s in parse(new_text) for b in s.blocks)
    result = Section(sec.index, sec.level, sec.title, sec.heading, flat)
    if result.text == sec.text:
        return SectionOutcome(sec, sec)
    reasons = guard_section(sec, result)
    if reasons:
        return SectionOutcome(sec, sec, changes, reasons)
    return SectionOutcome(sec, result, changes)


# ---------------------------------------------------------------------------- reports


class SectionReport(_Strict):
    """One section of one file: unchanged, rewritten, or rolled back (with why)."""

    file: str = Field(description="Package file.")
    index: int = Field(description="Section index in the file (0 = before the first heading).")
    title: str = Field(description="Heading text ('' for the preamble).")
    status: Literal["unchanged", "rewritten", "rolled_back"]
    changes: list[str] = Field(default_factory=list, description="What the rewrite did.")
    reasons: list[str] = Field(
        default_factory=list, description="Why the guard rolled the section back."
    )


class OpReport(_Strict):
    """One structural change (a bounded patch) and its check."""

    kind: Literal["verification_rule", "stop_rule", "move_on_demand"]
    applied: bool
    detail: str = Field(description="What it does or why it was skipped, ours.")
    patch: Patch | None = Field(default=None, description="The patch (when one was built).")
    problems: list[str] = Field(default_factory=list, description="check_patch problems.")


class StaticReport(_Strict):
    """Everything one static compile did (``report.json``)."""

    schema_version: int = Field(default=STATIC_SCHEMA_VERSION, description="Report schema.")
    skill: str = Field(description="Skill name.")
    mode: Mode
    student: str = Field(description="Target student route (--model).")
    planner: str | None = Field(default=None, description="Planning route (hybrid).")
    plan_source: Literal["deterministic", "model"] = Field(description="Who made the plan.")
    profile_revision: str = Field(description="Revision of the profile used.")
    source_hash: str = Field(description="Content hash of the input package.")
    output_hash: str = Field(description="Content hash of the output package.")
    sections: list[SectionReport] = Field(default_factory=list)
    ops: list[OpReport] = Field(default_factory=list)
    bootstrap_budget: int = Field(description="Bootstrap tokens allowed for this student.")
    bootstrap_before: int = Field(description="Rendered bootstrap tokens of the input.")
    bootstrap_after: int = Field(description="Rendered bootstrap tokens of the output.")
    lint_errors_before: int
    lint_errors_after: int
    lint_after: list[str] = Field(default_factory=list, description="Remaining lint errors.")
    notes: list[str] = Field(default_factory=list, description="Decisions worth reading, ours.")

    @property
    def rolled_back(self) -> list[SectionReport]:
        return [s for s in self.sections if s.status == "rolled_back"]


@dataclass(frozen=True)
class StaticResult:
    """The compiled package and its report."""

    package: SkillPackage
    report: StaticReport


# ---------------------------------------------------------------------------- files


def rewrite_markdown(
    text: str, file: str, plan: StaticPlan | None, *, has_frontmatter: bool
) -> tuple[str, list[SectionReport]]:
    """A markdown file rewritten section by section (frontmatter kept byte-exact)."""
    doc = parse_doc(text) if has_frontmatter else SkillDoc("", tuple(parse(text)))
    p = plan if plan is not None else deterministic_plan(text, file)
    by_section: dict[int, dict[int, ParagraphPlan]] = {}
    for pp in p.paragraphs:
        by_section.setdefault(pp.section, {})[pp.block] = pp
    new_sections: list[Section] = []
    reports: list[SectionReport] = []
    for sec in doc.sections:
        o = rewrite_section(sec, by_section.get(sec.index, {}))
        new_sections.append(o.result)
        status: Literal["unchanged", "rewritten", "rolled_back"] = (
            "rolled_back" if o.reasons else "unchanged" if o.result is sec else "rewritten"
        )
        reports.append(
            SectionReport(
                file=file,
                index=sec.index,
                title=sec.title,
                status=status,
                changes=o.changes,
                reasons=o.reasons,
            )
        )
    out = doc.frontmatter + "".join(s.text for s in new_sections)
    return out, reports


def _slug(title: str) -> str:
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")
    return s[:40].strip("-") or "section"


def _author(mode: Mode, planner: str | None) -> Author:
    return Author(compiler=f"static-{mode}", model=planner)


def _lint_keys(pkg: SkillPackage) -> set[tuple[str, str]]:
    return {(f.code, f.file) for f in lint(pkg).findings if f.severity == "error"}


def _check(pkg: SkillPackage, patch: Patch) -> tuple[PatchCheck, SkillPackage | None]:
    """``check_patch``, with lint compared by (code, file): a budget error that only
    changes its numbers (the bootstrap got smaller but is still over) is not new."""
    chk, applied = check_patch(pkg, patch)
    if applied is None:
        return chk, None
    new = sorted(_lint_keys(applied.after) - _lint_keys(pkg))
    chk = chk.model_copy(update={"lint_errors": [f"{c} in {f}" for c, f in new]})
    return chk, (applied.after if chk.ok else None)


def _rule_op(
    pkg: SkillPackage,
    rule: Rule,
    cls: FailureClass,
    kind: Literal["verification_rule", "stop_rule"],
    mode: Mode,
    planner: str | None,
    why: str,
) -> tuple[SkillPackage, OpReport]:
    if any(covers(lr.rule, cls) and lr.rule.status.rendered for lr in pkg.rules):
        return pkg, OpReport(kind=kind, applied=False, detail=f"a rule already covers {cls.value}")
    patch = Patch(
        failure_class=cls.value,
        rationale=why,
        author=_author(mode, planner),
        ops=[AddRule(rule=rule, reason=why)],
    ).with_id()
    chk, after = _check(pkg, patch)
    if after is None:
        return pkg, OpReport(
            kind=kind,
            applied=False,
            detail="the rule did not pass its check",
            patch=patch,
            problems=chk.problems(),
        )
    return after, OpReport(kind=kind, applied=True, detail=why, patch=patch)


def _bootstrap(pkg: SkillPackage) -> int:
    return render(pkg).bootstrap_tokens


def _move_sections(
    pkg: SkillPackage, budget: int, preferred: list[str], mode: Mode, planner: str | None
) -> tuple[SkillPackage, list[OpReport]]:
    reports: list[OpReport] = []
    body_sections = parse(pkg.skill_md.body)
    titles = [s.title for s in body_sections if s.level >= 2]
    dupes = {t for t in titles if titles.count(t) > 1}
    tokens = {s.title: pkg.tokens(s.text) for s in body_sections if s.level >= 2}
    cands = [t for t in dict.fromkeys(titles) if t not in dupes and not CORE_TITLES.search(t)]
    order = [t for t in preferred if t in cands] + sorted(
        (t for t in cands if t not in preferred), key=lambda t: (-tokens[t], t)
    )
    wf_dir = pkg.manifest.entrypoints.workflows.rstrip("/")
    for title in order:
        if _bootstrap(pkg) <= budget:
            break
        path = f"{wf_dir}/{_slug(title)}.md"
        if path in pkg.files:
            reports.append(
                OpReport(kind="move_on_demand", applied=False, detail=f"{path} already exists")
            )
            continue
        stub = f"# {title}\n\n> Load when: the task needs the {title} part of this skill.\n"
        staged = pkg.with_files({path: stub.encode()})
        why = f"bootstrap over the student's budget of {budget} tokens: move '{title}' on demand"
        patch = Patch(
            failure_class=FailureClass.context_overflow.value,
            rationale=why,
            author=_author(mode, planner),
            ops=[
                ChangeLoadingScope.model_validate(
                    {"section": title, "from": SKILL_MD, "to": path, "reason": why}
                )
            ],
        ).with_id()
        chk, after = _check(staged, patch)
        if after is None:
            reports.append(
                OpReport(
                    kind="move_on_demand",
                    applied=False,
                    detail=f"'{title}' did not move",
                    patch=patch,
                    problems=chk.problems(),
                )
            )
            continue
        pkg = after
        reports.append(OpReport(kind="move_on_demand", applied=True, detail=why, patch=patch))
    return pkg, reports


def compile_static(
    pkg: SkillPackage,
    profile: ModelProfile,
    *,
    mode: Mode = "deterministic",
    plan: StaticPlan | None = None,
    planner: str | None = None,
    notes: list[str] | None = None,
) -> StaticResult:
    """Compile ``pkg`` for the student of ``profile`` (see the module docstring).

    ``plan`` (hybrid mode) replaces the deterministic plan for SKILL.md; it can only choose
    among the source's sentences and sections, and the guards still decide.
    """
    m = pkg.manifest
    lint_before = lint(pkg).errors
    boot_before = _bootstrap(pkg)
    budget = profile.bootstrap_budget(m.token_budget.bootstrap)
    note_list = list(notes or [])
    sections: list[SectionReport] = []
    changes: dict[str, bytes | None] = {}
    for rel in [SKILL_MD, *pkg.on_demand_files()]:
        text = pkg.text(rel)
        file_plan = plan if (plan is not None and rel == plan.file) else None
        new, reps = rewrite_markdown(text, rel, file_plan, has_frontmatter=rel == SKILL_MD)
        sections += reps
        if new != text:
            changes[rel] = new.encode("utf-8")
    cur = pkg.with_files(changes) if changes else pkg
    ops: list[OpReport] = []
    if _bootstrap(cur) > budget:
        cur, moves = _move_sections(cur, budget, list(plan.move) if plan else [], mode, planner)
        ops += moves
        if _bootstrap(cur) > budget:
            note_list.append(
                f"bootstrap still {_bootstrap(cur)} tokens, over the budget of {budget}: "
                "no further section may move (procedure sections stay)"
            )
    if profile.loads_on_demand is False and any(o.applied for o in ops):
        note_list.append(
            "the profile shows this student rarely loads on-demand files; moved sections "
            "are listed in the bootstrap's on-demand index"
        )
    if profile.skips_verification:
        cur, rep = _rule_op(
            cur,
            VERIFY_RULE,
            FailureClass.reported_success_without_verification,
            "verification_rule",
            mode,
            planner,
            "the profile shows the student finishing without checking its work",
        )
        ops.append(rep)
    elif not profile.measured:
        note_list.append("profile has no measured runs: verification/stop rules not considered")
    if profile.misses_stop:
        cur, rep = _rule_op(
            cur,
            STOP_RULE,
            FailureClass.repeated_identical_call,
            "stop_rule",
            mode,
            planner,
            "the profile shows the student repeating failing calls",
        )
        ops.append(rep)
    report_after = lint(cur)
    report = StaticReport(
        skill=m.name,
        mode=mode,
        student=profile.route,
        planner=planner,
        plan_source=plan.source if plan is not None else "deterministic",
        profile_revision=profile.revision,
        source_hash=pkg.content_hash,
        output_hash=cur.content_hash,
        sections=sections,
        ops=ops,
        bootstrap_budget=budget,
        bootstrap_before=boot_before,
        bootstrap_after=_bootstrap(cur),
        lint_errors_before=lint_before,
        lint_errors_after=report_after.errors,
        lint_after=[
            f"{f.code} {f.message}" for f in report_after.findings if f.severity == "error"
        ],
        notes=note_list,
    )
    return StaticResult(cur, report)


SAVED_MODELS: dict[str, type[BaseModel]] = {
    "static-plan": StaticPlan,
    "static-report": StaticReport,
}

__all__ = [
    "CORE_TITLES",
    "IMPERATIVES",
    "SAVED_MODELS",
    "STATIC_SCHEMA_VERSION",
    "STOP_RULE",
    "VERIFY_RULE",
    "Mode",
    "OpReport",
    "ParagraphPlan",
    "SectionOutcome",
    "SectionReport",
    "StaticPlan",
    "StaticReport",
    "StaticResult",
    "compile_static",
    "deterministic_plan",
    "is_imperative",
    "paragraph_plan",
    "rewrite_markdown",
    "rewrite_section",
    "rewrite_vague_text",
    "steps_text",
]
