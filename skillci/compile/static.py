"""Static compile: rewrite a skill for one student, from its profile, without a run.

Four rewrites, in this order (docs/design/101):

1. **Steps.** A paragraph of two or more imperative sentences becomes a numbered list,
   one instruction per step (sentences kept word for word; a non-imperative sentence
   stays with the step before it, or in a lead-in before the list).
2. **Vague phrases -> concrete checks** from the curated table (``skillci.compile.vague_replacements``),
   only in instruction sentences, never inside inline markup, and only where the
   replacement keeps the condition; other phrases are flagged in the report for a person
   (docs/design/151).
3. **Over-budget bootstrap -> on-demand files.** When the rendered bootstrap is over the
   profile's budget, reference-like sections move to ``workflows/<name>.md`` with a
   ``change_loading_scope`` op each (largest first; only whole top-level sections;
   procedure sections stay, and so do the stages of a numbered/staged procedure, any
   section holding a constraint and any section another one links to). Every move passes
   the self-check (``skillci.compile.static_check``, design 334) or is undone.
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

import hashlib
import re
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from skillci.analyze.coverage import covers
from skillci.analyze.taxonomy import FailureClass
from skillci.basemodels import StrictModel
from skillci.compile.mdtext import parse
from skillci.compile.patch_check import PatchCheck, check_patch
from skillci.compile.profile import ModelProfile
from skillci.compile.static_check import (
    CONSTRAINT,
    SelfCheck,
    check_package,
    missing_constraints,
    new_broken_links,
    restore_line_endings,
)
from skillci.compile.static_rewrite import (
    IMPERATIVES,
    ParagraphPlan,
    SectionOutcome,
    SectionReport,
    StaticPlan,
    deterministic_plan,
    is_imperative,
    paragraph_plan,
    rewrite_markdown,
    rewrite_section,
    rewrite_vague_text,
    steps_text,
)
from skillci.patch import markdown
from skillci.patch.markdown import HEADING_RE
from skillci.patch.models import AddRule, Author, ChangeLoadingScope, Patch
from skillci.skill.lint import lint
from skillci.skill.models import Instruction, Rule, Trigger, Validation
from skillci.skill.package import SKILL_MD, SkillPackage
from skillci.skill.references import slug
from skillci.skill.render import render

#: 2: sections carry flags and rewritten (issue 13); 3: placement and self_check (issue 33)
STATIC_SCHEMA_VERSION = 3
Mode = Literal["deterministic", "hybrid"]

#: Section titles that carry the procedure or sum the skill up (a quick reference or
#: cheat sheet is the skill in brief, like its overview; design 414): never moved out of
#: the bootstrap.
CORE_TITLES = re.compile(
    r"workflow|step|procedure|process|rule|instruction|overview|quick ?start|when to use|"
    r"quick[ -]?reference|cheat[ -]?sheet|at a glance|"
    r"when to apply|when (?:this|the) skill applies|"
    r"usage|getting started|guideline|verif|how to|checklist|important|must",
    re.IGNORECASE,
)

#: A title that numbers a stage of a procedure ("Stage 2: ...", "Phase 1", "3. Build"):
#: a staged procedure stays together in the bootstrap (all stages move or none; none do).
STAGE_TITLE = re.compile(
    r"^(?:(?:stage|step|phase|part|round|pass)\s*[0-9ivx]+[a-z]?\b|[0-9]+[a-z]?[.):]\s"
    r"|第\s*[0-9一二三四五六七八九十]+\s*[步阶段部]|ステップ\s*[0-9]|단계\s*[0-9]|[0-9]+\s*단계)",
    re.IGNORECASE,
)
#: A line the author marked as binding: its section stays in the bootstrap.
MARKED_LINE = re.compile(r"\b(?:IMPORTANT|CRITICAL|NEVER|ALWAYS)\b")
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


# ---------------------------------------------------------------------------- reports


class OpReport(StrictModel):
    """One structural change (a bounded patch) and its check."""

    kind: Literal["verification_rule", "stop_rule", "move_on_demand"]
    applied: bool
    detail: str = Field(description="What it does or why it was skipped, ours.")
    patch: Patch | None = Field(default=None, description="The patch (when one was built).")
    problems: list[str] = Field(default_factory=list, description="check_patch problems.")


class StaticReport(StrictModel):
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
    self_check: SelfCheck | None = Field(
        default=None, description="What the output was checked for after compiling (design 334)."
    )

    @property
    def rolled_back(self) -> list[SectionReport]:
        return [s for s in self.sections if s.status == "rolled_back"]


@dataclass(frozen=True)
class StaticResult:
    """The compiled package and its report."""

    package: SkillPackage
    report: StaticReport


# ---------------------------------------------------------------------------- files


def _slug(title: str) -> str:
    """An ASCII file name for a section; a title with no ASCII letters (CJK) gets a short
    hash of itself, so two such sections never collide."""
    s = re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")[:40].strip("-")
    return s or "section-" + hashlib.sha256(title.encode()).hexdigest()[:8]


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


def _movable(body: str, title: str) -> bool:
    """A section may move on demand unless it is a stage of a numbered procedure, holds
    one (all stages move or none), or holds a line marked IMPORTANT/CRITICAL/NEVER/ALWAYS
    (subsections included: they move with it)."""
    found = markdown.find_sections(body, title)
    if len(found) != 1 or STAGE_TITLE.search(title.strip()):
        return False
    text = found[0].text
    heads = [h.group(2).strip() for h in map(HEADING_RE.match, text.splitlines()[1:]) if h]
    if any(STAGE_TITLE.search(h) for h in heads):
        return False
    if any(CONSTRAINT.search(line) for line in text.splitlines()):
        return False  # a constraint never leaves the always-loaded part (design 333)
    # a section another part of the bootstrap links to (#anchor) stays where the link points
    rest = body.replace(text, "")
    own = {slug(title.strip())} | {slug(h) for h in heads}
    return not any(f"(#{a})" in rest for a in own if a)


def _move_sections(
    pkg: SkillPackage, budget: int, preferred: list[str], mode: Mode, planner: str | None
) -> tuple[SkillPackage, list[OpReport], dict[str, str]]:
    """Move sections on demand until the bootstrap fits; every move passes the self-check
    or is undone. Returns the package, one report per attempt and {title: file moved to}."""
    reports: list[OpReport] = []
    moved: dict[str, str] = {}
    body_sections = parse(pkg.skill_md.body)
    titles = [s.title for s in body_sections if s.level >= 2]
    # only whole top-level sections move: a branch of a decision, a sub-section of a stage
    # or of any kept section never leaves it alone (issue 33)
    top = min((s.level for s in body_sections if s.level >= 2), default=2)
    whole = {s.title for s in body_sections if s.level == top}
    dupes = {t for t in titles if titles.count(t) > 1}
    tokens = {s.title: pkg.tokens(s.text) for s in body_sections if s.level >= 2}
    body = pkg.skill_md.body
    cands = [
        t
        for t in dict.fromkeys(titles)
        if t not in dupes and t in whole and not CORE_TITLES.search(t) and _movable(body, t)
    ]
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
        problems = _move_problems(pkg, after)
        if problems:
            # the self-check: undo this move (the package stays as it was before it)
            reports.append(
                OpReport(
                    kind="move_on_demand",
                    applied=False,
                    detail=f"'{title}' moved back: it failed the self-check",
                    patch=patch,
                    problems=problems,
                )
            )
            continue
        pkg = after
        moved[title] = path
        reports.append(OpReport(kind="move_on_demand", applied=True, detail=why, patch=patch))
    return pkg, reports, moved


def _move_problems(before: SkillPackage, after: SkillPackage) -> list[str]:
    """Why one move fails the self-check (design 334): a constraint sentence left SKILL.md,
    a link now points at nothing, or the bootstrap did not shrink."""
    out = [
        f"constraint sentence left the bootstrap: {s[:80]!r}"
        for s in missing_constraints(before.text(SKILL_MD), after.text(SKILL_MD))
    ]
    out += [f"link broken: {t}" for t in new_broken_links(before.files, after.files)]
    b0, b1 = _bootstrap(before), _bootstrap(after)
    if b1 >= b0:
        out.append(f"bootstrap did not shrink ({b0} -> {b1} tokens)")
    return out


def _keep_shrunk(
    before_moves: SkillPackage,
    boot_before: int,
    before_rules: SkillPackage,
    cur: SkillPackage,
    moved: dict[str, str],
    ops: list[OpReport],
    notes: list[str],
) -> tuple[SkillPackage, dict[str, str]]:
    """The bootstrap shrank or nothing moved (issue 33, design 414): sections moved to make
    the bootstrap smaller, so what compile adds to it afterwards (a rule and its index
    line) may not make it larger than the source's. An added rule that would is left out;
    if the moves alone still leave it no smaller (rewrites added to it), the moves are
    undone too. Each undo is said in the report. Returns the package and what stays moved."""
    after = _bootstrap(cur)
    if after < boot_before:
        return cur, moved
    rules = [o for o in ops if o.applied and o.kind != "move_on_demand"]
    if rules:
        without = _bootstrap(before_rules)
        for o in rules:
            o.applied = False
            o.detail = (
                f"not added: with it the bootstrap would grow from {boot_before} to {after} "
                f"tokens although sections moved to make it smaller ({without} without it)"
            )
        notes.append(
            f"left out {', '.join(o.kind.replace('_', ' ') for o in rules)}: it would make the "
            f"bootstrap larger ({after} tokens) than the source's {boot_before}"
        )
        cur, after = before_rules, without
        if after < boot_before:
            return cur, moved
    for o in ops:
        if o.kind == "move_on_demand" and o.applied:
            o.applied = False
            o.detail = f"moved back: the bootstrap would not shrink ({boot_before} -> {after})"
    notes.append(
        f"moves undone: the bootstrap would be {after} tokens after them, not smaller than "
        f"the source's {boot_before}"
    )
    return before_moves, {}


def _place(sections: list[SectionReport], body: str, moved: dict[str, str]) -> None:
    """Name where each SKILL.md section went: ``kept``, or ``moved to FILE`` (a moved
    section's sub-sections move with it)."""
    parsed = parse(body)
    where: dict[int, str] = {}
    for i, sec in enumerate(parsed):
        if sec.title in moved and sec.level >= 2:
            where[sec.index] = moved[sec.title]
            for sub in parsed[i + 1 :]:
                if sub.level <= sec.level:
                    break
                where[sub.index] = moved[sec.title]
    for rep in sections:
        if rep.file == SKILL_MD and rep.index in where:
            rep.placement = f"moved to {where[rep.index]}"


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
    # long: one pass in pipeline order — moves, each checked and undone on failure, then
    # rewrites under their guard, then the whole-package self-check (designs 334-336)
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
    moved: dict[str, str] = {}
    before_moves = cur
    if _bootstrap(cur) > budget:
        cur, moves, moved = _move_sections(
            cur, budget, list(plan.move) if plan else [], mode, planner
        )
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
    before_rules = cur
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
    if moved:
        cur, moved = _keep_shrunk(
            before_moves, boot_before, before_rules, cur, moved, ops, note_list
        )
    eol_fix = restore_line_endings(pkg.files, cur.files, SKILL_MD)
    if eol_fix:
        cur = cur.with_files(dict(eol_fix))
    self_check = check_package(
        pkg.files,
        cur.files,
        SKILL_MD,
        moved=bool(moved),
        bootstrap_before=boot_before,
        bootstrap_after=_bootstrap(cur),
        undone=[f"{o.detail}: {'; '.join(o.problems)}" for o in ops if "moved back" in o.detail],
    )
    if not self_check.ok:
        note_list.append(
            "the compiled package failed its self-check: "
            + "; ".join(
                self_check.constraints_missing[:2]
                + self_check.links_broken[:2]
                + self_check.encoding_problems[:2]
            )
        )
    _place(sections, pkg.skill_md.body, moved)
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
        self_check=self_check,
    )
    return StaticResult(cur, report)


SAVED_MODELS: dict[str, type[BaseModel]] = {
    "static-plan": StaticPlan,
    "static-report": StaticReport,
}

__all__ = [
    "CONSTRAINT",
    "CORE_TITLES",
    "IMPERATIVES",
    "MARKED_LINE",
    "SAVED_MODELS",
    "STAGE_TITLE",
    "STATIC_SCHEMA_VERSION",
    "STOP_RULE",
    "VERIFY_RULE",
    "Mode",
    "OpReport",
    "ParagraphPlan",
    "SectionOutcome",
    "SectionReport",
    "SelfCheck",
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
