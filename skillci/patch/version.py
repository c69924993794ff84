"""Version semantics: which semver bump a change needs, and the structured change list.

The table (docs/design/013-version-semantics.md), where *breaking* means "removes
behaviour a student relied on":

=========================================  =====================  =====================
change                                     0.y.z                  >= 1.0.0
=========================================  =====================  =====================
add a rule                                 minor                  minor
replace a rule, only its steps differ      patch                  patch
replace a rule, anything else differs      minor                  minor
narrow a rule (scope bootstrap -> work-    minor                  major if it was
flow, workflow -> other workflow, extra                           active, else minor
trigger conditions, fewer alternatives)
delete a rule                              minor                  major if it was
                                                                  active, else minor
split / merge (behaviour carried over)     minor                  minor
move a markdown section                    minor                  minor
add an example / a regression test         patch                  patch
widen a rule (workflow -> bootstrap)       minor                  minor
manifest target_runtime, frontmatter name  major                  major
other manifest fields                      minor                  minor
manifest or frontmatter description        patch                  patch
SKILL.md / .md section added or edited     patch                  patch
SKILL.md / .md section removed             minor                  major
reference or on-demand doc added, edited   patch                  patch
script, asset or other bundled file added  minor                  minor
any bundled file edited                    patch                  patch
any bundled file removed                   minor                  major
=========================================  =====================  =====================

Prose and files (rows 13-18) are judged by :func:`prose_changes` from the section-level
diff of :mod:`skillci.patch.prose`: more or better guidance is a fix (like an added rule),
a new script or asset is a new capability, and removing text or a file takes away what a
student may rely on.

The bump of a patch is the largest bump of its changes.
"""

from __future__ import annotations

from typing import Literal

import semver
from pydantic import BaseModel, Field

from skillci.patch.apply import Applied, RuleDelta, same_behaviour
from skillci.patch.models import (
    AddExample,
    AddRegressionTest,
    ChangeDescription,
    ChangeLoadingScope,
)
from skillci.patch.prose import SkillDiff, skill_diff
from skillci.skill.models import Lifecycle, Manifest, Rule
from skillci.skill.package import MANIFEST, SkillPackage

CHANGES_SCHEMA_VERSION = 1
Level = Literal["major", "minor", "patch"]
Bump = Literal["major", "minor", "patch", "none"]
_ORDER: dict[str, int] = {"none": 0, "patch": 1, "minor": 2, "major": 3}


class RuleChange(BaseModel):
    """One rule added, modified or removed, with why and how much it weighs."""

    rule_id: str = Field(description="The rule's id (its old id when it was renamed).")
    kind: Literal["added", "modified", "removed"]
    level: Level = Field(description="The bump this change alone needs.")
    reason: str = Field(description="Why: the op's reason, else the patch rationale.")
    detail: str = Field(description="What changed, e.g. 'steps changed', 'split from x'.")
    op_index: int | None = Field(default=None, description="Op that made the change.")
    was_active: bool = Field(default=False, description="The old rule was active.")


class OtherChange(BaseModel):
    """A change that is not a rule: examples, eval lists, sections, manifest, frontmatter."""

    kind: Literal[
        "example_added",
        "regression_test_added",
        "section_moved",
        "manifest_changed",
        "frontmatter_changed",
        "section_added",
        "section_changed",
        "section_removed",
        "file_added",
        "file_changed",
        "file_removed",
        "file_renamed",
    ]
    subject: str = Field(description="File, task id, section title or field name.")
    level: Level
    reason: str
    detail: str
    op_index: int | None = None
    tokens_before: int | None = Field(default=None, description="Tokens before (prose).")
    tokens_after: int | None = Field(default=None, description="Tokens after (prose).")


class ChangeList(BaseModel):
    """Everything a patch (or a release) changes, for the changelog generator."""

    schema_version: int = CHANGES_SCHEMA_VERSION
    skill: str
    patch_id: str | None = Field(default=None, description="Patch the changes come from.")
    failure_class: str | None = None
    from_version: str
    to_version: str
    bump: Bump
    added: list[RuleChange] = Field(default_factory=list)
    modified: list[RuleChange] = Field(default_factory=list)
    removed: list[RuleChange] = Field(default_factory=list)
    other: list[OtherChange] = Field(default_factory=list)


# --------------------------------------------------------------------------- classification


def _stable(version: str) -> bool:
    return semver.Version.parse(version).major >= 1


def _active(rule: Rule | None) -> bool:
    return rule is not None and rule.status is Lifecycle.active


def narrowing(old: Rule, new: Rule) -> str | None:
    """How ``new`` applies in fewer situations than ``old`` (None when it does not)."""
    ow, nw = old.scope.workflow, new.scope.workflow
    if ow != nw and nw is not None:
        return f"loading scope narrowed: {ow or 'bootstrap'} -> workflow {nw}"
    extra = [c for c in new.trigger.all if c not in old.trigger.all]
    if extra:
        return f"trigger narrowed: now also requires {', '.join(extra)}"
    dropped = [c for c in old.trigger.any if c not in new.trigger.any]
    if old.trigger.any and dropped:
        return f"trigger narrowed: no longer fires on {', '.join(dropped)}"
    return None


def _modified_level(old: Rule, new: Rule, stable: bool) -> tuple[Level, str]:
    narrowed = narrowing(old, new)
    if narrowed:
        return ("major" if stable and _active(old) else "minor"), narrowed
    keep = {"status", "provenance", "instruction"}
    if old.id == new.id and old.model_dump(mode="json", exclude=keep) == new.model_dump(
        mode="json", exclude=keep
    ):
        if old.instruction != new.instruction:
            return "patch", "steps changed"
        return "patch", "lifecycle or provenance changed"
    fields = [
        k
        for k in (
            "id",
            "scope",
            "trigger",
            "validation",
            "failure_policy",
            "anti_patterns",
            "references",
        )
        if getattr(old, k) != getattr(new, k)
    ]
    detail = ("changed " + ", ".join(fields)) if fields else "changed"
    # a new id breaks references to the rule; a wider loading scope changes what sessions
    # load. Anything else that does not narrow the rule refines how it works: a fix.
    moved = old.scope.workflow != new.scope.workflow
    return ("minor" if old.id != new.id or moved else "patch"), detail


def classify(delta: RuleDelta, version: str, reason: str, op_index: int | None) -> RuleChange:
    stable = _stable(version)
    carried = delta.detail.startswith(("split", "merged"))
    if delta.kind == "added":
        # the seed's own release example: a rule added to fix a failure is 0.7.0 -> 0.7.1
        return RuleChange(
            rule_id=delta.rule_id,
            kind="added",
            level="patch",
            reason=reason,
            detail=delta.detail,
            op_index=op_index,
        )
    if delta.kind == "removed":
        level: Level = "major" if stable and _active(delta.old) and not carried else "minor"
        return RuleChange(
            rule_id=delta.rule_id,
            kind="removed",
            level=level,
            reason=reason,
            detail=delta.detail,
            op_index=op_index,
            was_active=_active(delta.old),
        )
    assert delta.old is not None and delta.new is not None
    if carried:
        level, detail = "minor", delta.detail
    else:
        level, detail = _modified_level(delta.old, delta.new, stable)
        if delta.detail not in ("replaced", ""):
            detail = (
                f"{delta.detail}; {detail}" if not detail.startswith("loading scope") else detail
            )
    return RuleChange(
        rule_id=delta.rule_id,
        kind="modified",
        level=level,
        reason=reason,
        detail=detail,
        op_index=op_index,
        was_active=_active(delta.old),
    )


def _manifest_changes(before: SkillPackage, after: SkillPackage, reason: str) -> list[OtherChange]:
    if before.files.get(MANIFEST) == after.files.get(MANIFEST):
        return []
    b, a = before.manifest, after.manifest
    out: list[OtherChange] = []
    ignore = {"version", "compatibility", "status"}
    for name in Manifest.model_fields:
        if name in ignore or getattr(b, name) == getattr(a, name):
            continue
        level: Level = (
            "major"
            if name in ("target_runtime", "name")
            else "patch"
            if name == "description"
            else "minor"
        )
        out.append(
            OtherChange(
                kind="manifest_changed",
                subject=name,
                level=level,
                reason=reason,
                detail=f"manifest {name} changed",
            )
        )
    return out


def _frontmatter_changes(
    before: SkillPackage, after: SkillPackage, reason: str
) -> list[OtherChange]:
    if before.files.get("SKILL.md") == after.files.get("SKILL.md"):
        return []
    if before.skill_md.yaml_text == after.skill_md.yaml_text:
        return []
    b, a = before.frontmatter, after.frontmatter
    out = []
    for name in ("name", "description", "license", "allowed_tools", "metadata", "compatibility"):
        if getattr(b, name) != getattr(a, name):
            level: Level = (
                "major" if name == "name" else "patch" if name == "description" else "minor"
            )
            out.append(
                OtherChange(
                    kind="frontmatter_changed",
                    subject=name,
                    level=level,
                    reason=reason,
                    detail=f"SKILL.md frontmatter {name} changed",
                )
            )
    return out


def prose_changes(diff: SkillDiff, version: str, reason: str) -> list[OtherChange]:
    """Changes of prose and bundled files (table rows 13-18): one per SKILL.md section,
    one per other file (naming its changed sections)."""
    removal: Level = "major" if _stable(version) else "minor"
    out: list[OtherChange] = []
    for s in diff.sections:
        if s.change == "moved" and "SKILL.md" in (s.file, s.from_file):
            out.append(
                OtherChange(
                    kind="section_moved",
                    subject=f'{s.from_file} "{s.from_section}"',
                    level="patch",
                    reason=reason,
                    detail=f"section moved to {s.file} § {s.section} "
                    f"({s.tokens_before} -> {s.tokens_after} tokens)",
                    tokens_before=s.tokens_before,
                    tokens_after=s.tokens_after,
                )
            )
            continue
        if s.file != "SKILL.md":
            continue
        out.append(
            OtherChange(
                kind=f"section_{s.change}",
                subject=f'SKILL.md "{s.section}"',
                level=removal if s.change == "removed" else "patch",
                reason=reason,
                detail=f"section {s.change} ({s.tokens_before} -> {s.tokens_after} tokens)",
                tokens_before=s.tokens_before,
                tokens_after=s.tokens_after,
            )
        )
    for f in diff.files:
        if f.path == "SKILL.md":
            continue
        level: Level = "patch"  # renamed: the same content under a new path
        if f.change == "removed":
            level = removal
        elif f.change == "added" and f.kind not in ("reference", "on_demand"):
            level = "minor"
        what = f.kind.replace("_", "-") if f.kind != "other" else "file"
        detail = f"{what} {f.change}"
        if f.from_path is not None:
            detail += f" from {f.from_path}"
        if f.sections and f.change == "changed":
            detail += ": " + ", ".join(f'"{s}"' for s in f.sections[:4])
            detail += f" and {len(f.sections) - 4} more" if len(f.sections) > 4 else ""
        if not f.binary:
            detail += f" ({f.tokens_before} -> {f.tokens_after} tokens)"
        out.append(
            OtherChange(
                kind=f"file_{f.change}",
                subject=f.path,
                level=level,
                reason=reason,
                detail=detail,
                tokens_before=None if f.binary else f.tokens_before,
                tokens_after=None if f.binary else f.tokens_after,
            )
        )
    return out


def next_version(version: str, bump: Bump) -> str:
    """``version`` bumped by ``bump``; a pre-release is finalised when it already is that bump
    (npm's rule: 1.2.3-rc.1 + patch = 1.2.3, 2.0.0-rc.1 + major = 2.0.0)."""
    v = semver.Version.parse(version)
    if bump == "none":
        return version
    if v.prerelease:
        final = v.finalize_version()
        if (
            bump == "patch"
            or (bump == "minor" and v.patch == 0)
            or (bump == "major" and v.minor == 0 and v.patch == 0)
        ):
            return str(final)
        v = final
    if bump == "major":
        return str(v.bump_major())
    if bump == "minor":
        return str(v.bump_minor())
    return str(v.bump_patch())


def _finish(
    before: SkillPackage,
    rules: list[RuleChange],
    other: list[OtherChange],
    patch_id: str | None,
    failure_class: str | None,
) -> ChangeList:
    levels = [c.level for c in rules] + [c.level for c in other]
    bump: Bump = max(levels, key=lambda lv: _ORDER[lv], default="none")
    version = before.manifest.version
    return ChangeList(
        skill=before.manifest.name,
        patch_id=patch_id,
        failure_class=failure_class,
        from_version=version,
        to_version=next_version(version, bump),
        bump=bump,
        added=[c for c in rules if c.kind == "added"],
        modified=[c for c in rules if c.kind == "modified"],
        removed=[c for c in rules if c.kind == "removed"],
        other=other,
    )


# --------------------------------------------------------------------------- entry points


def change_list(applied: Applied) -> ChangeList:
    """The change list of an applied patch (rule changes come from its ops)."""
    patch = applied.patch
    version = applied.before.manifest.version
    rules: list[RuleChange] = []
    other: list[OtherChange] = []
    for eff in applied.effects:
        reason = eff.op.reason or patch.rationale or eff.op.op.replace("_", " ")
        rules += [classify(d, version, reason, eff.index) for d in eff.rules]
        op = eff.op
        if isinstance(op, AddExample):
            other.append(
                OtherChange(
                    kind="example_added",
                    subject=op.file,
                    level="patch",
                    reason=reason,
                    detail=f"example added to {op.file}",
                    op_index=eff.index,
                )
            )
        elif isinstance(op, ChangeDescription):
            other.append(
                OtherChange(
                    kind="frontmatter_changed",
                    subject="description",
                    level="minor",
                    reason=reason,
                    detail="SKILL.md description changed (what the harness triggers on)",
                    op_index=eff.index,
                )
            )
        elif isinstance(op, AddRegressionTest):
            other.append(
                OtherChange(
                    kind="regression_test_added",
                    subject=op.task_id,
                    level="patch",
                    reason=reason,
                    detail="added to evals/regression.yaml",
                    op_index=eff.index,
                )
            )
        elif isinstance(op, ChangeLoadingScope) and op.section is not None:
            other.append(
                OtherChange(
                    kind="section_moved",
                    subject=op.section,
                    level="minor",
                    reason=reason,
                    detail=f"moved from {eff.moved_from} to {eff.moved_to}",
                    op_index=eff.index,
                )
            )
    reason = patch.rationale or "patch"
    other += _manifest_changes(applied.before, applied.after, reason)
    other += _frontmatter_changes(applied.before, applied.after, reason)
    return _finish(applied.before, rules, other, patch.pid, patch.primary_failure_class or None)


def compare(before: SkillPackage, after: SkillPackage, reason: str = "") -> ChangeList:
    """The change list between two versions of a package (no patch needed, e.g. a release)."""
    version = before.manifest.version
    old = {lr.rule.id: lr.rule for lr in before.rules}
    new = {lr.rule.id: lr.rule for lr in after.rules}
    deltas = [
        RuleDelta("added", rid, None, new[rid], "added") for rid in sorted(set(new) - set(old))
    ]
    deltas += [
        RuleDelta("removed", rid, old[rid], None, "deleted") for rid in sorted(set(old) - set(new))
    ]
    deltas += [
        RuleDelta("modified", rid, old[rid], new[rid], "")
        for rid in sorted(set(old) & set(new))
        if not same_behaviour(old[rid], new[rid]) or old[rid].status != new[rid].status
    ]
    rules = [classify(d, version, reason, None) for d in deltas]
    other = _manifest_changes(before, after, reason) + _frontmatter_changes(before, after, reason)
    other += prose_changes(skill_diff(before, after), version, reason)
    return _finish(before, rules, other, None, None)
