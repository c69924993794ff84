"""What a patch *does*: protected files, gated fields, new tools, sensitive topics.

These checks compare the package before and after the patch, so they hold whatever op
produced the change (see docs/design/012-patch-guard.md).
"""

from __future__ import annotations

from typing import Any

import skillci.patch.guard_detectors as detectors
from skillci.patch.apply import Applied
from skillci.patch.findings import Evidence, Finding, walk_strings
from skillci.patch.findings import show as _show
from skillci.skill.package import (
    EXAMPLES_DIR,
    MANIFEST,
    RULES_DIR,
    SKILL_MD,
    SkillPackage,
    eval_list_path,
    is_on_demand_file,
    under,
)

SENSITIVE_ID_PREFIXES = ("security.", "secrets.", "permissions.", "network.", "auth.")


#: Files a patch may change at all; anything else is protected.
def _patchable(rel: str) -> bool:
    return (
        rel == SKILL_MD
        or rel == eval_list_path("regression")
        or (under(rel, RULES_DIR) and rel.endswith((".yaml", ".yml")))
        or (under(rel, EXAMPLES_DIR) and rel.endswith(".jsonl"))
        or is_on_demand_file(rel)
    )


def _rule_strings(data: Any) -> str:
    pairs: list[tuple[str, str]] = []
    walk_strings({k: v for k, v in data.items() if k != "provenance"}, "", pairs)
    return "\n".join(t for _, t in pairs)


def _manifest_findings(before: SkillPackage, after: SkillPackage) -> list[Finding]:
    out: list[Finding] = []
    if before.files.get(MANIFEST) == after.files.get(MANIFEST):
        return out
    if MANIFEST not in after.files:
        return [
            Finding(
                code="gated-field", severity="high", op_index=None, message=f"removes {MANIFEST}"
            )
        ]
    b, a = before.manifest, after.manifest
    gated = {
        "name": (b.name, a.name),
        "target_runtime": (b.target_runtime, a.target_runtime),
        "release_gate": (b.release_gate, a.release_gate),
        "patch_limits": (b.patch_limits, a.patch_limits),
    }
    for name, (x, y) in gated.items():
        if x != y:
            out.append(
                Finding(
                    code="gated-field",
                    severity="high",
                    op_index=None,
                    message=f"changes manifest {name}; only humans change it",
                )
            )
    added = [t for t in a.required_tools if t not in b.required_tools]
    if added:
        out.append(
            Finding(
                code="new-tool",
                severity="medium",
                op_index=None,
                message=f"adds {', '.join(added)} to required_tools",
            )
        )
    rest_b = b.model_dump(exclude={*gated, "required_tools"})
    rest_a = a.model_dump(exclude={*gated, "required_tools"})
    if rest_b != rest_a:
        out.append(
            Finding(
                code="manifest-changed",
                severity="high",
                op_index=None,
                message=f"changes {MANIFEST}; patches never edit the manifest",
            )
        )
    return out


def _only_description(before: SkillPackage, after: SkillPackage) -> bool:
    """The frontmatters differ in ``description`` alone (what a change_description op does)."""
    try:
        b = before.frontmatter.model_dump(by_alias=True, exclude={"description"})
        a = after.frontmatter.model_dump(by_alias=True, exclude={"description"})
    except Exception:
        return False
    return a == b


def _frontmatter_findings(
    before: SkillPackage, after: SkillPackage, describes: bool = False
) -> list[Finding]:
    if SKILL_MD not in before.files or before.files.get(SKILL_MD) == after.files.get(SKILL_MD):
        return []
    if SKILL_MD not in after.files:
        return [
            Finding(code="gated-field", severity="high", op_index=None, message="removes SKILL.md")
        ]
    if before.skill_md.yaml_text == after.skill_md.yaml_text:
        return []
    try:
        renamed = before.frontmatter.name != after.frontmatter.name
    except Exception:
        renamed = True
    if describes and not renamed and _only_description(before, after):
        return []  # the op's purpose; its text is scanned like every other patch string
    if renamed:
        return [
            Finding(
                code="gated-field",
                severity="high",
                op_index=None,
                message="changes the SKILL.md frontmatter name; only humans change it",
            )
        ]
    return [
        Finding(
            code="frontmatter-changed",
            severity="high",
            op_index=None,
            message="changes the SKILL.md frontmatter; patches edit the body only",
        )
    ]


def policy_findings(applied: Applied) -> list[Finding]:
    """Findings about what the patch *does*: protected files, new tools, sensitive topics."""
    before, after = applied.before, applied.after
    describes = any(op.op == "change_description" for op in applied.patch.ops)
    out = _manifest_findings(before, after) + _frontmatter_findings(before, after, describes)
    for rel in applied.changed_files:
        if rel not in (MANIFEST, SKILL_MD) and not _patchable(rel):
            out.append(
                Finding(
                    code="protected-file",
                    severity="high",
                    op_index=None,
                    message=f"changes {rel}, which patches never edit",
                )
            )
    tools = set(before.manifest.required_tools)
    for eff in applied.effects:
        for d in eff.rules:
            if d.new is not None:
                missing = [t for t in d.new.scope.tools if t not in tools]
                if missing:
                    out.append(
                        Finding(
                            code="new-tool",
                            severity="medium",
                            op_index=eff.index,
                            message=f"rule {d.rule_id} uses {', '.join(missing)}, not in required_tools",
                        )
                    )
            for label, rule in (("old", d.old), ("new", d.new)):
                if rule is None:
                    continue
                if rule.id.startswith(SENSITIVE_ID_PREFIXES):
                    out.append(
                        Finding(
                            code="sensitive-topic",
                            severity="medium",
                            op_index=eff.index,
                            message=f"touches {rule.id}, a security rule",
                        )
                    )
                    break
                text = _rule_strings(rule.model_dump(mode="json", by_alias=True))
                hits = detectors.sensitive_topics(text)
                if hits:
                    h = hits[0]
                    out.append(
                        Finding(
                            code="sensitive-topic",
                            severity="medium",
                            op_index=eff.index,
                            message=f"touches rule {rule.id} ({label} text is about {text[h.start : h.end]!r})",
                            evidence=Evidence(
                                field=f"rule {rule.id}",
                                start=h.start,
                                end=h.end,
                                excerpt=_show(text[h.start : h.end]),
                            ),
                        )
                    )
                    break
        if eff.moved_text:
            hits = detectors.sensitive_topics(eff.moved_text)
            if hits:
                h = hits[0]
                out.append(
                    Finding(
                        code="sensitive-topic",
                        severity="medium",
                        op_index=eff.index,
                        message=f"moves a section about {eff.moved_text[h.start : h.end]!r} "
                        f"from {eff.moved_from} to {eff.moved_to}",
                        evidence=Evidence(
                            field=eff.moved_from or "",
                            start=h.start,
                            end=h.end,
                            excerpt=_show(eff.moved_text[h.start : h.end]),
                        ),
                    )
                )
    return _dedupe(out)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    seen: set[tuple[str, int | None, str]] = set()
    out = []
    for f in findings:
        key = (f.code, f.op_index, f.message)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
