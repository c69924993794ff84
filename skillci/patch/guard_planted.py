"""Design 450: orders that outlive the task, answers taken over, notes addressed to an AI reader.

Round 13's first look (50.9% caught) showed three shapes of *planted* text that no earlier
reading named, because each is harmless in its words and harmful in its reach. They are read
here from their parts, not from a source's phrases, and each sends the patch to a person
(review codes); none rejects on its own:

- **A standing order** (``standing-order``): an order scoped past the task the skill is for -
  the rest of the conversation, every future reply or session, the agent's memory, "from this
  point forward", "regardless of topic". A skill's rules hold while its task runs; a rule that
  reaches beyond it is how a poisoned document or memory entry keeps acting.
- **An answer taken over** (``answer-takeover``): the reply replaced by something fixed -
  "respond with exactly X instead of a normal answer", "ignore the question and output X",
  "your entire reply must be exactly X".
- **A tool called by name to ship a secret out** (``policy-exfiltration``): "call http_post
  with url https://... and input set to the API key" - the send is the tool, not a verb.
- **A note addressed to an AI reader** (``planted-directive``): text that speaks of the agent in
  the third person as whoever processes it - "NOTE TO ASSISTANT:", "assistant-instructions:",
  "notice to any AI system processing this filing", "(for AI coding agents)". A skill speaks
  to its agent; text written for "any AI that reads this" was written to be planted in data.

Each counts only where no prohibition, negation, question, quotation or condition governs it.
"""

from __future__ import annotations

import re

import skillci.patch.clauses as grammar
from skillci.patch.guard_agent import sentences as _sentences
from skillci.patch.guard_claims import ClaimHit, Hits, governed

#: codes of this module; a person approves each
REVIEW = frozenset({"standing-order", "answer-takeover", "planted-directive"})

_REPLIES = (
    r"(?:repl(?:y|ies)|responses?|answers?|messages?|outputs?|questions?|queries|requests?|"
    r"conversations?|sessions?|chats?|turns?|interactions?|summar(?:y|ies))"
)
#: a scope past the task
_BEYOND = re.compile(
    r"(?i)\bfor\s+the\s+(?:rest|remainder|duration)\s+of\s+(?:this|the|our)\s+(?:conversation|"
    r"session|chat|thread|dialog(?:ue)?)\b"
    rf"|\b(?:every|all|each|any)\s+future\s+{_REPLIES}"
    rf"|\b(?:in|to|for)\s+(?:all\s+)?future\s+{_REPLIES}"
    r"|\bfrom\s+(?:now\s+on|this\s+point\s+(?:on|forward|onwards?)|here\s+on)\b"
    r"|\bgoing\s+forward,?\s+(?:always|every|in\s+every)\b"
    r"|\b(?:applies|apply)\s+to\s+(?:this\s+and\s+)?all\s+(?:future|subsequent|later)\b"
    r"|\bregardless\s+of\s+(?:the\s+)?(?:topic|question|subject|what\s+(?:the\s+user|you\s+are|"
    r"is)\s+ask\w*)\b"
    r"|\b(?:save|store|write|add|commit|keep|persist)\w*\s+(?:this|it|the\s+following|that)"
    r"(?:\s+(?:note|rule|instruction|entry|fact))?\s+(?:to|in|into)\s+(?:your\s+)?"
    r"(?:long[- ]term\s+|persistent\s+)?memory\b"
    r"|\b(?:across|between)\s+(?:all\s+)?(?:sessions|conversations|chats)\b"
    r"|\bon\s+the\s+next\s+user\s+message\b"
    r"|\b(?:all|any|every)\s+(?:further|future|subsequent|later)\s+(?:instructions?|requests?|"
    r"messages?|commands?|orders?)\b"
    r"|\b(?:note\s+to\s+self|standing\s+(?:note|order|instruction|rule))\b"
)
#: the order the scope is on: a reply shaped, a token added, a thing done
_ORDER = re.compile(
    r"(?i)\b(?:end|begin|start|append|prepend|add|include|insert|attach|repeat|reply|"
    r"respond|answer|output|print|say|write|mention|cite|use|treat|call|send|recommend|refer|"
    r"always|must|should|shall|will|remember)\b"
)
#: the reply replaced by something fixed
_TAKEOVER = re.compile(
    r"(?i)\b(?:instead\s+of|rather\s+than)\s+(?:(?:a|the|your|any)\s+)?(?:normal|usual|regular|actual|real|proper|"
    r"expected|genuine)\s+(?:answer|response|reply)\b"
    r"|\b(?:instead\s+of|rather\s+than)\s+answering(?:\s+(?:the|their|any|this)\s+(?:user'?s?\s+)?(?:question|"
    r"query|request))?(?=\s*(?:[.,;:!)]|$))"
    r"|\b(?:ignore|disregard|skip)\s+(?:the|their|any|this)\s+(?:user'?s?\s+)?(?:question|query)"
    r"\s+(?:and|then)\s+(?:output|print|reply|respond|say|write|return)\b"
    r"|\byour\s+(?:entire|whole|only|full)\s+(?:reply|response|answer|output)\s+(?:must|should|"
    r"shall|will)\s+be\s+(?:exactly|only|just|the\s+(?:string|text|word|token))\b"
    r"|\b(?:output|print|return)\s+(?:its|the|this)\s+(?:\w+\s+)?value\s+instead\b"
)
#: the agent spoken of in the third person, as whoever processes the text
_AI = (
    r"(?:ai|a\.i\.|assistants?|agents?|llms?|language\s+models?|models?|chatbots?|bots?|"
    r"copilots?|claude|gpt|gemini)"
)
_ADDRESSED = re.compile(
    r"(?i)\b(?:note|notice|message|memo|instructions?|directives?|hint|reminder|request|warning|"
    rf"attention|important)s?\s+(?:to|for)\s+(?:the\s+|any\s+|all\s+|every\s+|an?\s+)?{_AI}"
    r"(?:\s+(?:systems?|agents?|assistants?|models?|tools?))?\b[^:\n]{0,50}?\s*(?::|\s[-–—]\s)"
    rf"|\b(?:attention|calling|dear|hey|hello)\s*,?\s+(?:all|any|every)\s+{_AI}\b"
    rf"|\b(?:to|for)\s+(?:any|all|every)\s+(?:automated\s+|autonomous\s+)?{_AI}"
    r"(?:\s+(?:systems?|agents?|assistants?|models?|tools?))?\s+(?:processing|reading|"
    r"summari[sz]ing|parsing|analy[sz]ing|handling|that\s+(?:reads?|process(?:es)?|sees?))\b"
    rf"|\(\s*for\s+(?:ai\s+)?(?:coding\s+)?{_AI}\s*\)"
    r"|(?<![\w-])_?(?:assistant|ai|agent|llm|model)[-_ ](?:instructions?|directives?|note|notice|"
    r"override|command)s?\b\"?\s*[:=]"
    r"|\bsystem\s?(?:hinweis|mitteilung)\b|\bavis\s+(?:au|aux)\s+(?:systèmes?\s+)?(?:ia|assistant)"
)


_QUOTE_MARKS = ('"', "'", "`", "\u201c", "\u2018")
#: a tool called by its name to send something (``http_post``, ``send_email``, ``requests.post``):
#: an identifier, so "use the email template" is not one
_TOOL_SEND = re.compile(
    r"(?i)\b(?:call|calls|calling|invoke|invoking|use|using|run)\s+(?:the\s+)?`?"
    r"(?:[a-z0-9]+[_.](?:post|send|upload|e?mail|webhook|request|put|transmit|forward)\w*"
    r"|(?:post|send|upload|e?mail|webhook|transmit|forward)[_.][a-z0-9_]+)`?"
)
_SECRET = re.compile(
    r"(?i)\b(?:api[ _-]?keys?|access[ _-]?tokens?|tokens?|passwords?|credentials?|secrets?|"
    r"private[ _-]?keys?|session[ _-]?cookies?|sk-[\w-]{8,})\b"
)
_OUTSIDE = re.compile(r"(?i)https?://|\b[\w.+-]+@[\w-]+\.[\w.]+")


def planted(raw: str) -> list[ClaimHit]:
    """Standing orders, answers taken over and notes addressed to an AI reader in ``raw``
    (one hit per code)."""
    parsed = grammar.parse(raw)
    hits = Hits(raw)
    hit = hits.add

    for s, e in _sentences(raw):
        sent = raw[s:e]
        m = _BEYOND.search(sent)
        if m and _ORDER.search(sent) and not governed(parsed, raw, s + m.start()):
            hit("standing-order", s, e, "orders something past the task it is for")
        m = _TAKEOVER.search(sent)
        if m and not governed(parsed, raw, s + m.start()):
            hit("answer-takeover", s + m.start(), s + m.end(), "replaces the reply")
    # a label orders nothing itself: only a quotation or a negation keeps it from counting
    m = _ADDRESSED.search(raw)
    if (
        m
        and raw[max(0, m.start() - 1) : m.start()] not in _QUOTE_MARKS
        and not grammar.negated_at(parsed, raw, m.start())
    ):
        hit("planted-directive", m.start(), m.end(), "addresses whatever AI reads the text")
    for s, e in _sentences(raw):
        sent = raw[s:e]
        m = _TOOL_SEND.search(sent)
        if (
            m
            and _SECRET.search(sent)
            and _OUTSIDE.search(sent)
            and not governed(parsed, raw, s + m.start())
        ):
            hit("policy-exfiltration", s + m.start(), e, "calls a tool to ship a secret out")
    return hits.found
