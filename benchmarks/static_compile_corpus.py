"""Static compile on real public skills: does it keep what it must keep?

    python benchmarks/static_compile_corpus.py [--split dev|test|all] [--json]
        [--sample docs/static-compile-sample.md] [--verbose]

It measures the ``skillci`` that Python imports: from a git worktree whose venv holds an
editable install of another checkout, run it as ``PYTHONPATH=. python benchmarks/…`` so the
worktree's code is the one measured.

The corpus is tests/fixtures/real-skills (SOURCES.yaml: publisher repo, commit, licence and
a dev / test-only split chosen by a hash of the skill id) and tests/fixtures/plain-skills
(split by the same hash of ``plain-skills/<dir>``). Every skill is imported as a
plain skill and compiled deterministically for a small measured student (context window
8192, finishes without checking its work, longer bootstraps hurt it), so every rewrite
runs: numbered steps, vague phrases, moves on demand, a verification rule. Per split it
prints, over the skills that import:

- frontmatter: SKILL.md's frontmatter byte-exact, N/N;
- code blocks: the multiset of fenced and indented code blocks over every markdown file of
  the package byte-exact (a block moved on demand still counts), N/N;
- inline spans / links: the set of code spans, links, images, autolinks, bold and italic
  spans (text, whitespace runs as one space) over every markdown file unchanged, N/N;
- sentences rewritten, phrases flagged for a person, sections rolled back by the guard;
- the self-check (design 334): constraint sentences of SKILL.md still in the bootstrap
  verbatim, internal links resolving, line endings preserved, bootstrap shrank or nothing
  moved, sections moved, moves undone, bootstrap tokens before -> after.

``--sample FILE`` writes 20 rewritten sentences (before / after) for a reader to judge: every
one the test-only split yields first, spread over its skills, then (with ``--split all``) as
many from the dev split as it takes to reach 20, each labelled with its split. The dev split
is the one tuned on; the test-only figures are the claim. It then audits whole sections:
for a decision tree, a staged procedure with sub-sections, a "when not to use" section and
a non-English skill, the first skill of the test-only split with that shape (else of the
dev split, labelled), each top-level section ``kept`` / ``moved to FILE`` / ``rewritten``
with the text of moved, rewritten and constraint sections before and after (``SHAPES``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from skillci.compile.mdtext import Section, markup, parse, split_doc
from skillci.compile.profile import MeasuredTraits, ModelProfile
from skillci.compile.static import StaticResult, compile_static
from skillci.compile.static_check import CONSTRAINT
from skillci.errors import SkillciError
from skillci.skill.package import SKILL_MD, SkillPackage, read_executables, read_tree
from skillci.skill.porting import import_plain

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "real-skills"
PLAIN = ROOT / "tests" / "fixtures" / "plain-skills"

#: A small student that skips verification and does worse with longer bootstraps.
PROFILE = ModelProfile(
    route="sim/student",
    model="sim/student",
    context_window=8192,
    harness="skillci-builtin",
    source="runs",
    traits=MeasuredTraits(runs=6, verification_skip_rate=1.0, bootstrap_sensitivity=-0.2),
)


def _plain_split(name: str) -> str:
    """The real-skills rule (SOURCES.yaml): sha256('split:' + id) % 3 == 0 -> test."""
    return (
        "test" if int(hashlib.sha256(f"split:{name}".encode()).hexdigest(), 16) % 3 == 0 else "dev"
    )


def sources(split: str) -> list[dict[str, Any]]:
    doc = yaml.safe_load((CORPUS / "SOURCES.yaml").read_text(encoding="utf-8"))
    items = [{**e, "root": str(CORPUS)} for e in doc["skills"]]
    for d in sorted(PLAIN.iterdir()):
        if (d / SKILL_MD).is_file():
            sid = f"plain-skills/{d.name}"
            items.append({"id": sid, "dir": d.name, "root": str(PLAIN), "split": _plain_split(sid)})
    return [e for e in items if split == "all" or e["split"] == split]


def load(entry: dict[str, Any]) -> SkillPackage:
    folder = Path(str(entry["root"])) / str(entry["dir"])
    return import_plain(
        read_tree(folder), executable=read_executables(folder), source=str(entry["id"])
    )


def _markdown(pkg: SkillPackage) -> dict[str, str]:
    out = {}
    for rel, data in pkg.files.items():
        if rel.endswith(".md"):
            try:
                out[rel] = data.decode("utf-8")
            except UnicodeDecodeError:
                continue
    return out


def package_markup(pkg: SkillPackage) -> tuple[Counter[str], set[tuple[str, str]]]:
    """(code blocks as a multiset, inline spans as a set) over every markdown file."""
    code: Counter[str] = Counter()
    spans: set[tuple[str, str]] = set()
    for rel, text in _markdown(pkg).items():
        for kind, value in markup(text, has_frontmatter=rel == SKILL_MD):
            if kind == "code_block":
                code[value] += 1
            else:
                spans.add((kind, value))
    return code, spans


@dataclass
class SkillResult:
    id: str
    split: str
    imported: bool
    error: str | None = None
    frontmatter_exact: bool = False
    code_exact: bool = False
    spans_kept: bool = False
    rewritten: list[tuple[str, str, str]] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    rolled_back: int = 0
    moved: int = 0
    lost_spans: list[str] = field(default_factory=list)
    constraints: int = 0
    constraints_kept: int = 0
    links: int = 0
    links_broken: int = 0
    eol_kept: bool = True
    bootstrap_ok: bool = True
    undone: int = 0
    boot_before: int = 0
    boot_after: int = 0
    problems: list[str] = field(default_factory=list)


def measure(entry: dict[str, Any]) -> SkillResult:
    sid, split = str(entry["id"]), str(entry["split"])
    try:
        pkg = load(entry)
    except SkillciError as exc:
        return SkillResult(sid, split, imported=False, error=exc.message)
    res: StaticResult = compile_static(pkg, PROFILE)
    out = res.package
    chk = res.report.self_check
    assert chk is not None
    code_a, spans_a = package_markup(pkg)
    code_b, spans_b = package_markup(out)
    lost = sorted(f"-{k} {v[:70]}" for k, v in spans_a - spans_b)
    lost += sorted(f"+{k} {v[:70]}" for k, v in spans_b - spans_a)
    return SkillResult(
        sid,
        split,
        imported=True,
        frontmatter_exact=split_doc(pkg.text(SKILL_MD))[0] == split_doc(out.text(SKILL_MD))[0],
        code_exact=code_a == code_b,
        spans_kept=spans_a == spans_b,
        rewritten=[(r.kind, r.before, r.after) for s in res.report.sections for r in s.rewritten],
        flags=[f for s in res.report.sections for f in s.flags],
        rolled_back=len(res.report.rolled_back),
        moved=sum(1 for o in res.report.ops if o.kind == "move_on_demand" and o.applied),
        lost_spans=lost,
        constraints=chk.constraint_sentences,
        constraints_kept=chk.constraint_sentences - len(chk.constraints_missing),
        links=chk.internal_links,
        links_broken=len(chk.links_broken),
        eol_kept=not chk.encoding_problems,
        bootstrap_ok=chk.bootstrap_ok,
        undone=len(chk.undone),
        boot_before=res.report.bootstrap_before,
        boot_after=res.report.bootstrap_after,
        problems=chk.constraints_missing + chk.links_broken + chk.encoding_problems,
    )


def summary(results: list[SkillResult]) -> dict[str, Any]:
    ok = [r for r in results if r.imported]
    n = len(ok)
    return {
        "skills": len(results),
        "imported": n,
        "frontmatter_exact": sum(r.frontmatter_exact for r in ok),
        "code_blocks_exact": sum(r.code_exact for r in ok),
        "inline_spans_links_kept": sum(r.spans_kept for r in ok),
        "vague_sentences_rewritten": sum(k == "vague" for r in ok for k, _, _ in r.rewritten),
        "paragraphs_to_steps": sum(k == "steps" for r in ok for k, _, _ in r.rewritten),
        "phrases_flagged": sum(len(r.flags) for r in ok),
        "sections_rolled_back": sum(r.rolled_back for r in ok),
        "sections_moved": sum(r.moved for r in ok),
        "constraint_sentences": sum(r.constraints for r in ok),
        "constraint_sentences_kept": sum(r.constraints_kept for r in ok),
        "internal_links": sum(r.links for r in ok),
        "internal_links_resolving": sum(r.links - r.links_broken for r in ok),
        "line_endings_preserved": sum(r.eol_kept for r in ok),
        "bootstrap_shrank_or_nothing_moved": sum(r.bootstrap_ok for r in ok),
        "moves_undone_by_self_check": sum(r.undone for r in ok),
        "bootstrap_tokens_before": sum(r.boot_before for r in ok),
        "bootstrap_tokens_after": sum(r.boot_after for r in ok),
        "self_check_problems": {r.id: r.problems for r in ok if r.problems},
        "not_imported": {r.id: r.error for r in results if not r.imported},
    }


def sample(results: list[SkillResult], k: int = 20) -> list[tuple[str, str, str, str]]:
    """Up to ``k`` (skill, kind, before, after): every vague-phrase rewrite first, then
    paragraphs made numbered steps, round-robin over the skills (sorted by id)."""
    out: list[tuple[str, str, str, str]] = []
    for kind in ("vague", "steps"):
        queues = [
            [(r.id, kk, a, b) for kk, a, b in r.rewritten if kk == kind]
            for r in sorted(results, key=lambda r: r.id)
        ]
        depth = 0
        while len(out) < k and any(depth < len(q) for q in queues):
            out += [q[depth] for q in queues if depth < len(q)][: k - len(out)]
            depth += 1
    return out


# ---------------------------------------------------------------------------- section audit

#: The shapes issue 33 asks the audit to cover, each with the rule that picks its skill:
#: the first skill (ids sorted) of the test-only split whose source SKILL.md matches, else
#: the first of the dev split (labelled so), else none (said so in the file).
DECISION = re.compile(r"\b(?:decision|decide|choos\w*|which|select\w*)\b", re.IGNORECASE)
NOT_TO_USE = re.compile(
    r"\bwhen\s+not\s+to\b|\bdo\s+not\b|\bdon't\b|\bnever\b|禁止|不要|하지\s*말|してはいけない",
    re.IGNORECASE,
)
#: A heading that names a stage with a stage word (not a numbered capability list "3. Plots").
STAGE = re.compile(
    r"^\W*(?:stage|step|phase)\s*[0-9]+[a-z]?\b|第\s*[0-9一二三四五六七八九十]+\s*[步阶]"
    r"|ステップ\s*[0-9]|[0-9]+\s*단계",
    re.IGNORECASE,
)
CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def _children(secs: list[Section], i: int) -> list[Section]:
    """The sections nested under ``secs[i]`` (deeper levels, up to the next sibling)."""
    out = []
    for sub in secs[i + 1 :]:
        if sub.level <= secs[i].level:
            break
        out.append(sub)
    return out


def _decision(secs: list[Section], entry: dict[str, Any]) -> str | None:
    for i, sec in enumerate(secs):
        kids = [c for c in _children(secs, i) if c.level == sec.level + 1]
        if sec.level >= 2 and DECISION.search(sec.title) and len(kids) >= 2:
            return f"{sec.title!r}, {len(kids)} branches"
    return None


def _staged(secs: list[Section], entry: dict[str, Any]) -> str | None:
    stages = [i for i, s in enumerate(secs) if s.level >= 2 and STAGE.search(s.title)]
    nested = [secs[i].title for i in stages if _children(secs, i)]
    if len(stages) >= 2 and nested:
        return f"{len(stages)} stages; {nested[0]!r} has sub-sections"
    return None


def _not_to_use(secs: list[Section], entry: dict[str, Any]) -> str | None:
    return next((repr(s.title) for s in secs if s.level >= 2 and NOT_TO_USE.search(s.title)), None)


def _non_english(secs: list[Section], entry: dict[str, Any]) -> str | None:
    text = "".join(s.text for s in secs)
    cjk = len(CJK.findall(text))
    latin = len(re.findall(r"[A-Za-z]", text))
    if cjk and (entry.get("language", "en") != "en" or cjk > latin / 3):
        return f"language {entry.get('language', '?')}, {cjk} CJK characters"
    return None


SHAPES: list[tuple[str, str, Any]] = [
    (
        "Decision tree",
        "a heading (level 2 or deeper) naming a choice (decision, decide, choose, which, "
        "select) with at least 2 direct sub-sections (its branches)",
        _decision,
    ),
    (
        "Staged procedure with sub-sections",
        "at least 2 headings that name a numbered stage (Step 1, Phase 2a, Stage 3, 第2步, "
        "ステップ2, 2단계), at least one of them with sub-sections",
        _staged,
    ),
    (
        '"When not to use" / "Do not" section',
        "a heading (level 2 or deeper) saying when not to, do not, don't or never (or "
        "禁止, 不要, 하지 말, してはいけない)",
        _not_to_use,
    ),
    (
        "Non-English (CJK) skill",
        "SOURCES.yaml's `language` is not `en`, or CJK characters outnumber a third of "
        "the Latin letters, in SKILL.md",
        _non_english,
    ),
]


def _source_sections(entry: dict[str, Any]) -> list[Section]:
    path = Path(str(entry["root"])) / str(entry["dir"]) / SKILL_MD
    return parse(split_doc(path.read_text(encoding="utf-8"))[1])


def pick_shapes(
    entries: dict[str, list[dict[str, Any]]],
) -> list[tuple[str, str, dict[str, Any] | None, str]]:
    """(shape, rule, entry or None, what matched) for every shape of :data:`SHAPES`."""
    out = []
    for shape, rule, match in SHAPES:
        found: tuple[dict[str, Any] | None, str] = (None, "")
        for split in ("test", "dev"):
            for e in sorted(entries.get(split, []), key=lambda e: str(e["id"])):
                why = match(_source_sections(e), e)
                if why is not None:
                    found = (e, why)
                    break
            if found[0] is not None:
                break
        out.append((shape, rule, *found))
    return out


@dataclass
class SectionAudit:
    title: str
    subsections: int
    outcome: str
    constraint: bool
    before: str
    after: str
    where: str


def _groups(secs: list[Section]) -> list[list[Section]]:
    """The body's top-level sections (the smallest level >= 2) with what nests in them;
    the title and text before the first one form one group."""
    top = min((s.level for s in secs if s.level >= 2), default=2)
    groups: list[list[Section]] = [[]]
    for sec in secs:
        if sec.level == top:
            groups.append([sec])
        else:
            groups[-1].append(sec)
    return [g for g in groups if g]


def audit_skill(entry: dict[str, Any]) -> tuple[StaticResult, list[SectionAudit]]:
    """What ``compile static`` did to each top-level section of one skill's SKILL.md."""
    pkg = load(entry)
    res = compile_static(pkg, PROFILE)
    out = res.package
    reports = {r.index: r for r in res.report.sections if r.file == SKILL_MD}
    src = parse(pkg.skill_md.body)
    kept = _groups(parse(out.skill_md.body))
    kept_by_title: dict[tuple[int, str], list[list[Section]]] = {}
    for g in kept:
        kept_by_title.setdefault((g[0].level, g[0].title), []).append(g)
    audits = []
    for g in _groups(src):
        head = g[0]
        title = head.title if head.level >= 2 else "(title and text before the first section)"
        before = "".join(s.text for s in g)
        statuses = {reports[s.index].status for s in g if s.index in reports}
        placement = reports[head.index].placement if head.index in reports else "kept"
        rewrite = (
            ", rewritten"
            if "rewritten" in statuses
            else ", rolled back"
            if "rolled_back" in statuses
            else ""
        )
        if placement.startswith("moved to "):
            file = placement.removeprefix("moved to ")
            text = out.text(file) if file in out.files else ""
            after = before if before.strip() in text else text
            where = file
        else:
            same = kept_by_title.get((head.level, head.title), [])
            after = "".join(s.text for s in same.pop(0)) if same else ""
            where = SKILL_MD
        audits.append(
            SectionAudit(
                title=title,
                subsections=len(g) - 1,
                outcome=placement + rewrite,
                constraint=any(CONSTRAINT.search(s.text) for s in g),
                before=before,
                after=after,
                where=where,
            )
        )
    return res, audits


def _fenced(text: str, limit: int | None = None) -> list[str]:
    lines = text.rstrip("\n").splitlines()
    more = 0
    if limit is not None and len(lines) > limit:
        more, lines = len(lines) - limit, lines[:limit]
    longest = max((len(m) for m in re.findall(r"`{3,}|~{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    tail = [f"… {more} more lines, byte-identical"] if more else []
    return [fence + "markdown", *lines, fence, *tail, ""]


def audit_lines(entries: dict[str, list[dict[str, Any]]]) -> list[str]:
    lines = [
        "## Section audit: what `compile static` did to whole sections",
        "",
        "For each shape issue 33 names, one skill picked by a stated rule: the first skill "
        "(ids sorted) of the **test-only** split whose source SKILL.md matches it, else the "
        "first of the dev split (labelled so). Each top-level section is `kept` or `moved to "
        "FILE` (its sub-sections move with it), plus `rewritten` when a paragraph of it "
        "became steps or a vague phrase was replaced. The text is shown for every section "
        "that holds a constraint (static compile's `CONSTRAINT`), moved, or was rewritten: "
        "once when the after is byte-identical (moved: identical inside FILE), else before "
        "and after in full.",
        "",
    ]
    for n, (shape, rule, entry, why) in enumerate(pick_shapes(entries), 1):
        lines += [f"### {n}. {shape}", "", f"Rule: {rule}.", ""]
        if entry is None:
            lines += ["Neither split of the corpus has a skill of this shape.", ""]
            continue
        split = "test-only" if entry["split"] == "test" else "dev (the test-only split has none)"
        res, audits = audit_skill(entry)
        rep = res.report
        moved = sum(1 for a in audits if a.outcome.startswith("moved"))
        others = ", ".join(
            f"{o.kind.replace('_', ' ')} added to the bootstrap"
            for o in rep.ops
            if o.applied and o.kind != "move_on_demand"
        )
        lines += [
            f"Skill: `{entry['id']}`, {split} split; matched: {why}. Bootstrap tokens "
            f"{rep.bootstrap_before} -> {rep.bootstrap_after} (budget {rep.bootstrap_budget}); "
            f"{moved} of {len(audits)} top-level sections moved; other changes: "
            f"{others or 'none'}.",
            "",
            "| Top-level section | Sub-sections | Constraint | What compile static did |",
            "|---|---|---|---|",
        ]
        for a in audits:
            title = a.title.replace("|", "\\|")
            lines.append(
                f"| {title} | {a.subsections} | {'yes' if a.constraint else 'no'} | {a.outcome} |"
            )
        lines.append("")
        for a in audits:
            moved_a = a.outcome.startswith("moved")
            if not (a.constraint or moved_a or "rewritten" in a.outcome):
                continue
            lines += [f"#### {a.title} — {a.outcome}", ""]
            if a.after.rstrip() == a.before.rstrip():
                where = f"in {a.where}" if moved_a else "in SKILL.md"
                tail = "" if a.after == a.before else " (a trailing blank line aside)"
                lines += [f"Before = after, byte-identical {where}{tail}:", ""]
                lines += _fenced(a.before, limit=30)
            else:
                lines += ["Before:", "", *_fenced(a.before), f"After ({a.where}):", ""]
                lines += _fenced(a.after) if a.after else ["(not found)", ""]
    return lines


def write_sample(
    path: Path,
    rows: list[tuple[str, str, str, str, str]],
    figures: dict[str, Any],
    flags: list[tuple[str, str]],
    audit: list[str],
) -> None:
    n_test = sum(1 for r in rows if r[0] == "test")
    lines = [
        "# Static compile: rewritten sentences and whole sections, before and after",
        "",
        "Generated by `python benchmarks/static_compile_corpus.py --sample "
        "docs/static-compile-sample.md` from the **test-only** split of the real-skills "
        "corpus (tests/fixtures/real-skills, never tuned on): every vague-phrase rewrite "
        f"({figures['vague_sentences_rewritten']}), then paragraphs made numbered steps "
        f"(of {figures['paragraphs_to_steps']}), round-robin over the skills, {n_test} in "
        f"all from that split. {figures['phrases_flagged']} vague phrases were left for a "
        "person instead (their replacement would change the condition, or they sit in "
        "bold/link text).",
        "",
        "Judge each pair: does the *after* say what the *before* said, only more concretely?",
        "",
    ]
    if n_test < len(rows):
        lines += [
            f"The test-only split yields {n_test} rewrites: vague phrases from the curated "
            "table are rare in these skills' instruction sentences, most that occur are "
            "conditions (flagged, not rewritten), and a paragraph becomes steps only when "
            "every sentence is one unconditional instruction (no condition, question, "
            "standing rule such as never/always/do not, or statement; design 405). The other "
            f"{len(rows) - n_test} {'comes' if len(rows) - n_test == 1 else 'come'} from the "
            "dev split (tuned on), labelled so.",
            "",
        ]
    for i, (split, sid, kind, before, after) in enumerate(rows, 1):
        what = "vague phrase" if kind == "vague" else "numbered steps"
        lines += [
            f"## {i}. `{sid}` ({what}; {'test-only' if split == 'test' else 'dev'} split)",
            "",
            "Before:",
            "",
            *[f"> {x}" for x in before.splitlines()],
            "",
            "After:",
            "",
            *[f"> {x}" for x in after.splitlines()],
            "",
        ]
    lines += ["## Left for a person (not rewritten)", ""]
    lines += [f"- `{sid}`: {f}" for sid, f in flags] or ["- none"]
    lines += ["", *audit]
    tmp = path.with_suffix(".tmp")
    tmp.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=["dev", "test", "all"], default="all")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--sample", type=Path, default=None)
    ap.add_argument("--verbose", action="store_true")
    args = ap.parse_args(argv)
    splits = ["dev", "test"] if args.split == "all" else [args.split]
    doc: dict[str, Any] = {}
    by_split: dict[str, list[SkillResult]] = {}
    for split in splits:
        results = [measure(e) for e in sources(split)]
        by_split[split] = results
        figures = summary(results)
        doc[split] = figures
        if args.verbose:
            for r in results:
                bad = [] if r.spans_kept and r.code_exact and r.frontmatter_exact else r.lost_spans
                print(
                    f"  {split} {r.id}: rewritten={len(r.rewritten)} flags={len(r.flags)} {bad[:4]}"
                )
    if "test" in by_split and args.sample is not None:
        test = by_split["test"]
        rows = [("test", *row) for row in sample(test)]
        rows += [("dev", *row) for row in sample(by_split.get("dev", []), 20 - len(rows))]
        flags = [(r.id, f) for r in sorted(test, key=lambda r: r.id) for f in r.flags]
        entries = {"test": sources("test"), "dev": sources("dev")}
        write_sample(args.sample, rows, doc["test"], flags, audit_lines(entries))
    if args.json:
        print(json.dumps(doc, indent=1))
        return 0
    for split, f in doc.items():
        name = "dev" if split == "dev" else "test-only"
        n = f["imported"]
        print(f"static compile, {name} split: {f['skills']} skills, {n} imported")
        print(f"  frontmatter byte-exact        {f['frontmatter_exact']}/{n}")
        print(f"  code blocks byte-exact        {f['code_blocks_exact']}/{n}")
        print(f"  inline spans/links preserved  {f['inline_spans_links_kept']}/{n}")
        print(
            f"  vague-phrase sentences rewritten {f['vague_sentences_rewritten']}, "
            f"paragraphs made numbered steps {f['paragraphs_to_steps']}, phrases flagged for "
            f"a person {f['phrases_flagged']}, sections rolled back "
            f"{f['sections_rolled_back']}, sections moved on demand {f['sections_moved']}"
        )
        print(
            f"  constraint sentences kept in the bootstrap {f['constraint_sentences_kept']}/"
            f"{f['constraint_sentences']}"
        )
        print(
            f"  internal links resolving      {f['internal_links_resolving']}/"
            f"{f['internal_links']} (links already broken in the source not counted as broken)"
        )
        print(f"  line endings preserved        {f['line_endings_preserved']}/{n}")
        print(f"  bootstrap shrank or no move   {f['bootstrap_shrank_or_nothing_moved']}/{n}")
        print(
            f"  sections moved {f['sections_moved']}, moves undone by the self-check "
            f"{f['moves_undone_by_self_check']}, bootstrap tokens "
            f"{f['bootstrap_tokens_before']} -> {f['bootstrap_tokens_after']}"
        )
        for sid, probs in f["self_check_problems"].items():
            print(f"  self-check problem: {sid}: {'; '.join(probs)[:160]}")
        for sid, err in f["not_imported"].items():
            print(f"  not imported: {sid}: {err}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
