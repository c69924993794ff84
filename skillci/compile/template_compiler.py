"""The deterministic template compiler (embedded default).

For a compilable diagnosis it emits exactly one rule op (plus, on request, an
``add_regression_test`` op):

- ``change_loading_scope`` to SKILL.md when the covering rule sits in a workflow file the
  student never loaded (the rule was right, the student never saw it);
- ``replace_rule`` when a rule with the target id exists: the class's required steps are
  inserted (before a final ``report_success...`` step), or — when the rule already has
  them and the student still failed with it — the class's reinforcing step; a retired or
  quarantined rule is restored this way;
- ``add_rule`` otherwise, from the canonical rule base for the target id.

A skill that does not build on the bundled repo-debugging rule base (none of its rule ids)
gets the class's *generic* template instead (``skillci.compile.skill_view``): domain-free
steps under a rule id in the skill's own area, with the task's check command — so no text
of the bundled fixture reaches another skill's patch.

Everything written comes from ``skillci.compile.rule_templates`` and allowlisted shapes of the
teacher's actions (``skillci.compile.observe``); no text of a trajectory or a diagnosis's
free-text fields reaches the patch.
"""

from __future__ import annotations

import re

from skillci.analyze.taxonomy import FailureClass, class_for_anti_pattern, info
from skillci.analyze.trajectory import Trajectory
from skillci.compile.base import CompileInput, CompileOutput
from skillci.compile.observe import Observed, observe
from skillci.compile.rule_templates import RULE_BASES, ClassTemplate, RuleBase, template_for
from skillci.compile.skill_view import (
    GenericTemplate,
    builds_on_fixture,
    generic_template,
    vocabulary,
)
from skillci.errors import CompileError
from skillci.patch.models import (
    AddRegressionTest,
    AddRule,
    Author,
    ChangeLoadingScope,
    Op,
    Patch,
    ReplaceRule,
)
from skillci.skill.models import (
    FailurePolicy,
    Instruction,
    Rule,
    RuleScope,
    Trigger,
    Validation,
)
from skillci.skill.package import SKILL_MD, SkillPackage

_LOAD_RE = re.compile(r"\bload_(workflows?|tools?|recovery)_([\w-]+)")


def _names_class(rule: Rule, cls: FailureClass) -> bool:
    """Whether one of the rule's anti-patterns names the class (explicitly, not by id)."""
    return any(class_for_anti_pattern(ap) is cls for ap in rule.anti_patterns)


def _key(step: str) -> str:
    return re.sub(r"[\s_-]+", "_", step.strip().lower())


def _has(steps: list[str], step: str) -> bool:
    k = _key(step)
    return any(_key(s) == k for s in steps)


def _referenced_file(text: str) -> str | None:
    m = _LOAD_RE.search(text)
    if not m:
        return None
    kind, stem = m.groups()
    base = {"workflow": "workflows", "tool": "tools"}.get(kind, kind)
    return f"{base}/{stem}.md"


def _available(pkg: SkillPackage, text: str) -> bool:
    """A step or action that loads an on-demand file is only kept when the file exists."""
    ref = _referenced_file(text)
    return ref is None or ref in pkg.files


def _workflow(pkg: SkillPackage, wanted: str | None) -> str | None:
    if wanted is None:
        return None
    base = pkg.manifest.entrypoints.workflows.rstrip("/")
    return wanted if f"{base}/{wanted}.md" in pkg.files else None


def _tools(pkg: SkillPackage, wanted: tuple[str, ...]) -> list[str]:
    allowed = set(pkg.manifest.required_tools)
    return [t for t in wanted if t in allowed]


def build_rule(
    rule_id: str, base: RuleBase, tmpl: ClassTemplate, obs: Observed, pkg: SkillPackage
) -> Rule:
    """A new rule from ``base`` with the class's required steps and anti-pattern."""
    steps = [obs.fill(s) for s in base.steps if _available(pkg, s)]
    for s in tmpl.required:
        if not _has(steps, obs.fill(s)):
            steps.append(obs.fill(s))
    anti = list(base.anti_patterns)
    rule = Rule(
        id=rule_id,
        scope=RuleScope(workflow=_workflow(pkg, base.workflow), tools=_tools(pkg, base.tools)),
        trigger=Trigger(all=list(base.trigger_all), any=list(base.trigger_any)),
        instruction=Instruction(steps=steps),
        validation=Validation(success=list(dict.fromkeys([*base.validation, *tmpl.validation]))),
        failure_policy=[
            FailurePolicy(condition=c, action=a)
            for c, a in base.failure_policy
            if _available(pkg, a)
        ],
        anti_patterns=anti,
    )
    if not _names_class(rule, tmpl.failure_class):
        rule = rule.model_copy(update={"anti_patterns": [*anti, tmpl.anti_pattern]})
    return rule


def strengthen(rule: Rule, tmpl: ClassTemplate, obs: Observed) -> tuple[Rule, list[str]]:
    """``rule`` with the class's missing required steps (else its reinforcing step).

    Returns the new rule and the steps added. A retired/quarantined rule comes back even
    when no step is added (apply makes it a candidate again).
    """
    steps = list(rule.instruction.steps)
    added = [obs.fill(s) for s in tmpl.required if not _has(steps, obs.fill(s))]
    if not added:
        added = [obs.fill(s) for s in tmpl.reinforce if not _has(steps, obs.fill(s))][:1]
    if not added and rule.status.rendered:
        raise CompileError(
            f"rule {rule.id} already carries every step the {tmpl.failure_class.value} "
            "template has; a stronger skill text is not available",
            hint="the gap is likely not compilable: route the diagnosis to its upgrade path",
        )
    at = next((i for i, s in enumerate(steps) if _key(s).startswith("report_success")), len(steps))
    steps[at:at] = added
    update: dict[str, object] = {"instruction": Instruction(steps=steps)}
    if not _names_class(rule, tmpl.failure_class):
        update["anti_patterns"] = [*rule.anti_patterns, tmpl.anti_pattern]
    missing_val = [v for v in tmpl.validation if v not in rule.validation.success]
    if missing_val:
        update["validation"] = Validation(success=[*rule.validation.success, *missing_val])
    return rule.model_copy(update=update, deep=True), added


def generic_rule(rule_id: str, generic: GenericTemplate) -> Rule:
    """A new rule from a generic template (always loaded: no workflow, no tool scope)."""
    t = generic.template
    return Rule(
        id=rule_id,
        scope=RuleScope(workflow=None, tools=[]),
        trigger=Trigger(all=[generic.trigger], any=[]),
        instruction=Instruction(steps=list(t.required)),
        validation=Validation(success=list(t.validation)),
        anti_patterns=[t.anti_pattern],
    )


class TemplateCompiler:
    """Deterministic: one template per failure subclass (see module docstring)."""

    name = "template"

    def compile(self, request: CompileInput) -> CompileOutput:
        d = request.diagnosis
        if not d.skill_compilable:
            raise CompileError(
                f"{d.failure_class.value} is not compilable (upgrade path: "
                f"{d.upgrade_path.value if d.upgrade_path else 'none'})",
                hint="record the upgrade path instead of proposing a patch",
            )
        tmpl = template_for(d.failure_class)
        if tmpl is None:  # pragma: no cover - every compilable class has a template
            raise CompileError(f"no template for {d.failure_class.value}")
        pkg = request.package
        teacher = request.teacher
        t_traj = (
            Trajectory.from_record(teacher, checks=frozenset(request.checks))
            if teacher is not None and teacher.passed
            else None
        )
        obs = observe(t_traj)
        target = d.proposed_skill_change.target_rule_id or tmpl.rule_id
        generic: GenericTemplate | None = None
        if not builds_on_fixture(pkg):
            learned = tuple(sorted(t_traj.learned_checks())) if t_traj is not None else ()
            vocab = vocabulary(pkg, tuple(request.checks), learned)
            generic = generic_template(d.failure_class, vocab)
            if generic is None:  # pragma: no cover - every compilable class has one
                raise CompileError(f"no generic template for {d.failure_class.value}")
            tmpl = generic.template
            if pkg.rule(target) is None or target in RULE_BASES:
                target = generic.rule_id
            obs = Observed()
        existing = pkg.rule(target)
        notes: list[str] = []
        op: Op
        if (
            d.proposed_skill_change.operation == "change_loading_scope"
            and existing is not None
            and existing.rule.scope.workflow is not None
            and existing.rule.status.rendered
        ):
            op = ChangeLoadingScope(rule_id=target, to=SKILL_MD)
            notes.append(f"move {target} from workflow {existing.rule.scope.workflow} to SKILL.md")
        elif existing is not None:
            new_rule, added = strengthen(existing.rule, tmpl, obs)
            op = ReplaceRule(rule_id=target, rule=new_rule)
            if not existing.rule.status.rendered:
                notes.append(f"restore {existing.rule.status.value} rule {target}")
            notes += [f"add step {s}" for s in added]
        elif generic is not None:
            op = AddRule(rule=generic_rule(target, generic))
            notes.append(f"add rule {target} from the generic {d.failure_class.value} template")
        else:
            base = RULE_BASES.get(target) or RULE_BASES[tmpl.rule_id]
            op = AddRule(rule=build_rule(target, base, tmpl, obs, pkg))
            notes.append(f"add rule {target} from the {base.id} template")
        summary = info(d.failure_class).summary
        op = op.model_copy(
            update={
                "reason": f"{d.failure_class.value}: {summary}",
                "failure_class": d.failure_class.value,
            }
        )
        ops: list[Op] = [op]
        if request.regression_task:
            ops.append(
                AddRegressionTest(
                    task_id=request.regression_task, failure_class=d.failure_class.value
                )
            )
        n_tasks = len(request.cluster.task_ids) if request.cluster is not None else 1
        rationale = (
            f"Fixes {d.failure_class.value} ({summary}) seen on {n_tasks} task(s); "
            f"the rule now says {obs.fill(tmpl.required[0])}."
        )
        patch = Patch(
            failure_class=d.failure_class.value,
            rationale=rationale,
            supporting_runs=request.supporting_runs,
            author=Author(compiler=self.name),
            ops=ops,
        ).with_id()
        return CompileOutput(compiler=self.name, patch=patch, notes=notes)


__all__ = ["TemplateCompiler", "build_rule", "generic_rule", "strengthen"]
