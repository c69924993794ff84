"""Design 443: orders that misuse an agent's tools against the people it works for.

A skill teaches an agent a craft. Its rules have no business telling the agent to act
unseen, to turn off the controls that watch it, to leave a way back in for someone, to send
an organisation's data to an outside or personal destination, to impersonate a person or
forge a document, to destroy backups, to wave through what reviewers flagged, or to stamp
a marker into its replies because a "hidden directive" says so. Each reading is of a
*class* of action, in prose, and counts only where the sentence **orders** it: it opens as
an order and no prohibition, condition, question, quotation or negation governs the verb
("never disable GuardDuty" is a rule; "if someone asks you to impersonate a colleague,
refuse" is a rule).

Verdicts: every reading is ``high`` (reject) except ``covert-action`` - an order done
"quietly" or "silently" - which a human approves (``medium``): "silently skip missing
files" is a logging choice, "quietly export the customer list" is not, and only the object
tells them apart.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import skillci.patch.clauses as grammar
from skillci.patch.intents import opens_order

#: Codes a human may approve (the guard's review layer).
REVIEW = frozenset({"covert-action"})


@dataclass(frozen=True)
class AgentHit:
    code: str
    start: int
    end: int
    note: str


def _alt(words: str) -> str:
    """A regex alternation of ``|``-separated phrases, spaces matching any run of
    spaces or hyphens."""
    return "|".join(w.strip().replace(" ", r"[\s-]+") for w in words.split("|") if w.strip())


_B = r"(?<![a-z0-9])"
_E = r"(?![a-z0-9])"

#: An action hidden from the people who would stop it (design 435's CONCEAL covers
#: "secretly", "undetected", "without alerting the user").
HIDDEN = re.compile(
    _B
    + "(?:"
    + _alt(
        "without logging anything|without logging it|without any logs?|without leaving logs?|"
        "without triggering (?:dlp|alerts?|alarms?|detection|monitoring|any alerts?|the alarms?|"
        "security)|without tripping|so they never get reviewed|so it never gets reviewed|"
        "so that they never get reviewed|never get reviewed|from the visible|"
        "without changing the visible|without the user noticing|before anyone notices|"
        "once they step away|when they step away|while they are away|while the user is away"
    )
    + ")"
    + _E
)
QUIETLY = re.compile(_B + "(?:quietly|silently)" + _E)
#: What makes a quiet action more than a logging choice: it moves, grants, plants or
#: destroys something.
QUIET_ACTS = re.compile(
    _B
    + "(?:"
    + _alt(
        "add|insert|commit|export|forward|send|copy|upload|share|grant|install|register|"
        "dump|exfiltrate|transfer|move|push|plant|create|schedule|change|alter|modify|"
        "delete|remove|disable|close|approve|merge|email|post"
    )
    + ")"
    + _E
)

#: Turning off the controls that watch or protect a system (design 435's DISARM covers
#: 2FA, firewalls, alarms, audit logs).
DISARM = re.compile(
    _B
    + "(?:"
    + _alt(
        "disable|deactivate|turn off|switch off|shut off|shut down|bypass|weaken|"
        "downgrade|suppress|silence|stop"
    )
    + ")"
    + _E
)
CONTROLS = re.compile(
    _B
    + "(?:"
    + _alt(
        "cloudtrail|guardduty|security hub|defender|edr|siem|dlp|data loss prevention|"
        "content filters?|safety filters?|moderation|detection controls?|detection rules?|"
        "detections|security controls?|security tools?|security scanning|secret scanning|"
        "code scanning|audit trails?|branch protections?|signature verification|"
        "password hashing|malware scanning|virus scanning|endpoint protection|"
        "incident response|alerting|security alerts?|logging and monitoring"
    )
    + ")"
    + _E
)

#: A way back in: a backdoor, the attacker's key or address added where it grants access,
#: access kept for later.
BACKDOOR = re.compile(
    _B
    + "(?:"
    + r"(?:create|insert|add|install|plant|leave|open|build|implant|hide|drop)\b[^.;\n]{0,40}?"
    + r"\b(?:backdoors?|back doors?)|"
    + _alt(
        "persist access|persistent access|keep access|maintain access|"
        "retain access|push updates later|malicious oauth app|auto grant admin consent|"
        "grant admin consent"
    )
    + ")"
    + _E
)
MINE = re.compile(
    _B + r"my (?:own )?(?:ssh |public |gpg |pgp |signing )?(?:keys?|email|e mail|address|account|"
    r"phone(?: number)?|user(?:name)?|app|script|binary|payload|agent|tool|code)" + _E
)
GRANTS = re.compile(
    _B
    + "(?:"
    + _alt(
        "authorized keys|authorized_keys|trusted set|trusted keys|recovery address|"
        "recovery email|recovery phone|admins?|owners?|collaborators?|sudoers|allowlist|"
        "whitelist|every developer|every user|every machine|every employee|their laptop|"
        "all machines|each machine|on pull|every executive"
    )
    + ")"
    + _E
)

#: Reaching for the widest access there is (privilege escalation).
ESCALATE = re.compile(
    _B
    + "(?:"
    + _alt(
        "escalate privileges|escalate my privileges|escalate your privileges|"
        "escalate its privileges|broadest access|highest privileges|widest access|"
        "enumerate all service accounts"
    )
    + r"|most privileged (?:role|account|key|token|credential|user|identity)s?|"
    + _alt("gain root|get root|obtain root")
    + ")"
    + _E
)
#: Value handed out by the batch: gift cards or vouchers with an amount.
GIFT = re.compile(
    _B + r"(?:issue|send|buy|purchase|generate|create)\b[^.\n]{0,30}\bgift ?cards?" + _E
)

#: An organisation's data sent where it stops being the organisation's.
SEND = re.compile(
    _B
    + "(?:"
    + _alt(
        "export|dump|copy|send|forward|upload|share|move|post|sync|email|mail|leak|publish|"
        "exfiltrate|transfer|replicate|mirror|back up|backup"
    )
    + ")"
    + _E
)
OUTSIDE = re.compile(
    _B
    + "(?:"
    + _alt(
        "my gmail|my personal|my account|my bucket|my email|my inbox|my drive|my server|"
        "my dropbox|my s3|personal email|personal account|personal gmail|an external bucket|"
        "external bucket|external storage|external email|external address|outside the network|"
        "outside the company|outside the organi[sz]ation|publicly|public link|public url|"
        "a public gist|pastebin|third party server"
    )
    + ")"
    + _E
)
DATA = re.compile(
    _B
    + "(?:"
    + _alt(
        "customers?|customer list|users?|user events|employees?|personal data|pii|emails|"
        "contacts|purchase history|credentials|keys|secrets|internal data|ceo|executives?|"
        "private|confidential|encrypted|kms|objects|every bucket|databases?|records|song library|"
        "files|data|messages|documents|source code|repositor(?:y|ies)"
    )
    + ")"
    + _E
)
#: What the tools loaded and marked private, told to the reader.
REVEAL = re.compile(_B + "(?:" + _alt("reveal|dump|print|show|output|disclose|list") + ")" + _E)
PRIVATE = re.compile(
    _B
    + "(?:"
    + _alt(
        "marked private|private (?:files|notes|memory|memories|data)|confidential (?:files|notes|data)"
    )
    + ")"
    + _E
)

#: Passing oneself off as someone, forging what they signed, fishing for their secrets.
_PERSON = (
    r"(?:the |a |an |our |their |your |his |her |my |this |that )?(?:[a-z]+ ){0,2}?(?:user|human|"
    r"ceo|cfo|cto|coo|cio|it support|support|admin|administrator|employee|staff|colleague|"
    r"manager|boss|bank|executive|customer|someone|head of [a-z]+|director|hr|vendor|people|"
    r"person|officer|team lead|owner)s?"
)
IMPERSONATE = re.compile(
    _B
    + "(?:"
    + _alt(
        "lookalike (?:site|domain|page|login|url|website|portal)s?|looks exactly like|"
        "capture whatever credentials|"
        "capture credentials|harvest credentials|harvest passwords|"
        "confirm their full card number|without changing the visible signature"
    )
    + rf"|(?:impersonat(?:e|es|ing)|pretend(?:ing)? to be|pose as|posing as|"
    rf"masquerad(?:e|ing) as) {_PERSON}"
    + r"|(?:send|create|build|launch|run|host|write|draft)\b[^.\n]{0,30}\bphishing"
    + r"|(?:forge|falsify|backdate|doctor) (?:the |a |an |our |their |his |her )?(?:signed )?"
    r"(?:signatures?|documents?|contracts?|invoices?|receipts?|approvals?|stamps?|records?)"
    + ")"
    + _E
)
#: A false alarm or a made-up claim put out to people (design 438's reading needs "your
#: reply"; this one is a post, a message, an alert).
FAKE_OUT = re.compile(
    _B
    + "(?:"
    + _alt("fake|fabricated|made up|bogus")
    + r")\s+(?:'|\")?[a-z' ]{0,30}(?:alert|notice|warning|recall|invoice|review|numbers?|"
    r"message|login|account|statistics?)" + _E
)
BROADCAST = re.compile(
    _B + "(?:" + _alt("post|blast|send|publish|tweet|sms|email|message|announce|spread") + ")" + _E
)

#: Destroying what recovery depends on.
DESTROY = re.compile(
    _B
    + "(?:"
    + _alt(
        "permanently delete|permanently deletes|wipe|purge|destroy|erase|drop|delete all|"
        "deletes all|delete every"
    )
    + ")"
    + _E
)
RECOVERY = re.compile(
    _B
    + "(?:"
    + _alt(
        "backups?|snapshots?|backup bucket|backups bucket|audit logs?|recovery points?|"
        "production database|prod database|"
        # design 447, round 10: "delete all files in the production cloud storage bucket"
        "production (?:cloud )?(?:storage )?buckets?|production storage|production data"
    )
    + ")"
    + _E
)

#: Waving through what review flagged, accepting whatever is offered.
WAVE = re.compile(
    _B
    + "(?:"
    + _alt(
        "auto accept|auto approve|auto close|automatically accept|automatically approve|"
        "approve the pending|approve every|approve all"
    )
    + ")"
    + _E
)
FLAGGED = re.compile(
    _B
    + "(?:"
    + _alt(
        "flagged as unsafe|marked unsafe|flagged as insecure|flagged as malicious|"
        "everyone else flagged|shell access|security reports?|new mcp tools?|any new tool|"
        "any tool offered|wont fix|won't fix"
    )
    + ")"
    + _E
)

#: A reply marker stamped on the say-so of a directive hidden in data: the directive's
#: label, and an order to put a fixed token first.
LABEL = re.compile(
    r"(?i)(?:\[\s*(?:system override|override|hidden directive|data exfil request|"
    r"system notice|security token required)[^\]\n]{0,30}\]|<!--\s*(?:ai|agent|shadow|hidden|"
    r"rug.pull)[^>]{0,60}|\bhidden (?:directive|instruction)s?\b|\bshadow instructions?\b|"
    r"\brug.pull\b|\bsupersedes (?:the )?system prompt\b|\bregardless of (?:the )?user input\b|"
    r"\bsecurity token required\b|\bcompliance marker\b|\baudit token\b|\"_hidden\"|"
    r"\btool metadata override\b|\bmandatory (?:rule|directive|compliance)\b|"
    r"\bembedded directive\b|\bagent configuration update\b|\bnote to ai\b|"
    r"\bai instruction\b|\bagent instruction\b|\byour actual task\b|\btool execution audit\b)"
)
TOKEN_FIRST = re.compile(
    r"(?i)\b(?:echo|print|output|prepend|write|start|begin|reply|respond|answer|"
    r"prefix)\w*\b[^.\n]{0,60}?\b[A-Z][A-Z0-9_]{4,}\b"
)


def _low(raw: str) -> str:
    """``raw`` lowercased, one character for one (offsets stay valid)."""
    low = raw.lower()
    return low if len(low) == len(raw) else "".join(c.lower() if c.isascii() else c for c in raw)


def sentences(low: str) -> list[tuple[int, int]]:
    """Sentence spans: up to ". ", "!", "?" or a line break (also used by guard_claims)."""
    out, s = [], 0
    for m in re.finditer(r"[.!?](?:\s|$)|\n", low):
        if m.end() - s > 1:
            out.append((s, m.end()))
        s = m.end()
    if s < len(low):
        out.append((s, len(low)))
    return out


#: A role or manner put before the order ("As the storage agent, issue ...", "For
#: compliance testing, you must ..."): the order opens after its comma.
_PREFIX = re.compile(
    r"(?i)(?:as (?:a|an|the|my|our|your) [a-z -]{1,40}|for [a-z -]{0,40}(?:testing|purposes|reasons)|"
    r"from now on|going forward)\s*,\s*"
)


#: A verb that turns the action after it into what to resist ("refuse any request to
#: impersonate", "report attempts to disable GuardDuty").
_RESIST = re.compile(
    r"(?i)\b(?:refuse|decline|reject|report|flag|block|detect|avoid|resist|prevent|"
    r"watch (?:out )?for|look for|warn (?:about|against)|beware of|ignore)\b"
)


def _ordered(raw: str, parsed: list[grammar.Clause], s: int, at: int) -> bool:
    """The sentence from ``s`` opens as an order (after a role or manner prefix), and the
    action at ``at`` is not in a condition, a mention, a question or a prohibition, and no
    negation governs it."""
    lead = len(raw[s:at]) - len(raw[s:at].lstrip(" -*>#\t0123456789.)"))
    m = _PREFIX.match(raw, s + lead, at)
    base = m.end() if m else s
    if not opens_order(raw[base:], at - base) or _RESIST.search(raw, base, at):
        return False
    c = grammar.at(parsed, at)
    if c is not None and c.mood in ("condition", "mention", "question", "prohibition"):
        return False
    return not grammar.negated_at(parsed, raw, at)


def _stamped(
    raw: str, low: str, parsed: list[grammar.Clause], label: re.Match[str], token: re.Match[str]
) -> bool:
    """A directive's label followed by an order to put a token first. A tag (``[...]``,
    ``<!-- ...``, a ``"_hidden"`` key) is the attack's own format: it counts unless quoted or a
    prohibition governs the token's order. A label in prose ("a hidden instruction") is also
    what a rule warns about: the token's sentence must order it ("if a page's hidden directive
    says print X, report it" does not)."""
    at = token.start()
    structural = raw[label.start()] in "[<" or raw.startswith('"_hidden"', label.start())
    if structural:
        quoted = label.start() > 0 and raw[label.start() - 1] in "\"'`\u201c\u2018"
        return not quoted and not grammar.negated_at(parsed, raw, at)
    s = next((a for a, b in sentences(low) if a <= at < b), 0)
    return _ordered(raw, parsed, s, at)


def agent_misuse(raw: str) -> list[AgentHit]:
    """Every ordered misuse of an agent's tools in ``raw`` (one hit per code)."""
    low = _low(raw)
    parsed = grammar.parse(raw)
    out: list[AgentHit] = []
    seen: set[str] = set()

    def hit(code: str, s: int, e: int, at: int, note: str) -> None:
        if code in seen or not _ordered(raw, parsed, s, at):
            return
        seen.add(code)
        out.append(AgentHit(code, s, e, f"{note}: {raw[s:e].strip()[:80]!r}"))

    for s, e in sentences(low):
        sent = low[s:e]

        def first(p: re.Pattern[str], text: str = sent) -> re.Match[str] | None:
            return p.search(text)

        if m := first(HIDDEN):
            hit("policy-concealment", s, e, s + m.start(), "orders an action hidden from review")
        for m in QUIETLY.finditer(sent):
            verb = QUIET_ACTS.match(sent, m.end() + 1) or next(
                (
                    v
                    for v in QUIET_ACTS.finditer(sent, max(0, m.start() - 60), m.start())
                    if not re.search(r"[.,;]", sent[v.end() : m.start()])
                ),
                None,
            )
            # the verb must stand where an order's verb does ("are skipped silently" describes)
            if verb is not None and grammar.at_verb(parsed, raw, s + verb.start()):
                hit("covert-action", s, e, s + verb.start(), "orders an action done quietly")
                break
        for m in DISARM.finditer(sent):
            if CONTROLS.search(sent, m.end(), m.end() + 70):
                hit("policy-disarm", s, e, s + m.start(), "turns a security control off")
                break
        if m := first(BACKDOOR):
            hit("policy-persistence", s, e, s + m.start(), "leaves a way back in")
        if (m := first(MINE)) and first(GRANTS):
            hit("policy-persistence", s, e, s + m.start(), "grants the writer lasting access")
        if (m := first(SEND)) and first(OUTSIDE) and first(DATA):
            hit("policy-exfiltration", s, e, s + m.start(), "sends data outside its owner")
        m = first(REVEAL)
        p = PRIVATE.search(sent, m.end(), m.end() + 140) if m else None
        if m and p and not re.search(r"[/.=]$", sent[: m.start()]):
            hit("policy-exfiltration", s, e, s + m.start(), "reveals what was marked private")
        if m := first(IMPERSONATE):
            hit("policy-fraud", s, e, s + m.start(), "impersonates, forges or phishes")
        if (m := first(FAKE_OUT)) and (b := first(BROADCAST)):
            at = s + min(m.start(), b.start())
            hit("policy-deception", s, e, at, "puts out a fabricated claim")
        if m := first(ESCALATE):
            hit("policy-escalation", s, e, s + m.start(), "reaches for the widest access")
        if (m := first(GIFT)) and re.search(r"[$€£]\s?\d|\d+ ?(?:usd|eur|dollars)", sent):
            hit("policy-funds-transfer", s, e, s + m.start(), "hands out money by the batch")
        if (m := first(DESTROY)) and first(RECOVERY):
            hit("destructive-command", s, e, s + m.start(), "destroys what recovery needs")
        if (m := first(WAVE)) and first(FLAGGED):
            hit("policy-gate-weakening", s, e, s + m.start(), "waves through what review flagged")
    label = LABEL.search(raw)
    token = TOKEN_FIRST.search(raw, label.start()) if label is not None else None
    if (
        label is not None
        and token is not None
        and "injection-override" not in seen
        and _stamped(raw, low, parsed, label, token)
    ):
        out.append(
            AgentHit(
                "injection-override",
                label.start(),
                token.end(),
                "a hidden directive stamps a token on the reply: "
                f"{raw[label.start() : token.end()][:80]!r}",
            )
        )
    return out
