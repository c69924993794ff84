"""Rule lifecycle on release: candidate -> active, stamped with the gate that verified it (pure).

Edits go through :class:`skillci.patch.rulefile.RuleFileText`, so the other rules in a
file keep their bytes; each edited file is re-parsed and checked.
"""

from __future__ import annotations

from skillci.patch.rulefile import RuleFileText, verify
from skillci.skill.models import Lifecycle, Provenance, Rule
from skillci.skill.package import SkillPackage


def promoted(rule: Rule, gate_id: str | None) -> Rule:
    prov = rule.provenance or Provenance()
    if gate_id is not None:
        prov = prov.model_copy(update={"last_verified_on": gate_id})
    return rule.model_copy(update={"status": Lifecycle.active, "provenance": prov})


def promote_candidates(
    pkg: SkillPackage, gate_id: str | None
) -> tuple[dict[str, bytes], list[str]]:
    """Changed rule files and the ids of the rules promoted candidate -> active.
    ``gate_id`` None (the bench's no-lifecycle ablation only): activated unverified."""
    changes: dict[str, bytes] = {}
    ids: list[str] = []
    for rel in pkg.rule_files():
        located = pkg.rules_in(rel)
        todo = [lr for lr in located if lr.rule.status is Lifecycle.candidate]
        if not todo:
            continue
        text = pkg.text(rel)
        rules = [lr.rule for lr in located]
        for lr in todo:
            new = promoted(lr.rule, gate_id)
            rules[lr.index] = new
            edited = RuleFileText.parse(rel, text).replace(lr.index, [new])
            assert edited is not None  # replacing with one rule never removes the file
            text = edited
            ids.append(lr.rule.id)
        verify(rel, text, rules)
        changes[rel] = text.encode("utf-8")
    return changes, ids
