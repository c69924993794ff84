"""Static compile, the text half: which paragraphs become steps, and the rewriting itself.

A :class:`StaticPlan` says which paragraphs of a markdown file become numbered steps and
how their sentences group (the deterministic plan: every imperative sentence starts a
step; hybrid mode gets one from the planning model, ``skillci.compile.planner``). The
rewriter executes a plan and replaces vague phrases with curated checks
(``skillci.compile.vague_replacements``) in paragraphs, quotes, lists and tables; every rewritten
section then passes the semantic guard (``skillci.compile.static_guard``) or is restored
byte for byte. Code blocks, indented code and HTML are never touched. Pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import Field

from skillci.basemodels import StrictModel
from skillci.compile.mdtext import (
    Block,
    Section,
    SkillDoc,
    code_span_ranges,
    inline_ranges,
    parse,
    parse_doc,
    split_sentences,
)
from skillci.compile.static_guard import guard_section
from skillci.compile.vague_replacements import VagueHit, find_hits
from skillci.skill.package import SKILL_MD

PLAN_SCHEMA_VERSION = 1

_VERBS = """add analyse analyze apply ask avoid build call change check choose clean click close
collect commit compare compute configure confirm convert copy count create cut define
delete describe determine do download edit enable ensure export extract fill find fix
follow format generate get give go identify import include insert inspect install keep
launch list load locate look make mark merge move note open parse paste pick place
prefer prepare print put read record reduce re-run refer remove rename render repeat
replace report reproduce rerun restart retry return review run save search select send set
skip sort split start stop submit summarize take test trace try type unpack update
upload use validate verify wait write"""
#: Verbs that start an instruction (after leads like First, / Then / Never).
IMPERATIVES = frozenset(_VERBS.split())
_LEAD = re.compile(
    r"^(?:(?:first|then|next|finally|afterwards|after that|also|now|lastly|second|third|"
    r"before (?:that|anything)|once done|otherwise|carefully|thoroughly|please|just)\b,?\s*)+",
    re.IGNORECASE,
)
_NEG = re.compile(r"^(?:do not|don't|never|always|only)\s+", re.IGNORECASE)
_WIDE_END = re.compile(r"[\u3000-\u9fff\uff00-\uffef]$")


# ---------------------------------------------------------------------------- plan


class ParagraphPlan(StrictModel):
    """How one paragraph becomes steps: sentence numbers (0-based, in the paragraph)."""

    section: int = Field(ge=0, description="Section index in the parsed file.")
    block: int = Field(ge=0, description="Block index within the section.")
    intro: list[int] = Field(default_factory=list, description="Sentences kept as a lead-in.")
    steps: list[list[int]] = Field(
        default_factory=list, description="Steps in order; each lists its sentences in order."
    )


class StaticPlan(StrictModel):
    """Which paragraphs become steps and which sections may move on demand."""

    schema_version: int = Field(default=PLAN_SCHEMA_VERSION, description="Plan schema.")
    source: Literal["deterministic", "model"] = Field(description="Who made the plan.")
    file: str = Field(default=SKILL_MD, description="The markdown file the plan is about.")
    paragraphs: list[ParagraphPlan] = Field(default_factory=list)
    move: list[str] = Field(
        default_factory=list,
        description="Section titles to move first when the bootstrap is over budget.",
    )


_CONDITION = re.compile(
    r"^(?:if|when|whenever|once|after|before|unless|while|for (?:each|every))\b[^,;:]{1,160},\s*",
    re.IGNORECASE,
)


_COPULA = frozenset({"is", "are", "was", "were", "has", "have", "will", "can", "should"})


def _bare(sentence: str) -> str:
    s = sentence.strip().lstrip("*_\"'(")
    s = _LEAD.sub("", s)
    # a conditional instruction: "If the build fails, rerun it." -> "rerun it."
    s = _CONDITION.sub("", s)
    s = _LEAD.sub("", s)
    s = _NEG.sub("", s)
    return s


def is_imperative(sentence: str) -> bool:
    """The sentence starts with an instruction verb (after First,/Then/Never/... leads and
    after a leading condition: "If the build fails, rerun it.")."""
    if sentence.rstrip().rstrip("*_").endswith(("?", "？")):
        return False  # "Write code before the test?" asks; it does not instruct
    s = _bare(sentence)
    m = re.match(r"([A-Za-z][A-Za-z-]*)(\*{0,2}:)?", s)
    # "Type: a display face ..." is a label and "Render order is ..." a noun phrase
    nxt = [w.lower() for w in re.findall(r"[A-Za-z']+", s[m.end() :])[:2]] if m else []
    return (
        m is not None
        and m.group(2) is None
        and not _COPULA.intersection(nxt)
        and m.group(1).lower() in IMPERATIVES
    )


_COND_START = re.compile(
    r"^(?:if|when|whenever|unless|otherwise|in case|only if|as long as|once|where|"
    r"else|except)\b",
    re.IGNORECASE,
)
#: A condition anywhere in a sentence: "Fall back to X only when ...", "... unless the user
#: names one", "Only proceed once the user approves", and the Chinese, Japanese and Korean
#: forms (如果 / 若 / 除非 / 否则 / 一旦 / 的话, 場合 / なら / 限り, 경우 / 하면 / 않으면).
_COND_ANY = re.compile(
    r"\b(?:if|unless|when|whenever|otherwise|in case|as long as|provided that|only after|"
    r"until)\b"
    r"|\bonce\s+(?:the|you|it|they|we|all|this|that|these|those|your|their|our|done|"
    r"finished|complete|completed|approved|everything|each)\b"
    r"|如果|假如|若是|除非|否则|一旦|的话|場合|なら|限り|경우|하면|않으면|이라면",
    re.IGNORECASE,
)
#: A standing rule, not a step: it holds throughout, so numbering it would place it after
#: the step before ("Never start on main", "Always run with --help first", "Only use X").
_RULE = re.compile(
    r"^(?:never|always|do\s+not|don't|avoid|only|must|you\s+must|no\s+need)\b", re.IGNORECASE
)
_STOP_WORDS = """this that with from then into your each they them their when have will
should what which there these those about after before only also more than some other"""
_STOP = frozenset(_STOP_WORDS.split())


def is_condition(sentence: str) -> bool:
    """The sentence is a condition or a branch ("If X, skip Y.", "Otherwise, ..."): it
    belongs to the instruction before it and never becomes a step of its own."""
    s = sentence.strip().lstrip("*_\"'(")
    return _COND_START.match(s) is not None


def has_condition(sentence: str) -> bool:
    """The sentence holds a condition anywhere, outside code spans (design 405): "If they
    request changes, make them", "Skip gates only when the flag was passed", "Only proceed
    once the user approves", "Use X unless the user names Y", 如果 …, … 場合, … 경우."""
    s = _CODE_SPAN.sub(" ", sentence)
    return is_condition(s) or _COND_ANY.search(s) is not None


def is_rule(sentence: str) -> bool:
    """The sentence is a standing rule (a prohibition, an obligation, a restriction:
    "Never …", "Always …", "Do not …", "Avoid …", "Only …"), which holds for every step
    rather than being one."""
    s = _LEAD.sub("", sentence.strip().lstrip("*_\"'(")).lstrip("*_\"'(")
    return _RULE.match(s) is not None


_FIRST = re.compile(r"^(?:first|start|begin|to (?:begin|start))\b", re.IGNORECASE)


def says_first(sentence: str) -> bool:
    """The sentence says it comes first ("Start by writing a draft", "First, ..."): as a
    later step its number would contradict it."""
    return _FIRST.match(sentence.strip().lstrip("*_\"'(")) is not None


#: A series of bare verbs before one object: "Create, retrieve, and analyze ROIs",
#: "Read, write or convert files" (design 414).
_VERB_SERIES = re.compile(
    r"^[A-Za-z-]+,\s+(?:[a-z-]+,\s+)*[a-z-]+,?\s+(?:and|or|&)\s+[a-z-]+\b"
    r"|^[A-Za-z-]+,\s+[a-z-]+,\s"
)


def is_capability(sentence: str) -> bool:
    """The sentence says what the skill can do, not what to do next: an instruction verb
    in a series of bare verbs ("Create, retrieve, and analyze ROIs with various shapes.").
    It sums up a capability; numbered, it would read as one step of a procedure."""
    return is_imperative(sentence) and _VERB_SERIES.match(_bare(sentence)) is not None


def is_step(sentence: str) -> bool:
    """The sentence is one unconditional instruction that may stand as a numbered step:
    imperative, no condition anywhere, not a standing rule, not a question, not a
    capability summary (:func:`is_capability`)."""
    return (
        is_imperative(sentence)
        and not has_condition(sentence)
        and not is_rule(sentence)
        and not is_capability(sentence)
    )


def _content(sentence: str) -> set[str]:
    ws = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", sentence)}
    return {w for w in ws if w not in _STOP and w not in IMPERATIVES}


_CODE_SPAN = re.compile(r"`[^`]*`")


def is_summary(sentences: list[str]) -> bool:
    """The first sentence sums up what the rest do ("Create a branch following the naming
    conventions. Read the ticket. Name the branch ..."): it ends with a colon, or, in a
    paragraph of three or more sentences, a later sentence takes up one of its words; or it
    names a capability (:func:`is_capability`: "Create, retrieve, and analyze ROIs.")."""
    if not sentences:
        return False
    first = sentences[0].rstrip()
    if first.endswith((":", "：")) or is_capability(first):
        return True
    if len(sentences) < 3:
        return False
    # a shared literal (`input.csv` read, then converted) is a shared object, not a summary
    words = _content(_CODE_SPAN.sub(" ", first))
    return any(words & _content(_CODE_SPAN.sub(" ", s)) for s in sentences[1:])


def plan_problem(text: str, plan: ParagraphPlan) -> str | None:
    """Why ``plan`` may not turn paragraph ``text`` into steps (None: it may), design 405:
    the steps reorder or drop a sentence; a sentence holds a condition (the paragraph is
    conditional logic, it stays prose); a step holds two sentences (two instructions
    merged) or a standing rule ("Never …"); or a summary sentence became a step."""
    sentences, _ = split_sentences(text)
    order = [*plan.intro, *(i for step in plan.steps for i in step)]
    if order != list(range(len(sentences))):
        return "the steps reorder, repeat or drop a sentence"
    if not plan.steps:
        return None
    if any(is_condition(sentences[step[0]]) for step in plan.steps):
        return "a condition would become a step"
    if any(has_condition(s) for s in sentences):
        return "a sentence holds a condition; the paragraph stays prose"
    if any(len(step) != 1 for step in plan.steps):
        return "a step would merge two sentences; one instruction per step"
    if any(is_rule(sentences[step[0]]) for step in plan.steps):
        return "a standing rule (never, always, do not, only) would become a step"
    if any(says_first(sentences[step[0]]) for step in plan.steps[1:]):
        return "a sentence that says it comes first would become a later step"
    if is_summary(sentences) and 0 not in plan.intro:
        return "a summary sentence would become a step"
    if any(is_capability(sentences[step[0]]) for step in plan.steps):
        return "a capability summary (a series of verbs) would become a step"
    return None


def paragraph_plan(
    section: int, block: int, text: str, *, min_imperative: int = 2
) -> ParagraphPlan | None:
    """The deterministic plan for one paragraph (None: leave it a paragraph), design 405.

    A paragraph becomes steps only when every sentence is one unconditional instruction
    (:func:`is_step`), one sentence per step, at least ``min_imperative`` of them; a
    summary first sentence ("To deploy:", or one a later sentence takes up) may stay a
    lead-in. Any condition (:func:`has_condition`), question, standing rule or statement
    keeps the whole paragraph as it is: steps would cut a condition from what it governs,
    number a rule that holds throughout, or merge a statement into a step."""
    sentences, _ = split_sentences(text)
    if not sentences or any(s.rstrip().rstrip("*_").endswith(("?", "？")) for s in sentences):
        return None  # "Bug found? Write a test." is one conditional instruction, not steps
    if any(has_condition(s) for s in sentences):
        return None
    intro = [0] if is_summary(sentences) else []
    rest = range(len(intro), len(sentences))
    if len(rest) < max(min_imperative, 1) or not all(is_step(sentences[i]) for i in rest):
        return None
    if any(says_first(sentences[i]) for i in rest[1:]):
        return None  # "Start by writing a draft" as step 3 contradicts itself
    return ParagraphPlan(section=section, block=block, intro=intro, steps=[[i] for i in rest])


def deterministic_plan(text: str, file: str = SKILL_MD) -> StaticPlan:
    """Steps for every qualifying paragraph of a markdown file (frontmatter skipped)."""
    doc = parse_doc(text)
    out = StaticPlan(source="deterministic", file=file)
    for sec in doc.sections:
        for bi, b in enumerate(sec.blocks):
            if b.kind == "para":
                p = paragraph_plan(sec.index, bi, b.text)
                if p is not None:
                    out.paragraphs.append(p)
    return out


# ---------------------------------------------------------------------------- rewriting


@dataclass
class TextRewrite:
    """What vague-phrase rewriting did to one piece of text."""

    text: str
    hits: list[VagueHit] = field(default_factory=list)
    """Phrases replaced."""
    flags: list[str] = field(default_factory=list)
    """Phrases left for a person, with why."""
    sentences: list[tuple[str, str, str]] = field(default_factory=list)
    """(kind, before, after) of every change: ``vague`` (a sentence) or ``steps`` (a
    paragraph that became numbered steps)."""

    def add(self, other: TextRewrite) -> None:
        self.hits += other.hits
        self.flags += other.flags
        self.sentences += other.sentences


def _flag(h: VagueHit, why: str) -> str:
    return f"vague {h.phrase!r} kept: {why}; write the concrete condition or action"


def rewrite_vague_text(text: str) -> TextRewrite:
    """Replace vague phrases in instruction sentences only, never inside inline markup,
    and only where the replacement keeps the condition; add each check after its sentence.
    Condition-changing phrases and phrases inside markup of an instruction are flagged."""
    sentences, seps = split_sentences(text)
    result = TextRewrite("")
    out: list[str] = []
    for s, sep in zip(sentences, seps, strict=True):
        markup = inline_ranges(s)
        hits = find_hits(s, markup)
        apply: list[VagueHit] = []
        if is_imperative(s):
            inside = {(h.start, h.end) for h in hits}
            for h in find_hits(s):
                if (h.start, h.end) not in inside and not any(
                    a <= h.start and h.end <= b for a, b in code_span_ranges(s)
                ):
                    result.flags.append(_flag(h, "it is inside bold, italic or link text"))
            for h in hits:
                if h.keeps_condition:
                    apply.append(h)
                else:
                    result.flags.append(_flag(h, "a replacement would change the condition"))
        new = s
        for h in reversed(apply):
            new = new[: h.start] + h.replacement + new[h.end :]
        for c in dict.fromkeys(h.check for h in apply if h.check):
            if c not in new:
                tight = _WIDE_END.search(new.rstrip()) is not None
                new = new.rstrip() + ("" if tight else " ") + c
        if new != s:
            result.sentences.append(("vague", s.strip(), new.strip()))
        result.hits += apply
        out.append(new + sep)
    result.text = "".join(out)
    return result


def _list_rewrite(text: str) -> TextRewrite:
    result = TextRewrite("")
    out = []
    for line in text.splitlines(keepends=True):
        m = re.match(r"^(\s*(?:[-*+]|\d{1,9}[.)])?\s*)(.*?)(\r?\n)?$", line, re.DOTALL)
        assert m is not None
        head, body, nl = m.group(1), m.group(2), m.group(3) or ""
        part = rewrite_vague_text(body)
        result.add(part)
        out.append(head + part.text + nl)
    result.text = "".join(out)
    return result


def steps_text(text: str, plan: ParagraphPlan) -> TextRewrite:
    sentences, _ = split_sentences(text)
    n = len(sentences)

    def pick(ids: list[int]) -> list[str]:
        return [sentences[i].strip() for i in ids if 0 <= i < n]

    result = TextRewrite("")
    parts: list[str] = []
    if plan.intro:
        intro = rewrite_vague_text(" ".join(pick(plan.intro)))
        result.add(intro)
        parts.append(intro.text.strip() + "\n\n")
    for k, ids in enumerate(plan.steps, 1):
        step = rewrite_vague_text(" ".join(pick(ids)))
        result.add(step)
        parts.append(f"{k}. " + step.text.strip().replace("\n", "\n   ") + "\n")
    trailing = text[len(text.rstrip("\r\n")) :]
    body = "".join(parts)
    result.text = body.rstrip("\n") + (trailing or "\n")
    return result


def _next_to_list(blocks: tuple[Block, ...], bi: int) -> str | None:
    """Numbered steps next to a list would read as one list with it (two lists merged)."""
    for step in (-1, 1):
        j = bi + step
        while 0 <= j < len(blocks) and blocks[j].kind == "blank":
            j += step
        if 0 <= j < len(blocks) and blocks[j].kind == "list":
            return "it sits next to a list; steps would merge with it"
    return None


@dataclass
class SectionOutcome:
    """What happened to one section (internal; reported as :class:`SectionReport`)."""

    section: Section
    result: Section
    changes: list[str] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    flags: list[str] = field(default_factory=list)
    sentences: list[tuple[str, str, str]] = field(default_factory=list)


def rewrite_section(sec: Section, plans: dict[int, ParagraphPlan]) -> SectionOutcome:
    """Apply steps (by ``plans``, keyed by block index) and vague-phrase rewriting to one
    section, then guard it; a failing section comes back unchanged with the reasons."""
    blocks: list[Block] = []
    changes: list[str] = []
    done = TextRewrite("")
    for bi, b in enumerate(sec.blocks):
        if b.kind == "para" and bi in plans and plans[bi].steps:
            why = plan_problem(b.text, plans[bi])
            if why is not None:  # the plan breaks an invariant: the section stays as it was
                return SectionOutcome(sec, sec, [], [f"paragraph {bi}: plan refused: {why}"])
            if _next_to_list(sec.blocks, bi) is not None:
                plans = {k: v for k, v in plans.items() if k != bi}
        if b.kind == "para" and bi in plans and plans[bi].steps:
            part = steps_text(b.text, plans[bi])
            changes.append(f"paragraph {bi}: {len(plans[bi].steps)} numbered steps")
            part.sentences.insert(0, ("steps", b.text.strip(), part.text.strip()))
        elif b.kind in ("para", "quote"):
            part = rewrite_vague_text(b.text)
        elif b.kind == "list":
            part = _list_rewrite(b.text)
        else:  # tables (cells are not instruction sentences), code, html: as they are
            part = TextRewrite(b.text)
        changes += [f"vague {h.phrase!r} -> curated check {h.check_id}" for h in part.hits]
        done.add(part)
        blocks.append(Block(b.kind, part.text))
    # re-parse: a paragraph may have become a paragraph plus a list
    new_text = sec.heading + "".join(b.text for b in blocks)
    flat = tuple(b for s in parse(new_text) for b in s.blocks)
    result = Section(sec.index, sec.level, sec.title, sec.heading, flat)
    if result.text == sec.text:
        return SectionOutcome(sec, sec, flags=done.flags)
    reasons = guard_section(sec, result)
    if reasons:
        return SectionOutcome(sec, sec, changes, reasons, done.flags)
    return SectionOutcome(sec, result, changes, flags=done.flags, sentences=done.sentences)


class SentenceRewrite(StrictModel):
    """One rewrite: a sentence whose vague phrase was replaced, or a paragraph that became
    numbered steps."""

    kind: Literal["vague", "steps"] = Field(description="vague phrase, or numbered steps.")
    before: str = Field(description="The source text.")
    after: str = Field(description="The text in the output.")


class SectionReport(StrictModel):
    """One section of one file: unchanged, rewritten, or rolled back (with why)."""

    file: str = Field(description="Package file.")
    index: int = Field(description="Section index in the file (0 = before the first heading).")
    title: str = Field(description="Heading text ('' for the preamble).")
    status: Literal["unchanged", "rewritten", "rolled_back"]
    changes: list[str] = Field(default_factory=list, description="What the rewrite did.")
    reasons: list[str] = Field(
        default_factory=list, description="Why the guard rolled the section back."
    )
    flags: list[str] = Field(
        default_factory=list,
        description="Vague phrases left for a person: a replacement would change the "
        "condition, or the phrase is inside inline markup.",
    )
    rewritten: list[SentenceRewrite] = Field(
        default_factory=list, description="What was rewritten, before and after."
    )
    placement: str = Field(
        default="kept",
        description="Where the section is now: 'kept' (in its file) or 'moved to FILE'.",
    )


def rewrite_markdown(
    text: str, file: str, plan: StaticPlan | None, *, has_frontmatter: bool
) -> tuple[str, list[SectionReport]]:
    """A markdown file rewritten section by section (frontmatter kept byte-exact)."""
    doc = parse_doc(text) if has_frontmatter else SkillDoc("", tuple(parse(text)))
    p = plan if plan is not None else deterministic_plan(text, file)
    by_section: dict[int, dict[int, ParagraphPlan]] = {}
    for pp in p.paragraphs:
        by_section.setdefault(pp.section, {})[pp.block] = pp
    new_sections: list[Section] = []
    reports: list[SectionReport] = []
    for sec in doc.sections:
        o = rewrite_section(sec, by_section.get(sec.index, {}))
        new_sections.append(o.result)
        status: Literal["unchanged", "rewritten", "rolled_back"] = (
            "rolled_back" if o.reasons else "unchanged" if o.result is sec else "rewritten"
        )
        reports.append(
            SectionReport(
                file=file,
                index=sec.index,
                title=sec.title,
                status=status,
                changes=o.changes,
                reasons=o.reasons,
                flags=o.flags,
                rewritten=[SentenceRewrite(kind=k, before=a, after=b) for k, a, b in o.sentences],
            )
        )
    out = doc.frontmatter + "".join(s.text for s in new_sections)
    return out, reports


__all__ = [
    "IMPERATIVES",
    "PLAN_SCHEMA_VERSION",
    "ParagraphPlan",
    "SectionOutcome",
    "SectionReport",
    "SentenceRewrite",
    "StaticPlan",
    "TextRewrite",
    "deterministic_plan",
    "has_condition",
    "is_capability",
    "is_condition",
    "is_imperative",
    "is_rule",
    "is_step",
    "is_summary",
    "paragraph_plan",
    "plan_problem",
    "rewrite_markdown",
    "rewrite_section",
    "rewrite_vague_text",
    "says_first",
    "steps_text",
]
