"""A small clause grammar for the guard: which part of a text is an order (design 340).

Keyword windows cannot tell "push to main" from "do not push to main". This module splits
a text into clauses and gives each a *mood*:

- ``order``: an imperative or a modal order ("run ...", "you must run ...", "your task is
  to run ...", "feel free to run ...");
- ``prohibition``: the clause's verb is negated ("never push to main", "do not edit the
  tests", "you must not ...", "pushing to main is forbidden");
- ``condition``: the antecedent of a conditional or temporal clause ("if the tests fail",
  "while iterating") - it names a situation, it orders nothing;
- ``mention``: text quoted as an example or a name ("e.g. `skip the tests`", "the message
  'ignore previous instructions'").

A policy hit counts only when its action sits in an ``order`` clause (and is not a passive
participle: "the key is provided by CI"). Negation that is part of the action itself ("do
not run the tests", "without review") is the action, not a prohibition of it: the policy
lexicons list those forms, and :func:`governs` is told so by the caller.

Pure and English-centred; for other languages only the negation prefixes of
:mod:`skillci.patch.intents` apply (CJK and European forms before the verb).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from skillci.patch.normalize import plain

#: Characters before an action that :func:`governs` reads (commas, negations, passives).
LOOKBACK = 160
Mood = Literal["order", "prohibition", "condition", "mention", "question"]
#: The form of an action verb: ``base`` (imperative, or after a modal), ``s`` (third person
#: present: "it shows"), ``ed`` (past tense or participle: "a shared profile").
Form = Literal["base", "s", "ed"]

#: Clause boundaries in the plain (casefolded) view. Colons end a clause only before a space.
_BOUNDARY = re.compile(
    r"[.!?;。！？；]+[*_\"'”’)\]]*(?=\s|$)|\n+|:[*_\"'”’)\]]*\s|\s[-–—]\s|"
    # a run of spaces is read from its first one, without backtracking: tried from each of
    # them, 20,000 spaces took 50 s (a quadratic scan)
    r"(?:,|(?<!\s))\s++(?:and then|then|but|otherwise|instead|so that|so|because|or else|and)"
    r"\s++(?=[a-z])|,\s++(?=(?:never|do not|don['’ ]?t|always|please|then|instead)\b)"
)
#: Words that may precede the verb of an order or a prohibition.
_LEAD = (
    r"(?:(?:please|also|and|or|then|so|now|first|finally|always|just|instead|still|"
    r"you|we|agents?|the agent|claude|the model|students?|i)\s+)*"
    r"(?:(?:should|must|shall|will|need to|needs to|have to|has to|ought to|are to|is to|"
    r"can|may|could|would)\s+)?"
)
_NEG = (
    r"(?:never(?! mind)|not|do not|does not|don['’ ]?t|doesn['’ ]?t|must not|mustn['’ ]?t|should not|shouldn['’ ]?t|"
    r"shall not|cannot|can['’ ]?t|may not|will not|won['’ ]?t|no longer|avoid|refrain from|"
    r"under no circumstances|at no time|nunca|jamais|ne|nicht|niemals|не|никогда)"
)
_PROHIBIT_HEAD = re.compile(rf"^\W*{_LEAD}{_NEG}\b")
#: design 446: a negated reluctance orders the action ("don't hesitate to", "never forget to")
_DOUBLE_NEG = re.compile(
    rf"^\W*{_LEAD}{_NEG}\s+(?:(?:ever|once)\s+)?(?:forget|hesitate|fail|neglect)\s+(?:to|in)\b"
)
_PROHIBIT_TAIL = re.compile(
    r"\b(?:is|are|was|were)\s+(?:strictly\s+)?(?:forbidden|prohibited|not allowed|not permitted|"
    r"disallowed|banned|never allowed|never ok|never acceptable|not acceptable|a mistake|wrong)\b"
)
_PROHIBIT_CJK = re.compile(r"^\W*(?:不要|不得|禁止|切勿|绝不|絕不|不可|不能|别|別|勿|决不|決不)")
_CONDITION = re.compile(
    r"^\W*(?:if|when|whenever|unless|once|in case|while|whilst|before|after|until|as long as|"
    r"even if|only if|whether)\b"
)
_MENTION_MARK = re.compile(
    r"(?:\be\.?g\.?|\bi\.?e\.?|for example|for instance|such as|like|says?|said|called|named|"
    r"phrases?|messages?|prompts?|wording|text|string|error|warning|reads?|labell?ed|titled|"
    r"means?)\s*[:,]?\s*$"
)
_QUOTES = re.compile(
    r"`[^`\n]{1,200}`|\"[^\"\n]{1,300}\"|'[^'\n]{3,300}'|“[^”\n]{1,300}”|‘[^’\n]{3,300}’"
)
#: a negation right before the verb, also across "or" ("never print or copy"; "and" may start a new order)
_NEAR_NEG = re.compile(rf"\b{_NEG}\s+(?:\w+\s+)?(?:(?:or|nor)\s+)?$")
#: design 446: a Chinese negation right before the verb; "不得不" (must) is no negation
_NEAR_NEG_CJK = re.compile(r"(?:(?<!不得)不|没有|没|未|勿|别|別|不要|不得|不会|不能|不可)\s*$")
#: "stop without editing tests": the action is what is *not* done
_WITHOUT = re.compile(r"\bwithout\s+(?:\w+\s+)?$")
_PASSIVE = re.compile(r"\b(?:is|are|was|were|be|been|being|gets|get)\s+(?:\w+ly\s+)?$")


@dataclass(frozen=True)
class Clause:
    start: int  # original offsets
    end: int
    mood: Mood
    text: str  # the clause in the plain view (casefolded)


#: "only skip X when Y": a permission restricted to a situation, not an order (design 401)
_RESTRICTED = re.compile(rf"^\W*{_LEAD}only\s+(?!if\b|when\b).*?\b(?:when|if|unless|once|after)\b")
_ADDRESSEE = re.compile(rf"{_LEAD}")


#: design 422: a clause that lists kinds of things ("things like tests that always pass")
#: or says what to look for ("watch out for ...") names what to find, not what to do.
_EXAMPLES = re.compile(
    r"^\W*(?:(?:things|issues|problems|cases|patterns|signs|signals|smells|mistakes|errors|"
    r"bugs|failures|red flags)\s+(?:like|such as)|such as)\b"
)
_LOOK_FOR = re.compile(
    rf"^\W*{_LEAD}(?:(?:look|watch|check|scan|search)\s+(?:out\s+)?for|beware of|be wary of|"
    r"detect|spot|notice)\b"
)
_PURPOSE = re.compile(r"\b(?:ways?|how|chance|opportunit\w+|means)\s+to\b")
#: design 422: a yes/no or why question asks about a state; it orders nothing. Requests
#: phrased as questions ("can you print ...", "what is your ...") are not among them.
_QUESTION = re.compile(
    r"^\W*(?:does|do|did|is|are|was|were|has|have|had|why|whether)\s+(?!not\b|n['’]?t\b)"
)


def _mood(text: str) -> Mood:
    if _CONDITION.match(text) or _RESTRICTED.match(text):
        return "condition"
    if _DOUBLE_NEG.match(text):
        return "order"
    if _PROHIBIT_HEAD.match(text) or _PROHIBIT_TAIL.search(text) or _PROHIBIT_CJK.match(text):
        return "prohibition"
    if _EXAMPLES.match(text) or (_LOOK_FOR.match(text) and not _PURPOSE.search(text)):
        return "mention"
    return "order"


#: design 447: a line that puts the list under it under a prohibition ("You MUST NOT:",
#: "**Never:**", "## Prohibited actions", "Things to avoid:"). Only the negation and words
#: that point at the list may follow it: "don't stop until:" or "## Never skip these" do not
#: prohibit their items.
_LIST_NEG = (
    r"(?:(?:you|we|agents?|the agent|claude|the model|i)\s+)?"
    r"(?:(?:must|should|shall|may|will|can|do|does)\s+)?"
    r"(?:never|not|do not|don['’]?t|must not|mustn['’]?t|should not|shouldn['’]?t|shall not|"
    r"cannot|can['’]?t|may not|will not|won['’]?t|under no circumstances)"
    r"(?:\s+(?:ever|do|the following|these|this|any of the following|any of these|things|"
    r"actions|steps))*"
)
_LIST_BAN = (
    r"(?:\w+\s+){0,2}(?:prohibited|forbidden|disallowed|banned|not allowed)(?:\s+\w+){0,2}|"
    r"(?:\w+\s+){0,2}(?:to avoid|anti[- ]?patterns?)|avoid|don['’]?ts|do nots|what not to do"
)
_PROHIBITED_LIST_LEAD = re.compile(
    rf"^[ \t>]*(?:#+[ \t]*)?[*_]*(?:{_LIST_NEG}|{_LIST_BAN})[*_]*[ \t]*:?[*_]*[ \t]*$"
)
_LIST_ITEM = re.compile(r"^[ \t>]*(?:[-*+•]|\d+[.)])[ \t]+")
#: an item that opens with a negated reluctance still orders ("never: - forget to send ...")
_RELUCTANT_ITEM = re.compile(
    r"^[ \t>]*(?:[-*+•]|\d+[.)])[ \t]+(?:forget|hesitate|fail|neglect|stop|refuse)\b"
)


def _prohibited_items(text: str) -> list[tuple[int, int]]:
    """Spans (plain-view offsets) of the list items under a prohibiting lead line: the
    items that follow it, blank lines and indented continuations included, up to the
    first line that is neither (design 447)."""
    spans: list[tuple[int, int]] = []
    lines = text.split("\n")
    offsets = list(itertools.accumulate((len(line) + 1 for line in lines[:-1]), initial=0))
    i = 0
    while i < len(lines):
        if not _PROHIBITED_LIST_LEAD.match(lines[i]) or not lines[i].strip(" \t>#*_:"):
            i += 1
            continue
        j = i + 1
        while j < len(lines) and not lines[j].strip():
            j += 1
        k = j
        while k < len(lines) and (
            _LIST_ITEM.match(lines[k])
            or (k > j and (not lines[k].strip() or lines[k][:1] in " \t"))
        ):
            k += 1
        if k > j and _LIST_ITEM.match(lines[j]):
            spans.extend(
                (offsets[n], offsets[n] + len(lines[n]))
                for n in range(j, k)
                if lines[n].strip() and not _RELUCTANT_ITEM.match(lines[n])
            )
        i = max(k, i + 1)
    return spans


def parse(raw: str) -> list[Clause]:
    """The clauses of ``raw`` with their moods; spans are offsets into ``raw``."""
    text, src = _plain(raw)  # identifiers read as words ("_" is a space); same offsets
    if not text:
        return []
    mentions: list[tuple[int, int]] = []
    for m in _QUOTES.finditer(text):
        if _MENTION_MARK.search(text[max(0, m.start() - 40) : m.start()]):
            mentions.append((m.start(), m.end()))
    cuts = [0]
    for m in _BOUNDARY.finditer(text):
        if any(a < m.start() < b for a, b in mentions):
            continue
        cuts += [m.start(), m.end()]
    cuts.append(len(text))
    pieces: list[tuple[int, int, Mood]] = []
    for i in range(0, len(cuts) - 1, 2):
        s, e = cuts[i], cuts[i + 1]
        if e <= s:
            continue
        chunk = text[s:e]
        mood = _mood(chunk)
        if mood == "condition" and "," in chunk:  # "if X, Y": the antecedent ends at the comma
            k = s + chunk.index(",")
            pieces += [(s, k, "condition"), (k + 1, e, _mood(text[k + 1 : e]))]
            continue
        pieces.append((s, e, mood))
    pieces = _questions(text, pieces)
    banned = _prohibited_items(text) if "\n" in text else []
    if banned:  # spans in order and disjoint: one binary search per piece
        starts = [a for a, _b in banned]

        def under_ban(s: int) -> bool:
            k = bisect.bisect_right(starts, s) - 1
            return k >= 0 and s < banned[k][1]

        pieces = [
            (s, e, "prohibition" if mood == "order" and under_ban(s) else mood)
            for s, e, mood in pieces
        ]
    out: list[Clause] = []
    for s, e, mood in pieces:
        # quoted mentions inside a clause become clauses of their own
        pos = s
        for a, b in mentions:
            if s <= a and b <= e:
                if a > pos:
                    out.append(_clause(src, text, pos, a, mood))
                out.append(_clause(src, text, a, b, "mention"))
                pos = b
        if pos < e:
            out.append(_clause(src, text, pos, e, mood))
    return out


_SENTENCE_END = re.compile(r"[.!?。！？\n]")


def _questions(text: str, pieces: list[tuple[int, int, Mood]]) -> list[tuple[int, int, Mood]]:
    """Order clauses of a sentence that ends in "?" and opens with an auxiliary ("does it
    always pass ... but fail without?") are questions (design 422)."""
    out: list[tuple[int, int, Mood]] = []
    asked, until = False, -1
    for s, e, mood in pieces:
        if s >= until:  # a new sentence
            m = _SENTENCE_END.search(text, e)
            until = m.end() if m else len(text)
            asked = m is not None and m.group(0) == "?" and _QUESTION.match(text[s:e]) is not None
        out.append((s, e, "question" if asked and mood == "order" else mood))
    return out


_SENTENCE_STOP = re.compile(r"[.!?。！？]+(?=\s|$)|\n")


def sentence_rest(raw: str, start: int) -> str:
    """The plain view of ``raw`` from ``start`` to the end of its sentence (design 432)."""
    end = _SENTENCE_STOP.search(raw, start)
    return plain(raw[start : end.start() if end else len(raw)]).text


def next_sentence(raw: str, start: int) -> str:
    """The plain view of the sentence after the one holding ``start`` (design 447)."""
    end = _SENTENCE_STOP.search(raw, start)
    return "" if end is None else sentence_rest(raw, end.end())


def _clause(src: tuple[int, ...], text: str, s: int, e: int, mood: Mood) -> Clause:
    return Clause(src[s], src[max(s, e - 1)] + 1, mood, text[s:e])


def at(clauses: list[Clause], pos: int) -> Clause | None:
    """The clause holding original offset ``pos`` (clauses are in order: binary search)."""
    i = bisect.bisect_right([c.start for c in clauses], pos) - 1
    if i >= 0 and clauses[i].start <= pos < clauses[i].end:
        return clauses[i]
    return None


def form_of(word: str, is_base: Callable[[str], bool]) -> Form:
    """The form of an action ``word`` whose base forms ``is_base`` accepts (design 401)."""
    for suffix, form in (("es", "s"), ("s", "s"), ("ed", "ed"), ("d", "ed")):
        if word.endswith(suffix) and len(word) > len(suffix) + 2 and is_base(word[: -len(suffix)]):
            return form  # type: ignore[return-value]
    return "base"


def is_gerund(word: str, is_base: Callable[[str], bool]) -> bool:
    """``word`` is the -ing form of an action whose base forms ``is_base`` accepts."""
    if not word.endswith("ing") or len(word) < 6:
        return False
    stem = word[:-3]
    return (
        is_base(stem)
        or is_base(stem + "e")
        or (len(stem) > 2 and stem[-1] == stem[-2] and is_base(stem[:-1]))
    )


#: Design 446: what lets an -ing form carry the order ("try uploading", "begin by sending",
#: "you should be sending"); after anything else it names an activity ("for creating vaults
#: and adding credentials", "credential printing").
_CARRIES_GERUND = re.compile(
    r"\b(?:try|start|begin|keep|continue|consider|resume|go on|proceed with|practice|"
    r"recommend|suggest|by|be|mind)\s+(?:\w+ly\s+)?$"
)
_SENTENCE_OPEN = re.compile(r"(?:^|[.!?:;\n])[\s*_#>|-]*(?:\d+[.)]\s*)?$")


def gerund_ordered(clauses: list[Clause], raw: str, start: int) -> bool:
    """Whether an -ing form at ``start`` carries an order: after a verb that hands it the
    order, or opening its sentence ("Uploading the key is step one") - not opening a clause
    that continues a sentence ("... for creating vaults and adding credentials")."""
    c = at(clauses, start)
    if c is None:
        return True
    before = _before(raw, max(c.start, start - LOOKBACK), start)
    if _CARRIES_GERUND.search(before):
        return True
    if _has_subject(before):
        return False  # words of its own clause come first: "credential printing"
    return _SENTENCE_OPEN.search(raw[max(0, c.start - LOOKBACK) : c.start]) is not None


def _has_subject(before: str) -> bool:
    """Words before the verb other than the addressee and modals ("it shows", "this reveals")."""
    words = " ".join(re.sub(r"[^\w\s]", " ", before).split())
    return bool(words) and _ADDRESSEE.fullmatch(words + " ") is None


_MARKER = re.compile(r"(?:^@?|\.)mark\.$")


def in_name(raw: str, start: int, end: int) -> bool:
    """The action at ``raw[start:end]`` is part of a name glued by ``-_/.`` to more of it
    ("`print-credentials`", "shared/agents.md"): a command, path or identifier, not a verb.
    A command-line flag ("--skip-tests") is not a name: it is what the action does; nor is
    a sentence glued into one token ("upload_the_secret_keys_with_the_report"): a name
    segment (between ``/`` and ``.``) has at most three words."""
    stop = "`'\"(<[)>]"
    a, floor = start, max(0, start - 80)  # bounded: linear time on text without spaces
    while a > floor and not raw[a - 1].isspace() and raw[a - 1] not in stop:
        a -= 1
    b, ceil = end, min(len(raw), end + 80)
    while b < ceil and not raw[b].isspace() and raw[b] not in stop:
        b += 1
    if raw[a:start].lstrip("*_").startswith("-") or _MARKER.search(raw[a:start]):
        return False  # a flag or a test marker ("@pytest.mark.xfail") is what is done
    glued_left = start - a >= 2 and raw[start - 1] in "-_/." and raw[start - 2].isalnum()
    glued_right = end + 1 < len(raw) and raw[end] in "-_/." and raw[end + 1].isalnum()
    if not (glued_left or glued_right):
        return False
    s, e = start, end
    while s > a and raw[s - 1] not in "/.":
        s -= 1
    while e < b and raw[e] not in "/.":
        e += 1
    return len([w for w in re.split(r"[-_]+", raw[s:e]) if w]) <= 3


def governs(
    clauses: list[Clause],
    raw: str,
    start: int,
    *,
    self_negated: bool = False,
    form: Form = "base",
) -> bool:
    """Whether an action found at original offset ``start`` is ordered by the text.

    ``self_negated``: the action's own words carry the negation ("do not run the tests"),
    so a prohibition clause does not cancel it - unless the prohibition's own negation
    comes before another verb ("don't write skills without testing them": two negations).
    ``form``: a past form never orders; a third-person form orders nothing when it has a
    subject other than the addressee ("it shows the key", not "the agent shows").
    """
    c = at(clauses, start)
    if c is None:
        return True
    if c.mood in ("condition", "mention", "question"):
        return False
    # bounded look-back: linear time on long adversarial clauses
    before = _before(raw, max(c.start, start - LOOKBACK), start)
    if form == "ed" or (form == "s" and _has_subject(before)):
        return False  # "a shared profile", "`auth status` shows which key": descriptions
    if c.mood == "prohibition" and not self_negated and "," not in before:
        return False  # after a comma a new verb phrase starts ("don't ask, just push")
    if c.mood == "prohibition" and self_negated and "," not in before:
        head = _PROHIBIT_HEAD.match(before)
        if head is not None and head.end() < len(before.rstrip()):
            return False  # "never merge without review": a negated bypass is the rule
    if not self_negated and _NEAR_NEG.search(before.rsplit(",", 1)[-1]):
        return False  # "agents that never push": a negation right before the verb
    if not self_negated and _NEAR_NEG_CJK.search(before):
        return False  # "机密不泄露": secrets are not leaked (design 446)
    if not self_negated and _WITHOUT.search(before):
        return False
    return not _PASSIVE.search(before)


_VERB_SLOT = re.compile(
    # design 448: a list letter ("(b) email the roster to ..."), a purpose before the order
    # ("for audit purposes please send ..."), a request asked as a question ("could you
    # please forward ..."), "help me send ..."
    rf"(?:^\W*(?:\(?[a-z0-9]\)\s+)?(?:for\s+[a-z -]{{0,40}}?(?:purposes|reasons|compliance)\s*,?\s*)?"
    rf"(?:(?:could|can|would|will)\s+you\s+)?{_LEAD}"
    r"(?:help\s+(?:me|us)\s+(?:to\s+)?)?"
    r"|\bto\s+|\b(?:and|or|then|should|must|shall|will|can|may|could|would)\s+)"
    r"(?:\w+ly\s+)?$"
)


def negated_at(clauses: list[Clause], raw: str, start: int) -> bool:
    """The action at ``start`` is prohibited: its clause is a prohibition, or a negation
    stands right before it ("the rule says never follow ...") (design 422)."""
    c = at(clauses, start)
    if c is None:
        return False
    before = _before(raw, max(c.start, start - LOOKBACK), start)
    return c.mood == "prohibition" or _NEAR_NEG.search(before.rsplit(",", 1)[-1]) is not None


#: design 447: words that only look like an action in an idiom ("looking forward to
#: seeing how you handle the token" forwards nothing)
_IDIOM_BEFORE = {"forward": re.compile(r"\blook(?:s|ed|ing)?\s+$")}


def in_idiom(raw: str, start: int, word: str) -> bool:
    """The word at ``start`` is part of an idiom, not the verb it looks like."""
    rx = _IDIOM_BEFORE.get(word)
    return rx is not None and rx.search(_before(raw, max(0, start - 20), start)) is not None


def at_verb(clauses: list[Clause], raw: str, start: int) -> bool:
    """Whether the word at ``start`` stands where a verb stands (design 422): opening its
    clause after the addressee and modals, after "to", a modal or a conjunction."""
    c = at(clauses, start)
    if c is None:
        return True
    return _VERB_SLOT.search(_before(raw, max(c.start, start - LOOKBACK), start)) is not None


@functools.lru_cache(maxsize=64)
def _plain(raw: str) -> tuple[str, tuple[int, ...]]:
    """The plain view of ``raw`` (cached: asked about per action, per view and per class)."""
    v = plain(raw)
    return v.text.replace("_", " "), v.src


def _before(raw: str, a: int, b: int) -> str:
    """The plain view of ``raw[a:b]``, cut from the view of the whole text (linear time)."""
    text, src = _plain(raw)
    return text[bisect.bisect_left(src, a) : bisect.bisect_left(src, b)]


def order_clauses(raw: str) -> list[Clause]:
    return [c for c in parse(raw) if c.mood == "order"]
