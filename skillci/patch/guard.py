"""The patch guard: nothing from a trajectory reaches a Skill without passing here.

Everything a tool, a file, a web page or a model produced is untrusted. The guard looks at
every string a patch carries (rule text, examples, task ids, reasons, rationale) and at
the patch's effect on the package, and returns a verdict:

- ``reject`` (a ``high`` finding): verbatim copies of untrusted text (>= ``min_copy_chars``
  normalised characters), instruction-override and role-play shapes (multilingual,
  obfuscated, or split across steps), credential requests, exfiltration, remote code
  execution, URLs/hosts outside the allowlist, base64 or escaped blobs, hidden unicode,
  mixed-script words, and any change to gated fields (frontmatter name, manifest
  target_runtime / release_gate) or to files a patch never edits.
- ``needs-approval`` (a ``medium`` finding): a rule that needs a tool the manifest does not
  list in ``required_tools``, or a change to a rule/section about permissions, network,
  writes outside the workspace or secrets. Never auto-merged.
- ``pass``: nothing found.

Texts are checked one by one and concatenated per op and over the whole patch, so a
payload split across steps is seen whole. See docs/design/012-patch-guard.md.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass

from pydantic import BaseModel, Field

import skillci.patch.guard_detectors as detectors
import skillci.patch.guard_mention as mention
from skillci.patch.apply import Applied
from skillci.patch.findings import Evidence, Finding, Severity, Verdict, verdict_of, walk_strings
from skillci.patch.findings import show as _show
from skillci.patch.guard_agent import REVIEW as AGENT_REVIEW
from skillci.patch.guard_hijack import REVIEW as HIJACK_REVIEW
from skillci.patch.guard_host import REVIEW as HOST_REVIEW
from skillci.patch.guard_output import REVIEW as OUTPUT_REVIEW
from skillci.patch.guard_planted import REVIEW as PLANTED_REVIEW
from skillci.patch.models import Patch
from skillci.patch.normalize import View, alnum, plain, unescape
from skillci.patch.policy import SENSITIVE_ID_PREFIXES, policy_findings
from skillci.skill.package import SkillPackage

GUARD_SCHEMA_VERSION = 1
#: Longest text scanned in full. A bounded patch has no business carrying more in one
#: string (the rest is not scanned, and the text is rejected as oversized).
MAX_TEXT_CHARS = 20_000
MAX_JOINED_CHARS = 100_000
#: Content findings a human may approve (the review layer): an external URL or host, a send
#: of work products to an outside place (design 446), host and agent actions.
REVIEW_CODES = (
    frozenset({"url", "outbound-transfer"})
    | HOST_REVIEW
    | AGENT_REVIEW
    | HIJACK_REVIEW
    | PLANTED_REVIEW
    | OUTPUT_REVIEW
)
DEFAULT_ALLOWED_HOSTS = ("docs.python.org", "docs.pytest.org", "pytest.org")


class UntrustedText(BaseModel):
    """One untrusted text from a supporting run (a tool result, file, page or model output)."""

    text: str = Field(description="The text exactly as the event carried it.")
    run_id: str | None = Field(default=None, description="Run it came from.")
    event: str | None = Field(default=None, description="Event id or step within the run.")
    source: str | None = Field(
        default=None, description="tool_result, file, web, model, ... (informational)."
    )


class GuardConfig(BaseModel):
    """Knobs of the guard."""

    min_copy_chars: int = Field(
        default=40, ge=8, description="Shortest normalised span counted as a verbatim copy."
    )
    allowed_hosts: list[str] = Field(
        default_factory=lambda: list(DEFAULT_ALLOWED_HOSTS),
        description="Hosts (and their subdomains) a patch may name.",
    )


class GuardReport(BaseModel):
    """The guard's verdict on one patch."""

    schema_version: int = GUARD_SCHEMA_VERSION
    patch_id: str
    verdict: Verdict
    findings: list[Finding]
    config: GuardConfig

    @property
    def caught(self) -> bool:
        return self.verdict != "pass"


# --------------------------------------------------------------------------- patch texts


#: Fields that name things (paths, ids) rather than say things; left out of concatenations.
NAME_FIELDS = frozenset(
    {
        "id",
        "rule_id",
        "rule_ids",
        "file",
        "from",
        "to",
        "task_id",
        "workflow",
        "tools",
        "failure_class",
        "supporting_runs",
        "model",
        "compiler",
    }
)


@dataclass(frozen=True)
class PatchText:
    op_index: int | None
    field: str
    text: str

    @property
    def prose(self) -> bool:
        last = self.field.rsplit(".", 1)[-1].split("[", 1)[0]
        return last not in NAME_FIELDS


def patch_texts(patch: Patch) -> list[PatchText]:
    """Every string the patch carries that can reach a skill, a PR or a changelog."""
    out: list[PatchText] = []
    for name in ("rationale",):
        value = getattr(patch, name)
        if value:
            out.append(PatchText(None, name, value))
    for fc in patch.failure_classes:
        out.append(PatchText(None, "failure_class", fc))
    for i, rid in enumerate(patch.supporting_runs):
        out.append(PatchText(None, f"supporting_runs[{i}]", rid))
    out.append(PatchText(None, "author.compiler", patch.author.compiler))
    if patch.author.model:
        out.append(PatchText(None, "author.model", patch.author.model))
    for i, op in enumerate(patch.ops):
        pairs: list[tuple[str, str]] = []
        walk_strings(
            op.model_dump(mode="json", by_alias=True, exclude_none=True), f"ops[{i}]", pairs
        )
        out += [PatchText(i, f, t) for f, t in pairs]
    return out


# --------------------------------------------------------------------------- content scan


def _forbidding(field: str) -> bool:
    """Anti-patterns name what the student must not do; policy classes do not apply."""
    return ".anti_patterns[" in field


_SENTENCE_END = re.compile(r"[.!?。！？]+\s+(?=\S)|\n+(?=\S)")


#: Design 435: an anti-pattern names a behaviour; one that opens by laying an obligation on
#: the reader ("You must strictly adhere to ...") is an order, not what "Never:" forbids.
_ADDRESSED = re.compile(
    r"\s*(?:you|u) (?:must|have to|need to|are to|shall|will)\b(?! not\b)", re.I
)


def _never_scope(text: str) -> int:
    """Where the "Never:" an anti-pattern is rendered under stops governing it (design 422):
    at the end of its first sentence; later sentences are read as any other text. An
    anti-pattern that opens with an obligation laid on the reader is not governed at all."""
    if _ADDRESSED.match(text):
        return 0
    m = _SENTENCE_END.search(text)
    return m.end() if m else len(text)


def _finding(
    code: str,
    op: int | None,
    field: str,
    text: str,
    start: int,
    end: int,
    note: str,
    *,
    quoted: bool = False,
) -> Finding:
    """A content finding; ``quoted`` (design 449): an attack the text names as an example,
    which a person decides on."""
    return Finding(
        code=code,
        severity="medium" if quoted or code in REVIEW_CODES else "high",
        op_index=op,
        message=note,
        evidence=Evidence(field=field, start=start, end=end, excerpt=_show(text[start:end])),
    )


def _joined(parts: Sequence[PatchText], sep: str) -> tuple[str, list[int]]:
    starts, pos, chunks = [], 0, []
    for p in parts:
        starts.append(pos)
        chunks.append(p.text)
        pos += len(p.text) + len(sep)
    return sep.join(chunks), starts


def _within_one(parts: Sequence[PatchText], starts: list[int], s: int, e: int) -> bool:
    """The hit lies inside one part, which was scanned on its own and cleared: a match the
    joining made (a glued text loses the clause boundary that said "never …") is not a
    split payload."""
    return any(st <= s and e <= st + len(p.text) for st, p in zip(starts, parts, strict=True))


def _joined_field(parts: Sequence[PatchText], starts: list[int], s: int, e: int) -> str:
    idx = [i for i, st in enumerate(starts) if st < e and s < st + len(parts[i].text) + 1] or [0]
    first, last = parts[idx[0]].field, parts[idx[-1]].field
    return f"{first} .. {last} (joined)" if first != last else f"{first} (joined)"


def scan_content(patch: Patch, config: GuardConfig) -> list[Finding]:
    """Injection/exfiltration/obfuscation shapes in the patch's own texts."""
    texts = patch_texts(patch)
    allow = config.allowed_hosts
    findings: list[Finding] = []
    seen: set[tuple[int | None, str]] = set()
    for t in texts:
        if len(t.text) > MAX_TEXT_CHARS:
            findings.append(
                Finding(
                    code="oversized-text",
                    severity="high",
                    op_index=t.op_index,
                    message=f"{len(t.text)} characters in one field; the limit is {MAX_TEXT_CHARS}",
                    evidence=Evidence(field=t.field, start=0, end=80, excerpt=_show(t.text[:80])),
                )
            )
        text = t.text[:MAX_TEXT_CHARS]
        kept, quoted = mention.split(
            text, detectors.scan_text(text, allow), lambda s: detectors.scan_text(s, allow)
        )
        for h in [*kept, *quoted]:
            if (
                h.code.startswith("policy-")
                and _forbidding(t.field)
                and h.start < _never_scope(t.text)
            ):
                continue
            q = h in quoted
            note = f"{h.note} ({mention.NOTE})" if q else h.note
            findings.append(
                _finding(h.code, t.op_index, t.field, t.text, h.start, h.end, note, quoted=q)
            )
            if not q:  # a quoted example must not hide the same harm split across texts
                seen.add((t.op_index, h.code))
                seen.add((-1, h.code))
    prose = [t for t in texts if t.prose and not _forbidding(t.field)]
    groups: list[tuple[int | None, list[PatchText]]] = [
        (i, [t for t in prose if t.op_index == i]) for i in range(len(patch.ops))
    ]
    groups.append((None, prose))
    for op_index, parts in groups:
        if len(parts) < 2:
            continue
        key = op_index if op_index is not None else -1
        for sep in ("\n", ""):  # design 422: each text is its own line
            joined, starts = _joined(parts, sep)
            joined = joined[:MAX_JOINED_CHARS]
            scan = (lambda s: detectors.scan_text(s, allow)) if sep else None
            hits = scan(joined) if scan else detectors.scan_glued(joined, allow)
            kept, quoted = mention.split(joined, hits, scan) if scan else (hits, [])
            for h in [*kept, *quoted]:
                if (key, h.code) in seen or _within_one(parts, starts, h.start, h.end):
                    continue
                q = h in quoted
                if not q:
                    seen.add((key, h.code))
                field = _joined_field(parts, starts, h.start, h.end)
                note = (
                    h.note + " (split across several texts)" + (f" ({mention.NOTE})" if q else "")
                )
                findings.append(
                    _finding(h.code, op_index, field, joined, h.start, h.end, note, quoted=q)
                )
    return findings


# --------------------------------------------------------------------------- verbatim copies


def _weight(text: str) -> int:
    """Length with wide (CJK) characters counted twice: they carry about two letters' worth."""
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)


def _norm(text: str) -> View:
    """Taint view: escapes decoded, NFKC, hidden chars gone, look-alikes folded, spaced
    separators dropped (a copy with its spaces swapped for zero-width characters is still a
    copy). Offsets of decoded escapes are not mapped back."""
    return alnum(plain(unescape(text), fold=True))


def copied_spans(
    patch: Patch, untrusted: Sequence[UntrustedText | str], config: GuardConfig, trusted: str = ""
) -> list[Finding]:
    """Spans of >= min_copy_chars normalised characters copied from untrusted texts.

    Text the skill already had (``trusted``) does not count: a student echoing the skill
    back does not make the skill's own words untrusted.
    """
    n = config.min_copy_chars
    w = max(4, n // 2)  # window; a span counts when its weight (wide chars x2) reaches n
    items = [u if isinstance(u, UntrustedText) else UntrustedText(text=u) for u in untrusted]
    if not items:
        return []
    texts = patch_texts(patch)
    cands: list[tuple[int | None, str, str, View]] = [
        (t.op_index, t.field, t.text, _norm(t.text)) for t in texts
    ]
    for i in range(len(patch.ops)):
        parts = [t for t in texts if t.op_index == i]
        if len(parts) > 1:
            joined = " ".join(p.text for p in parts)
            cands.append((i, f"ops[{i}] (texts joined)", joined, _norm(joined)))
    windows: dict[str, list[tuple[int, int]]] = {}
    for ci, (_, _, _, v) in enumerate(cands):
        for pos in range(len(v.text) - w + 1):
            windows.setdefault(v.text[pos : pos + w], []).append((ci, pos))
    trusted_norm = _norm(trusted).text if trusted else ""
    best: dict[int, tuple[int, int, int]] = {}  # cand -> (length, pos, untrusted idx)
    for ui, u in enumerate(items):
        ut = _norm(u.text).text
        for j in range(len(ut) - w + 1):
            locs = windows.get(ut[j : j + w])
            if not locs:
                continue
            for ci, pos in locs:
                p = cands[ci][3].text
                if pos and j and p[pos - 1] == ut[j - 1]:
                    continue  # not the start of the match; found from an earlier window
                k = w
                while pos + k < len(p) and j + k < len(ut) and p[pos + k] == ut[j + k]:
                    k += 1
                lead = len(p[pos : pos + k]) - len(p[pos : pos + k].lstrip())
                span = p[pos : pos + k].strip()
                if _weight(span) < n or (trusted_norm and span in trusted_norm):
                    continue
                if len(span) > best.get(ci, (0, 0, 0))[0]:
                    best[ci] = (len(span), pos + lead, ui)
    out: list[Finding] = []
    reported: set[int | None] = set()
    for ci in sorted(best, key=lambda c: -best[c][0]):
        op_index, field, raw, view = cands[ci]
        if op_index in reported:
            continue
        reported.add(op_index)
        k, pos, ui = best[ci]
        s, e = view.span(pos, pos + k)
        src = items[ui]
        origin = (
            ", ".join(x for x in (src.run_id, src.event, src.source) if x) or f"untrusted text {ui}"
        )
        out.append(
            Finding(
                code="verbatim-copy",
                severity="high",
                op_index=op_index,
                message=f"copies {k} characters verbatim from untrusted text ({origin})",
                evidence=Evidence(field=field, start=s, end=e, excerpt=_show(raw[s:e])),
            )
        )
    return out


def trusted_text(pkg: SkillPackage) -> str:
    """All text of the package (what the skill already says is trusted)."""
    chunks = []
    for _rel, data in sorted(pkg.files.items()):
        try:
            chunks.append(data.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return "\n".join(chunks)


# --------------------------------------------------------------------------- entry points


def guard_patch(
    patch: Patch,
    untrusted: Sequence[UntrustedText | str] = (),
    config: GuardConfig | None = None,
    *,
    trusted: str = "",
) -> GuardReport:
    """Content-only guard (no package): what can be said from the patch's texts."""
    cfg = config or GuardConfig()
    findings = scan_content(patch, cfg) + copied_spans(patch, untrusted, cfg, trusted)
    return GuardReport(
        patch_id=patch.pid, verdict=verdict_of(findings), findings=findings, config=cfg
    )


def guard(
    applied: Applied,
    untrusted: Sequence[UntrustedText | str] = (),
    config: GuardConfig | None = None,
) -> GuardReport:
    """Full guard: the patch's texts, its copies from ``untrusted``, and its effect."""
    cfg = config or GuardConfig()
    content = guard_patch(applied.patch, untrusted, cfg, trusted=trusted_text(applied.before))
    findings = content.findings + policy_findings(applied)
    return GuardReport(
        patch_id=applied.patch.pid, verdict=verdict_of(findings), findings=findings, config=cfg
    )


__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "SENSITIVE_ID_PREFIXES",
    "Evidence",
    "Finding",
    "GuardConfig",
    "GuardReport",
    "PatchText",
    "Severity",
    "UntrustedText",
    "Verdict",
    "copied_spans",
    "guard",
    "guard_patch",
    "patch_texts",
    "policy_findings",
    "scan_content",
    "trusted_text",
    "verdict_of",
]
