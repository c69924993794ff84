"""Which rule of a package covers a failure class, and whether the student had it loaded.

A rule *covers* a class when one of its ``anti_patterns`` names the class (or an alias,
see ``taxonomy.ClassInfo.aliases``) or its id is the class's default rule id. A covering
rule was *in the student's context* when it is rendered (candidate/active/deprecated) and
either bootstrap-scoped (always loaded with the skill) or scoped to a workflow whose file
the student loaded (a ``skill_load`` event for ``workflows/<name>.md``).
"""

from __future__ import annotations

from dataclasses import dataclass

from skillci.analyze.taxonomy import FailureClass, class_for_anti_pattern, info
from skillci.analyze.trajectory import Trajectory
from skillci.skill.models import Lifecycle, Rule
from skillci.skill.package import SkillPackage


@dataclass(frozen=True)
class Coverage:
    """The rule that covers a class in one package (if any)."""

    failure_class: FailureClass
    rule: Rule | None
    """The covering rule (rendered ones preferred), or None."""
    file: str | None
    default_rule_id: str | None

    @property
    def exists(self) -> bool:
        return self.rule is not None

    @property
    def rendered(self) -> bool:
        return self.rule is not None and self.rule.status.rendered

    @property
    def retired(self) -> bool:
        return self.rule is not None and not self.rule.status.rendered

    @property
    def target_rule_id(self) -> str | None:
        return self.rule.id if self.rule is not None else self.default_rule_id

    @property
    def operation(self) -> str:
        """replace_rule when a covering rule exists (restore a retired one), else add_rule."""
        return "replace_rule" if self.rule is not None else "add_rule"


def covers(rule: Rule, cls: FailureClass) -> bool:
    if rule.id == info(cls).default_rule_id:
        return True
    return any(class_for_anti_pattern(ap) is cls for ap in rule.anti_patterns)


def coverage(package: SkillPackage | None, cls: FailureClass) -> Coverage:
    """The covering rule for ``cls`` in ``package`` (rendered rules first, then by file order)."""
    default = info(cls).default_rule_id
    if package is None:
        return Coverage(cls, None, None, default)
    found = [lr for lr in package.rules if covers(lr.rule, cls)]
    # prefer the default id, then rendered rules
    found.sort(key=lambda lr: (not lr.rule.status.rendered, lr.rule.id != default))
    if not found:
        return Coverage(cls, None, None, default)
    return Coverage(cls, found[0].rule, found[0].file, default)


def workflow_path(package: SkillPackage, workflow: str) -> str:
    base = package.manifest.entrypoints.workflows.rstrip("/")
    return f"{base}/{workflow}.md"


def rule_in_context(package: SkillPackage | None, rule: Rule | None, traj: Trajectory) -> bool:
    """Whether the student could see ``rule`` in this trajectory (see module docstring)."""
    if package is None or rule is None or not rule.status.rendered:
        return False
    if traj.skill_hash is None:
        return False  # the run had no skill at all
    if rule.scope.workflow is None:
        return True
    return workflow_path(package, rule.scope.workflow) in traj.loaded_paths()


def retired_states() -> tuple[Lifecycle, ...]:
    return tuple(s for s in Lifecycle if not s.rendered)


__all__ = ["Coverage", "coverage", "covers", "retired_states", "rule_in_context", "workflow_path"]
