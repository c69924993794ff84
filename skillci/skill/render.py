"""Render a package for a harness, with progressive disclosure.

What the harness loads at start-up (the *bootstrap*) is SKILL.md plus, when the package has
them, the bootstrap-scoped rules and an index of on-demand files with when-to-load
guidance (path and load-when only: nothing in the index depends on an on-demand file's
bytes beyond its load-when line, so editing one leaves the bootstrap unchanged).
Workflow/tool/recovery files (``skillci/{workflows,tools,recovery}/``) (with their workflow-scoped rules appended) are
*on-demand*: the student loads them when their trigger applies. So are the skill's own
documents (references/*.md, forms.md …): counted in tokens, indexed with a load-when line
taken from the SKILL.md sentence that links them, bytes unchanged. Other bundled files
(scripts/, assets/) are copied unchanged.

Harness layouts:
- ``folder``: a plain skill folder any agent that reads SKILL.md can use (BenchFlow/Harbor
  mount ``environment/skills/<name>``). Also what ``skillci skill export`` writes.
- ``builtin``: the same files plus ``skill.json``, the index the built-in agent reads
  (bootstrap text, on-demand paths with guidance and token counts).

Pure: no I/O. ``write_rendered`` in the CLI layer puts the result on disk.
"""

from __future__ import annotations

import json
import posixpath
import re
from typing import Literal

from pydantic import BaseModel, Field

from skillci.mdscan import bracket_sub
from skillci.skill.models import Lifecycle, Rule
from skillci.skill.package import ON_DEMAND_DIRS, SKILL_MD, SkillPackage, loadable_docs

RENDER_SCHEMA_VERSION = 1
HARNESSES = ("folder", "builtin")
GENERATED_MARKER = "<!-- skillci:generated -->"
_WHEN_RE = re.compile(
    # the leading blanks stay on the line: ``^\s*>?\s*`` read a run of blank lines from each of
    # its line starts, splitting it around the optional ``>`` every way (cubic; design 468)
    r"^[^\S\n]*(?:>[^\S\n]*)?(?:\*\*)?load when(?:\*\*)?\s*:\s*(.+)$",
    re.IGNORECASE | re.MULTILINE,
)
_H1_RE = re.compile(r"^#\s+(.+)$", re.MULTILINE)


class RenderedFile(BaseModel):
    """One file of a rendered skill."""

    path: str = Field(description="Path relative to the rendered skill root.")
    kind: Literal["bootstrap", "on_demand", "bundled", "index"]
    content: bytes = Field(description="Exact bytes to write.")
    tokens: int = Field(description="Tokens (0 for binary/bundled files).")
    when: str | None = Field(default=None, description="When-to-load guidance (on-demand).")
    source: list[str] = Field(default_factory=list, description="Package files it came from.")


class RenderedSkill(BaseModel):
    """A skill as one harness sees it."""

    schema_version: int = RENDER_SCHEMA_VERSION
    name: str
    version: str
    harness: str
    package_hash: str
    files: list[RenderedFile]

    @property
    def bootstrap_tokens(self) -> int:
        return sum(f.tokens for f in self.files if f.kind == "bootstrap")

    @property
    def total_tokens(self) -> int:
        return sum(f.tokens for f in self.files if f.kind in ("bootstrap", "on_demand"))

    def file(self, path: str) -> RenderedFile | None:
        return next((f for f in self.files if f.path == path), None)

    @property
    def content_hash(self) -> str:
        from hashlib import sha256

        h = sha256()
        for f in sorted(self.files, key=lambda f: f.path):
            h.update(f.path.encode() + b"\0" + sha256(f.content).digest())
        return h.hexdigest()


def rendered_rules(pkg: SkillPackage) -> list[Rule]:
    return [lr.rule for lr in pkg.rules if lr.rule.status.rendered]


def rule_markdown(rule: Rule) -> str:
    """A rule as numbered, executable markdown (what the student reads)."""
    lines = [f"### {rule.id}"]
    if rule.status is Lifecycle.deprecated:
        lines.append("_(deprecated: kept for compatibility)_")
    cond = []
    if rule.trigger.all:
        cond.append("all of: " + "; ".join(rule.trigger.all))
    if rule.trigger.any:
        cond.append("any of: " + "; ".join(rule.trigger.any))
    if cond:
        lines.append("When " + " — ".join(cond) + ".")
    if rule.scope.tools:
        lines.append("Tools: " + ", ".join(rule.scope.tools) + ".")
    lines.append("Steps:")
    lines += [f"{i}. {s}" for i, s in enumerate(rule.instruction.steps, 1)]
    if rule.validation.success:
        lines.append("Done only when: " + "; ".join(rule.validation.success) + ".")
    for fp in rule.failure_policy:
        lines.append(f"If {fp.condition}: {fp.action}.")
    if rule.anti_patterns:
        lines.append("Never: " + "; ".join(rule.anti_patterns) + ".")
    return "\n".join(lines) + "\n"


def when_to_load(text: str, path: str) -> str:
    m = _WHEN_RE.search(text)
    if m:
        return m.group(1).strip()
    h = _H1_RE.search(text)
    return f"{h.group(1).strip()}" if h else f"see {path}"


_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_MARKUP = re.compile(r"^\s*(?:[-*+]|\d+[.)]|#+|>|\|)\s*|\s*\|\s*$")
_LEAD_MARKUP = re.compile(r"\A\s*(?:[-*+]|\d+[.)]|#+|>|\|)\s*")


def strip_markup(line: str) -> str:
    """``_MARKUP.sub("", line)`` (a list, heading, quote or table marker and a table's closing
    ``|``) in linear time: the pattern's second branch, tried at each blank of a long run of
    blanks, read the rest of the run each time (quadratic on a line a fork's pull request
    writes). The same text for every line: tests/unit/skill/test_render_linear.py."""
    lead = _LEAD_MARKUP.match(line)
    start = lead.end() if lead else 0
    end = len(line.rstrip())
    if end > start and line[end - 1] == "|":
        return line[start : end - 1].rstrip()
    return line[start:]


_LINK = re.compile(r"\[([^\]]*)\]\([^)]*\)")


def linking_sentence(texts: list[tuple[str, str]], rel: str) -> str | None:
    """The sentence that links or names ``rel`` — in SKILL.md first, then in other docs.

    That sentence is what tells the agent when to load the file ("For form filling, read
    forms.md"), so it becomes the file's load-when line.
    """
    for src, text in texts:
        if src == rel:
            continue
        base = posixpath.dirname(src)
        names = {rel, posixpath.relpath(rel, base) if base else rel}
        pat = re.compile(
            r"(?<![\w/.-])(?:\./)?(?:" + "|".join(re.escape(n) for n in names) + r")(?![\w/-])"
        )
        in_code = False
        for line in text.splitlines():
            if line.lstrip().startswith(("```", "~~~")):
                in_code = not in_code
                continue
            if in_code or not pat.search(line):
                continue
            for sentence in _SENTENCE_END.split(strip_markup(line)):
                if pat.search(sentence):
                    linked = bracket_sub(_LINK, r"\1 (" + rel + ")", sentence, escapes=False)
                    plain = " ".join(linked.split())
                    return plain if len(plain) <= 240 else plain[:239] + "…"
    return None


def _workflow_path(pkg: SkillPackage, workflow: str) -> str:
    base = pkg.manifest.entrypoints.workflows.rstrip("/")
    return f"{base}/{workflow}.md"


def render(pkg: SkillPackage, harness: str = "folder") -> RenderedSkill:
    # long: one branch per harness layout, each a few lines; the table of layouts reads top to bottom
    """Render ``pkg`` for ``harness`` (see module docstring)."""
    if harness not in HARNESSES:
        from skillci.errors import UsageError

        raise UsageError(f"unknown harness {harness!r}", hint=f"use one of {', '.join(HARNESSES)}")
    m = pkg.manifest
    rules = rendered_rules(pkg)
    boot_rules = [r for r in rules if r.scope.workflow is None]
    by_workflow: dict[str, list[Rule]] = {}
    for r in rules:
        if r.scope.workflow is not None:
            by_workflow.setdefault(r.scope.workflow, []).append(r)

    files: list[RenderedFile] = []
    # on-demand documents, with their workflow-scoped rules appended
    od_texts: dict[str, tuple[str, list[str]]] = {}
    for rel in pkg.on_demand_files():
        od_texts[rel] = (pkg.text(rel), [rel])
    for wf, wf_rules in sorted(by_workflow.items()):
        path = _workflow_path(pkg, wf)
        text, src = od_texts.get(path, (f"# Workflow: {wf}\n", []))
        section = "\n".join(rule_markdown(r) for r in wf_rules)
        text = (
            text.rstrip("\n") + f"\n\n{GENERATED_MARKER}\n## Rules for this workflow\n\n{section}"
        )
        od_texts[path] = (text, src + [lr.file for lr in pkg.rules if lr.rule in wf_rules])
    for rel, (text, src) in sorted(od_texts.items()):
        files.append(
            RenderedFile(
                path=rel,
                kind="on_demand",
                content=text.encode(),
                tokens=pkg.tokens(text),
                when=when_to_load(text, rel),
                source=sorted(set(src)),
            )
        )

    # bootstrap: SKILL.md untouched, plus a generated section when there is anything to add
    skill_text = pkg.text(SKILL_MD)
    generated: list[str] = []
    if boot_rules:
        generated.append(
            "## Rules (always apply)\n\n" + "\n".join(rule_markdown(r) for r in boot_rules)
        )
    original = set(m.origin.files) if m.origin else set()
    unlisted = [f for f in files if f.path not in pkg.body and f.path not in original]
    if unlisted:
        idx = [
            "## On-demand files",
            "",
            "Load a file with your skill-file tool only when its trigger applies:",
        ]
        # no per-file token counts here: the index is always loaded, so a count that moves
        # with an on-demand file's bytes would make every edit look like a bootstrap edit
        # and defeat test-impact selection (docs/design/230). Counts stay in skill.json.
        idx += [f"- `{f.path}` — load when: {f.when}" for f in unlisted]
        generated.append("\n".join(idx) + "\n")
    if generated:
        skill_bytes = (
            skill_text.rstrip("\n") + f"\n\n{GENERATED_MARKER}\n" + "\n".join(generated)
        ).encode()
        boot_src = [SKILL_MD, *sorted({lr.file for lr in pkg.rules if lr.rule in boot_rules})]
    else:
        skill_bytes = pkg.files[SKILL_MD]
        boot_src = [SKILL_MD]
    files.insert(
        0,
        RenderedFile(
            path=SKILL_MD,
            kind="bootstrap",
            content=skill_bytes,
            tokens=pkg.tokens(skill_bytes.decode("utf-8-sig")),
            source=boot_src,
        ),
    )
    docs = set(loadable_docs({rel: pkg.files[rel] for rel in pkg.bundled_files()}))
    linking = [(SKILL_MD, skill_text)] + [(r, pkg.files[r].decode("utf-8")) for r in sorted(docs)]
    for rel in pkg.bundled_files():
        if rel in docs:  # the skill's own references: counted and indexed like on-demand docs
            text = pkg.files[rel].decode("utf-8")
            when = linking_sentence(linking, rel) or when_to_load(text, rel)
            kind: Literal["on_demand", "bundled"] = "on_demand"
            tokens = pkg.tokens(text)
        else:
            kind, tokens, when = "bundled", 0, None
        files.append(
            RenderedFile(
                path=rel, kind=kind, content=pkg.files[rel], tokens=tokens, when=when, source=[rel]
            )
        )

    out = RenderedSkill(
        name=m.name, version=m.version, harness=harness, package_hash=pkg.content_hash, files=files
    )
    if harness == "builtin":
        files = out.files
        index = {
            "schema_version": RENDER_SCHEMA_VERSION,
            "name": m.name,
            "version": m.version,
            "package_hash": pkg.content_hash,
            "bootstrap": SKILL_MD,
            "bootstrap_tokens": out.bootstrap_tokens,
            "on_demand": [
                {"path": f.path, "when": f.when, "tokens": f.tokens}
                for f in files
                if f.kind == "on_demand"
            ],
        }
        files.append(
            RenderedFile(
                path="skill.json",
                kind="index",
                content=(json.dumps(index, indent=2, ensure_ascii=False) + "\n").encode(),
                tokens=0,
            )
        )
    return out


__all__ = [
    "HARNESSES",
    "ON_DEMAND_DIRS",
    "RenderedFile",
    "RenderedSkill",
    "render",
    "rule_markdown",
]
