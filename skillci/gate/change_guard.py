"""Guard an arbitrary base -> head change of a skill package (pure).

A PR does not always come from ``skillci propose`` (a human may edit a rule), so the gate
checks the change itself, with the same detectors the patch guard uses: injection and
exfiltration shapes in every *added* line of every changed text file (and in the added
text joined per file, so a payload split across steps is caught), new required tools and
rules about sensitive topics (needs approval), and changes to fields only humans change
(frontmatter name, target_runtime, release_gate: reject).

A rule file is read as the patch guard reads a patch: its *values* (rule text), not its YAML
lines, so a key such as ``validation:`` never joins the sentence next to it, and policy
classes do not apply to ``anti_patterns`` (they name what the student must not do). A patch
``propose`` guarded is therefore not rejected here for its layout (docs/design/322).
"""

from __future__ import annotations

import difflib
from typing import Any

import yaml

from skillci.errors import SkillciError
from skillci.patch import guard_detectors as detectors
from skillci.patch import guard_mention as mention
from skillci.patch.findings import Severity, walk_strings
from skillci.patch.guard import (
    DEFAULT_ALLOWED_HOSTS,
    NAME_FIELDS,
    Evidence,
    Finding,
    GuardConfig,
    verdict_of,
)
from skillci.skill.package import MANIFEST, RULES_DIR, SKILL_MD, SkillPackage, under


def _added_lines(before: bytes | None, after: bytes) -> list[str]:
    try:
        new = after.decode("utf-8").splitlines()
        old = before.decode("utf-8").splitlines() if before is not None else []
    except UnicodeDecodeError:
        return []
    return [
        ln[1:]
        for ln in difflib.unified_diff(old, new, lineterm="", n=0)
        if ln.startswith("+") and not ln.startswith("+++")
    ]


def _rule_values(before: bytes | None, after: bytes) -> list[tuple[str, str]] | None:
    """(field, text) of every string value a rule file gains, plus its added comment lines;
    None when the file is not a YAML mapping (then it is read line by line)."""
    try:
        new: Any = yaml.safe_load(after.decode("utf-8"))
        old: Any = yaml.safe_load(before.decode("utf-8")) if before is not None else None
    except (UnicodeDecodeError, yaml.YAMLError):
        return None
    if not isinstance(new, dict):
        return None
    new_pairs: list[tuple[str, str]] = []
    old_pairs: list[tuple[str, str]] = []
    walk_strings(new, "rule", new_pairs)
    if old is not None:
        walk_strings(old, "rule", old_pairs)
    old_set = set(old_pairs)
    out = [p for p in new_pairs if p not in old_set]
    out += [
        ("comment", ln.strip()) for ln in _added_lines(before, after) if ln.strip().startswith("#")
    ]
    return out


def _forbidding(field: str) -> bool:
    return ".anti_patterns[" in field


def _prose(field: str) -> bool:
    last = field.rsplit(".", 1)[-1].split("[", 1)[0]
    return last not in NAME_FIELDS and not _forbidding(field)


def _hit(code: str, severity: str, rel: str, text: str, start: int, end: int, note: str) -> Finding:
    return Finding(
        code=code,
        severity=severity,
        op_index=None,
        message=f"{rel}: {note}",
        evidence=Evidence(field=rel, start=start, end=end, excerpt=text[start:end][:120]),
    )


def guard_change(
    before: SkillPackage, after: SkillPackage, config: GuardConfig | None = None
) -> tuple[str, list[Finding]]:
    """(verdict, findings) for the change from ``before`` to ``after``."""
    cfg = config or GuardConfig()
    allow = cfg.allowed_hosts or list(DEFAULT_ALLOWED_HOSTS)
    findings: list[Finding] = []
    for rel in sorted(set(after.files)):
        new = after.files[rel]
        old = before.files.get(rel)
        if old == new:
            continue
        values = _rule_values(old, new) if _is_rule_file(rel) else None
        if values is not None:
            for fld, text in values:
                for h, sev, note in _content(text, allow):
                    if h.code.startswith("policy-") and _forbidding(fld):
                        continue
                    findings.append(_hit(h.code, sev, rel, text, h.start, h.end, f"{fld}: {note}"))
            added = [t for f, t in values if _prose(f)]
        else:
            added = _added_lines(old, new)
            for line in added:
                for h, sev, note in _content(line, allow):
                    findings.append(_hit(h.code, sev, rel, line, h.start, h.end, note))
        joined = " ".join(s.strip(" -#*>") for s in added)
        if not findings and joined:
            for h in detectors.scan_text(joined, allow) + detectors.scan_glued(
                joined.replace(" ", ""), allow
            ):
                findings.append(
                    _hit(h.code, "high", rel, joined, h.start, h.end, h.note + " (across lines)")
                )
        if under(rel, RULES_DIR) and joined:
            for h in detectors.sensitive_topics(joined)[:1]:
                findings.append(
                    _hit(
                        "sensitive-topic",
                        "medium",
                        rel,
                        joined,
                        h.start,
                        h.end,
                        "changes a rule about a sensitive topic",
                    )
                )
    findings += _protected(before, after)
    return verdict_of(findings), findings


def _content(text: str, allow: list[str]) -> list[tuple[detectors.Hit, Severity, str]]:
    """Content hits of one text, each with its severity: an attack the text quotes as an
    example of what to look for is a person's call, not a rejection (design 449)."""
    kept, quoted = mention.split(
        text, detectors.scan_text(text, allow), lambda s: detectors.scan_text(s, allow)
    )
    return [(h, "high", h.note) for h in kept] + [
        (h, "medium", f"{h.note} ({mention.NOTE})") for h in quoted
    ]


def _is_rule_file(rel: str) -> bool:
    return under(rel, RULES_DIR) and rel.endswith((".yaml", ".yml"))


def _protected(before: SkillPackage, after: SkillPackage) -> list[Finding]:
    out: list[Finding] = []
    try:
        mb, ma = before.manifest, after.manifest
    except SkillciError:
        return out
    for fieldname in ("name", "target_runtime", "release_gate"):
        if getattr(mb, fieldname) != getattr(ma, fieldname):
            out.append(
                Finding(
                    code="gated-field",
                    severity="high",
                    op_index=None,
                    message=f"{MANIFEST}: changes {fieldname}; only humans change it",
                )
            )
    added_tools = sorted(set(ma.required_tools) - set(mb.required_tools))
    if added_tools:
        out.append(
            Finding(
                code="new-tool",
                severity="medium",
                op_index=None,
                message=f"{MANIFEST}: adds required tools {', '.join(added_tools)}",
            )
        )
    try:
        if before.frontmatter.name != after.frontmatter.name:
            out.append(
                Finding(
                    code="gated-field",
                    severity="high",
                    op_index=None,
                    message=f"{SKILL_MD}: changes the frontmatter name",
                )
            )
    except SkillciError:
        pass
    return out
