"""The skill changelog entry of a release, from structured data only (pure).

Inputs are the :class:`~skillci.patch.version.ChangeList` (which rules were added, modified,
removed and why — reasons are built by skillci from the failure taxonomy and counts, never
copied from a model) and the :class:`~skillci.gate.verdict.GateReport` (pass rates, repair
and regression rates, cost, complexity). The entry is also the release tag's message::

    repo-debugger 0.7.0 -> 0.7.1
    Added:    test.run-smallest-first — reason: <failure class>: <summary>; <counts>
    Modified: finish.report-success — steps changed
    Section:  SKILL.md "Verify" — section changed (85 -> 112 tokens)
    File:     scripts/check.py — script added (230 tokens)
    Validation: pass rate 68.4% -> 72.1% (95% CI of the difference [+1.0%, +6.4%]), ...
    Compatibility: verified <model> <quantization> / <harness>; not yet verified: <...>

In ``skills/<name>/skillci/CHANGELOG.md`` the entry sits in a fenced block under a ``## <version>``
heading, newest first, after the file's preamble.
"""

from __future__ import annotations

from collections.abc import Sequence

from skillci.gate.metrics import GateMetrics
from skillci.gate.verdict import GateReport, all_changes
from skillci.patch.version import ChangeList
from skillci.present.mdsafe import md_fence
from skillci.release.compat import describe, describe_all
from skillci.skill.models import CompatEntry
from skillci.skill.package import CHANGELOG

CHANGELOG_FILE = CHANGELOG
ROLLED_BACK = "**Rolled back**"
_LABEL_WIDTH = len("Modified: ")


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.1%}"


def _signed(x: float) -> str:
    return f"{x:+.1%}"


def _per_trial(m: GateMetrics, side: str) -> float | None:
    sm = m.sides.get(side)  # type: ignore[call-overload]
    if sm is None or not sm.cost.trials:
        return None
    return float(sm.cost.tool_calls / sm.cost.trials)


def reason_counts(report: GateReport) -> str:
    """``gate repaired r/f failing task(s)`` over every suite of the report."""
    changes = all_changes(report.suites)
    failing = sum(c.change in ("repair", "unchanged_fail") for c in changes)
    repairs = sum(c.change == "repair" for c in changes)
    return f"gate repaired {repairs}/{failing} task(s) failing on base"


def validation_line(report: GateReport) -> str:
    val = report.suite("validation")
    if val is None:
        return "Validation: no validation suite was run"
    m = val.metrics
    base, head = m.sides.get("base"), m.sides.get("head")
    b = base.pass_rate.pass_rate if base else None
    h = head.pass_rate.pass_rate if head else None
    parts = [f"pass rate {_pct(b)} -> {_pct(h)}"]
    ev = val.evidence
    if ev is not None:
        d = ev.decision
        parts.append(
            f"paired test: head won {d.head_wins} of {d.head_wins + d.base_wins} discordant "
            f"pair(s), {ev.pairs} independent pair(s)"
        )
    if m.paired is not None and m.paired.diff_ci is not None:
        ci = m.paired.diff_ci
        if ci.high - ci.low < 1e-9 or len(m.tasks) < 2:
            # one observation (or all tasks alike) gives no spread, not certainty
            parts[0] += f" (no interval: {len(m.tasks)} task(s) without spread)"
        else:
            parts[0] += (
                f" ({ci.confidence:.0%} CI of the difference "
                f"[{_signed(ci.low)}, {_signed(ci.high)}])"
            )
    elif head is not None:
        ci = head.pass_rate.ci
        parts[0] += f" ({ci.confidence:.0%} CI [{_pct(ci.low)}, {_pct(ci.high)}])"
    parts.append(f"repair {_pct(m.changes.repair_rate)}")
    parts.append(f"regression {_pct(m.changes.regression_rate)}")
    tb, th = _per_trial(m, "base"), _per_trial(m, "head")
    if tb is not None and th is not None:
        parts.append(f"tool calls {tb:.1f} -> {th:.1f}")
    bt, ht = report.base_complexity.bootstrap_tokens, report.head_complexity.bootstrap_tokens
    if bt == ht:
        parts.append("bootstrap tokens unchanged")
    else:
        growth = f" ({(ht - bt) / bt:+.1%})" if bt else ""
        parts.append(f"bootstrap tokens {bt} -> {ht}{growth}")
    return "Validation: " + ", ".join(parts)


def entry(
    changes: ChangeList,
    report: GateReport,
    *,
    verified: CompatEntry,
    unverified: Sequence[CompatEntry],
) -> str:
    """The changelog entry (and tag message) of a release, ending with a newline."""
    lines = [f"{changes.skill} {changes.from_version} -> {changes.to_version}"]
    for c in changes.added:
        lines.append(f"{'Added:':<{_LABEL_WIDTH}}{c.rule_id} — reason: {c.reason}")
    for c in changes.modified:
        lines.append(f"{'Modified:':<{_LABEL_WIDTH}}{c.rule_id} — {c.detail}")
    for c in changes.removed:
        lines.append(f"{'Removed:':<{_LABEL_WIDTH}}{c.rule_id} — {c.detail}")
    for o in changes.other:
        label = (
            "Section:"
            if o.kind.startswith("section_")
            else "File:"
            if o.kind.startswith("file_")
            else "Other:"
        )
        lines.append(f"{label:<{_LABEL_WIDTH}}{o.subject} — {o.detail}")
    lines.append(validation_line(report))
    lines.append(
        f"Compatibility: verified {describe(verified)}; not yet verified: {describe_all(unverified)}"
    )
    return "\n".join(lines) + "\n"


def _preamble_end(lines: list[str]) -> int:
    """Index of the first ``## `` heading (entries start there), or len(lines)."""
    return next((i for i, ln in enumerate(lines) if ln.startswith("## ")), len(lines))


def prepend(text: str | None, skill: str, version: str, body: str, footer: str = "") -> str:
    """``text`` (a CHANGELOG.md, or None) with a ``## <version>`` section before the others."""
    if not text:
        text = f"# {skill} changelog\n\nEntries are generated by `skillci release`.\n"
    if not text.endswith("\n"):
        text += "\n"
    lines = text.splitlines(keepends=True)
    at = _preamble_end(lines)
    # a fence nothing in the entry can close (rule ids and details come from the patch)
    section = [f"## {version}\n", "\n", *(ln + "\n" for ln in md_fence(body.rstrip("\n"), "text"))]
    if footer:
        section += ["\n", footer.rstrip("\n") + "\n"]
    section.append("\n")
    head = lines[:at]
    if head and head[-1].strip():
        head.append("\n")
    return "".join(head) + "".join(section) + "".join(lines[at:])


def mark_rolled_back(text: str, version: str, note: str) -> str | None:
    """``text`` with a rolled-back line under ``## <version>``; None when there is no such
    section or it is already marked (idempotent)."""
    lines = text.splitlines(keepends=True)
    heading = next((i for i, ln in enumerate(lines) if ln.rstrip() == f"## {version}"), None)
    if heading is None:
        return None
    end = next(
        (i for i in range(heading + 1, len(lines)) if lines[i].startswith("## ")), len(lines)
    )
    if any(ln.startswith(ROLLED_BACK) for ln in lines[heading:end]):
        return None
    mark = [f"{ROLLED_BACK}: {note.strip()}\n", "\n"]
    at = heading + 1
    if at < len(lines) and not lines[at].strip():
        at += 1
    else:
        mark.insert(0, "\n")
    return "".join(lines[:at] + mark + lines[at:])
