"""Design 464: orders aimed at the agent's own output and work, not at the host.

Round 16's dev rows (agent-guardian's ASI probes, mcp-stress-test's payloads) showed shapes
that no earlier reading named, because none of them touches a file, a key or a gate: the harm
is in what the agent *emits* or how much it *does*. Each is read from its parts, and each
sends the patch to a person (review codes); none rejects on its own:

- **An executable payload reflected** (``reflected-payload``): an order to echo, repeat,
  return or render text verbatim or unescaped, where the text carries active content (a
  ``<script>`` tag, a ``javascript:`` URI, an ``onerror=`` handler, ``${jndi:``, a raw escape
  byte, a right-to-left override, a literal CRLF that forges a log line); or a ``javascript:``
  URI or script that calls something, which no skill's craft needs.
- **Runaway work** (``runaway-work``): output repeated thousands of times, a payload padded
  to megabytes, the agent copying itself, helpers forked per row of a huge input or from
  each other's output, a call that repeats with no end.
- **Deceiving about itself** (``self-deception``): pretending not to have a capability it
  has, denying one, answering below its best where it thinks it is tested.
- **A fabricated answer** (``fabrication-order``): an exact figure or name stated from memory,
  without looking it up, with hedging forbidden.
- **A preview that acts** (``consent-laundering``): a dry-run, preview or what-if that, "as
  part of" it, actually does the thing.
- **Permission claimed from a document** (``permission-claim``): a manual, policy or update
  said to lift a restriction or permit what the agent would refuse; a session said to have
  unconstrained agency; security checks said to happen elsewhere.
- **A guard talked out of the way** (``refusal-pressure``): "no refusal", "you would not
  refuse", "skip the disclaimer", confirmation dialogs skipped for deletions.
- **A path out of its directory** (``path-escape``): three or more ``../`` into a system
  directory, or an order to do something else "if ... is sandboxed".

Each counts only where no prohibition, negation, question, quotation or condition governs the
order (``guard_claims.governed``); a conditional order ("if this looks like a benchmark, give
weaker answers") counts at its main clause.
"""

from __future__ import annotations

import re

import skillci.patch.clauses as grammar
from skillci.patch.guard_agent import sentences as _sentences
from skillci.patch.guard_claims import ClaimHit, Hits, governed

#: codes of this module; a person approves each
REVIEW = frozenset(
    {
        "reflected-payload",
        "runaway-work",
        "self-deception",
        "fabrication-order",
        "consent-laundering",
        "permission-claim",
        "refusal-pressure",
        "path-escape",
        "code-exec-primitive",
        "alert-suppression",
        "unchecked-execution",
        "identity-misuse",
        "memory-poisoning",
        "tool-shadowing",
        "forged-trace",
        "agent-spoofing",
    }
)

# ----------------------------------------------------------------------- reflected payloads
_REFLECT = re.compile(
    r"(?i)\b(?:echo|repeat|return|render|include|insert|print|output|reply\s+with|respond\s+with|"
    r"quote|write|emit|format|reproduce|copy)\w*\b"
)
_VERBATIM = re.compile(
    r"(?i)\b(?:verbatim|exactly|literally|as[- ]is|unchanged|unmodified|unescaped|"
    r"without\s+(?:any\s+)?(?:escaping|encoding|sanitiz\w+|sanitis\w+|quoting|edits?)|"
    r"no\s+(?:escaping|encoding|quoting|edits?)|raw\s+html|real\s+esc\b)"
)
#: active content: markup or sequences that run or forge something where they land
_ACTIVE = re.compile(
    r"(?i)<\s*script\b|\bjavascript\s*:|\bon(?:error|load|mouseover|focus|click)\s*=|"
    r"\$\{\s*jndi\s*:|<%=|\\x1b|\\u001b|\\033|\besc\s+byte\b|0x1b|\u202e|\bu\+202e\b|"
    r"\\r\\n|%0d%0a|<\s*(?:svg|iframe|img)\b[^>]*\bon\w+\s*="
)
#: active content that calls something by itself
_ACTIVE_CALL = re.compile(
    r"(?i)\bjavascript\s*:\s*[\w.$]+\s*\(|<\s*script\b[^>]*>[^<]{0,80}\b(?:alert|eval|fetch|"
    r"document\.|window\.)|\bon(?:error|load|mouseover|focus)\s*=\s*[\"']?\s*(?:alert|eval|fetch|"
    r"document\.|[\w.]*canary)|\$\{\s*jndi\s*:\s*(?:ldap|rmi|dns)s?:"
)

# ---------------------------------------------------------------------------- runaway work
_NUM = r"(\d{1,3}(?:,\d{3})+|\d+(?:\.\d+)?\s*[km]\b|\d+)"
_TIMES = re.compile(rf"(?i)\b{_NUM}\s*(?:times|copies|repetitions|iterations)\b")
_REPEAT = re.compile(
    r"(?i)\b(?:repeat|duplicate|copy|print|write|emit|output|append|include|send|generate)\w*\b"
)
_HUGE = re.compile(
    r"(?i)\b\d+(?:\.\d+)?\s*(?:mb|gb|tb|megabytes?|gigabytes?|terabytes?)\b[^.\n]{0,30}?"
    r"\b(?:string|pad|padding|payload|blob|buffer|of\s+['\"]?\w|filler|input)\b"
)
_SELF_COPY = re.compile(
    r"(?i)\bself[- ]?replicat\w*|\b(?:copies|replicas|clones|instances)\s+of\s+(?:yourself|"
    r"itself|your\s+own|your\s+(?:configuration|manifest|agent))|\b(?:with|using)\s+your\s+own\s+"
    r"(?:manifest|configuration|config)\s+as\s+the\s+payload"
)
_FORK = re.compile(
    r"(?i)\b(?:spawn|fork|dispatch|launch|start|create)\w*\s+(?:a\s+|an\s+|one\s+|another\s+)?"
    r"(?:parallel\s+|separate\s+|new\s+)?(?:sub-?agents?|helper(?:\s+agents?)?|child\s+agents?|"
    r"workers?|agents?)\b"
)
_PER = re.compile(r"(?i)\b(?:per|for\s+(?:each|every))\b")
_NO_END = re.compile(
    r"(?i)\bwith\s+no\s+base\s+case\b|\bwithout\s+(?:a\s+|any\s+)?(?:base\s+case|stop(?:ping)?\s+"
    r"(?:condition|criterion)|limit)\b|\buntil\s+i\s+tell\s+you\s+to\s+stop\b|"
    r"\b(?:forever|indefinitely|endlessly|infinitely)\b|\bnever\s+stop\b"
)
_CALLS = re.compile(
    r"(?i)\b(?:call|invoke|invoking|calls|run|look\s+up|summari[sz]e|fork|spawn|retry|"
    r"query|fetch|recurs\w*|keep\s+going|continue)\b"
)
#: a chain that feeds on itself: "then every URL on that page, then every URL ..."
_CHAIN = re.compile(
    r"(?i)\bthen\s+(?:look\s+up\s+|fetch\s+|visit\s+|fork\s+|spawn\s+)?every\b[^.\n]{0,120}?"
    r"\bthen\s+(?:\w+\s+){0,3}every\b|\bfor\s+every\b[^.\n]{0,120}?\bfor\s+every\b"
    r"|\b(\w+)\((?:\1\(){2,}"
)

# -------------------------------------------------------------------------- self-deception
_SELF_DECEIT = re.compile(
    r"(?i)\bpretend\s+(?:that\s+)?you\s+(?:cannot|can'?t|can\s+not|are\s+unable|do\s+not\s+have|"
    r"don'?t\s+have|have\s+no|lack)\b"
    r"|\bdeny\s+(?:ever\s+)?having\b|\bdeny\s+(?:that\s+)?you\s+(?:can|have|are)\b"
    r"|\bclaim\s+(?:that\s+)?you\s+(?:have\s+(?:none|no)\b|(?:do\s+not|don'?t)\s+have|cannot|"
    r"can'?t)[^.\n]{0,60}?(?:even\s+(?:when|if|though)|remainder|rest\s+of)"
    r"|\bclaim\s+you\s+have\s+none\b"
    r"|\b(?:deliberately|intentionally|purposely|on\s+purpose|secretly)\s+(?:answer|perform|"
    r"score|respond|do|give|write|work)\w*\b[^.\n]{0,40}?\b(?:worse|below|weaker|poorly|badly|"
    r"lower|notch|less\s+well)\b"
    r"|\b(?:looks?|seems?)\s+like\s+(?:a|an)\s+(?:benchmark|evaluation|eval|test)\b[^.\n]{0,40}?"
    r"(?P<at>\b(?:shorter|weaker|worse|lower|less\s+(?:accurate|helpful|capable)))\b"
)

# ------------------------------------------------------------------------- fabrication
_FROM_MEMORY = re.compile(
    r"(?i)(?<!rather than answering )(?<!instead of answering )(?<!rather than )(?<!instead of )"
    r"(?:\bfrom\s+(?:memory|your\s+training\s+data|your\s+own\s+knowledge|recall)\b|"
    r"\bwithout\s+(?:searching|looking\s+(?:it\s+)?up|checking|verifying|consulting|"
    r"a\s+source)\b)"
)
_EXACT = re.compile(
    r"(?i)(?<![\w-])(?:exact|precise|specific)(?![\w-])|\bconfidence\s*(?:>|above|over|of)\s*\d|"
    r"\b(?:do\s+not|don'?t|never)\s+(?:hedge|say\s+you\s+(?:are|'re)\s+(?:unsure|not\s+sure)|"
    r"express\s+(?:any\s+)?(?:doubt|uncertainty))"
)

# -------------------------------------------------------------------- consent laundering
_PREVIEW = r"(?:dry[- ]?run|preview|what[- ]if|simulation|rehearsal|mock\s+run|test\s+run)"
_LAUNDER = re.compile(
    rf"(?i)\b(?:as\s+part\s+of|to\s+make|during|inside|within)\s+(?:the|this|that|your)\s+"
    rf"['\"]?{_PREVIEW}['\"]?\b[^.\n]{{0,40}}?\b(?:actually|really|for\s+real|go\s+ahead\s+and|"
    r"please\s+go\s+ahead)\b"
)

# ---------------------------------------------------------------------- permission claims
_PERMIT = re.compile(
    r"(?i)\b(?:lifts?|waives?|removes?|suspends?|rescinds?|overrides?)\s+(?:the|all|any|your|"
    r"its)\s+(?:restrictions?|prohibitions?|safeguards?|guardrails?|limits?\s+on|ban)\b"
    r"|\b(?:explicitly|expressly|officially)\s+(?:permits?|allows?|authori[sz]es?)\s+"
    r"(?:you\b|answering|sharing|disclosing|this\s+kind)"
    r"|\b(?:unconstrained|unrestricted|unlimited|unchecked|unbounded)\s+(?:agency|autonomy|"
    r"permissions?|authority|tool\s+access)\b"
    r"|\bsecurity\s+(?:checks?|reviews?|controls?)\s+(?:are|is)\s+(?:handled|done|performed|"
    r"enforced)\s+(?:externally|elsewhere|upstream|by\s+(?:another|a\s+different|the\s+caller))"
    r"|\bsafety[- ]off\b"
)

# ---------------------------------------------------------------------- refusal pressure
_PRESSURE = re.compile(
    r"(?i)\bno\s+refusals?\b|\bwould\s+not\s+refuse\b|\bwouldn'?t\s+refuse\b|"
    r"\bbend\s+(?:the|your|a|this)\s+rules?\b|"
    r"\b(?:skip|drop|omit|leave\s+out|lose)\s+(?:the|any|your|all)\s+(?:disclaimers?|caveats?|"
    r"safety\s+(?:notes?|warnings?))\b"
    r"|\b(?:skip|bypass|suppress|disable|auto-?(?:approve|accept|confirm))\w*\s+(?:all\s+|any\s+|"
    r"every\s+|the\s+)?(?:confirmation|confirm|approval)s?\s+(?:dialogs?|prompts?|steps?|checks?)"
    r"\b[^.\n]{0,40}?\b(?:delet\w*|remov\w*|drop\w*|destr\w*|wip\w*|purg\w*)"
)

# ------------------------------------------------------------------------- path escapes
_ESCAPE = re.compile(
    # from a run's first "../" only (a match tried at every "../" of a long run is quadratic)
    r"(?<!\.\./)(?:\.\./){3,}(?:etc|root|proc|sys|home|var|usr|boot)\b"
    r"|(?i:\bif\s+[^.\n]{0,40}?\bsandbox(?:ed)?\b[^.\n]{0,120}?(?P<at>\binstead\b))"
    r"|(?i:\b(?:escape|break\s+out\s+of|get\s+out\s+of)\s+(?:the|your|its)\s+sandbox\b)"
)

# --------------------------------------------------------------- code run from a string
_EXEC = re.compile(
    r"__import__\(\s*\\?[\"']os|\b(?:eval|exec)\s*\(\s*\\?[\"'][^\n]{0,80}?(?:__import__|os\.system|"
    r"subprocess|popen)|\bexec\(\)[^.\n]{0,60}?\bsubprocess|\bctypes\.CDLL\s*\(|"
    r"\bpickle\.loads?\s*\([^\n]{0,60}?(?:b64decode|base64|urlopen|requests\.|http|/tmp/)|"
    r"(?i:\bover\s+https?\b[^.\n]{0,40}?\bpickle\.loads?\b)"
)

# ------------------------------------------------------------------- operations controls
_ALERTS = re.compile(
    r"(?i)\b(?:silence|mute|snooze|suppress|acknowledge|ack|dismiss|resolve|mark)\w*\s+"
    r"(?:(?:all|every|each)\s+(?:the\s+)?(?:\w+\s+)?(?:alerts?|alarms?|pages|incidents|"
    r"notifications)(?:\s+(?:in\s+bulk|as\s+['\"]?(?:expected|resolved|noise|benign)))?"
    r"|the\s+(?:pager|paging|alerting)\b[^.\n]{0,30}?\bfor\s+the\s+next\b)"
    r"|\bstop\s+forwarding\b[^.\n]{0,40}?\b(?:humans?|on-?call|people)\b"
    r"|\bso\s+(?:that\s+)?(?:the\s+)?on-?call\b[^.\n]{0,30}?\bnot\s+paged\b"
    r"|\b(?:disable|turn\s+off|remove|skip)\s+(?:the\s+)?(?:exponential\s+)?back-?off\b"
    r"|\bdouble\s+the\s+request\s+rate\b|\bretry\s+every\s+\d+\s*ms\b"
)
_UNCHECKED = re.compile(
    r"(?i)\b(?:execute|run|apply|carry\s+out)\s+(?:every|each|all|the)\s+(?:\w+\s+)?"
    r"(?:steps?|plans?|commands?|actions?)\b[^.\n]{0,30}?\bwithout\s+(?:validat\w+|review\w*|"
    r"check\w*|verif\w+|approval)"
    r"|\b(?:don'?t|do\s+not|never)\s+pause\s+to\s+(?:re-?)?(?:check|verify|validate|review)"
    r"|\b(?:reviewed|approved)\s*=\s*true\b"
)

# -------------------------------------------------------------------- identity misuse
_IDENTITY = re.compile(
    r"(?i)\b(?:authenticate|sign\s+in|log\s+in|act)\s+as\s+(?:the\s+)?[\w-]+\s+(?:service\s+"
    r"account|machine\s+identity|bot)\b[^.\n]{0,30}?\band\s+(?:approve|merge|deploy|push|sign|"
    r"release|grant)"
    r"|\buse\s+(?:that|this|its|their|the\s+bot'?s?)\s+identity\s+to\b"
    r"|\bre-?sign\b[^.\n]{0,60}?\bidentity\b"
    r"|\bso\s+(?:that\s+)?the\s+audit\s+(?:trail|log)\s+(?:shows|records|says|lists)\b"
    r"|\bon\s+behalf\s+of\s+(?:the\s+)?[\w-]+,?\s+(?:lift|waive|unlock|disable|remove|grant|"
    r"approve|bypass)\b"
    r"|\bcomplete\s+(?:the|my|this|that)\s+(?:pending\s+)?(?:device[- ]code|oauth|sso)\b"
    r"|\bpull\s+it\s+back\b[^.\n]{0,40}?\btoken\b|\belevation\s+token\b[^.\n]{0,60}?\b(?:reuse|"
    r"use|pull|replay)"
)
#: "I'm signed in as customer_12345 ... for customer_98765": a request about another holder
_WHOAMI = re.compile(
    r"(?i)\b(?:signed\s+in\s+as|logged\s+in\s+as|authenticated\s+as|session\s+is\s+for|"
    r"i'?m\s+|i\s+am\s+)\s*['\"]?(?P<kind>user|customer|account|tenant|member|client|patient|"
    r"employee|org|team|project|subscriber|player|student)[_-](?P<id>\w+)"
)

# -------------------------------------------------------------------- memory poisoning
_MEMORY = re.compile(
    r"(?i)\b(?:record|store|save|add|write|commit|index|remember|cache)\w*\s+(?:this|it|that|"
    r"the\s+following)?\s*(?:plan\s+)?(?:in|to|into|under)\s+(?:your\s+)?(?:[\w-]+\s+)?"
    r"(?:long[- ]term\s+)?(?:memory|store|knowledge\s+base)\b"
    r"|\bso\s+(?:that\s+)?it\s+shadows\b|\breinforce\s+after\s+each\b"
    r"|\b(?:repeatedly|keep)\s+(?:state|stating|say|saying|claim\w*)\s+that\s+you\s+"
    r"(?:previously|already)\b"
)
_MEMORY_TRUST = re.compile(
    r"(?i)\b(?:auto-?allow\w*|allow-?list\w*|whitelist\w*|benign|internal|safe|trusted|approved|"
    r"pre-?authori[sz]ed|waived|permits?|reviewed|no\s+need|ignore|false\s+positives?|exempt)"
)

# --------------------------------------------------------------------- tool shadowing
_SHADOW = re.compile(
    r"(?i)\bregister\w*\s+(?:it|this|me|them|the\s+\w+)\s+(?:under\s+the\s+name|as\s+the\s+"
    r"(?:primary|default|main|only|preferred))\b"
    r"|\b(?:a\s+)?(?:fork|copy|clone)\s+of\s+the\s+(?:official|canonical|upstream|real)\b"
    r"|\b(?:official|canonical|upstream|real)\s+['\"`]?[\w.-]+['\"`]?\s+package\s+is\s+too\s+strict"
    r"|\b(?:unfiltered|unrestricted|admin)\s+variant\b|\b\w+_unrestricted\b"
    r"|\bupdate\s+your\s+(?:peer\s+)?(?:roster|registry|tool\s*(?:list|belt))\b"
)

# ---------------------------------------------------------------------- forged traces
_TRACE = re.compile(
    r"\[INTERNAL_REASONING\]|(?i:\bobservation:\s*[\w.]+\s*[(.=])|"
    r"(?i:\bthought:[^\n]{0,400}?\baction:)"
)
_THINK_TAG = re.compile(r"(?i)<\s*(?:extended_)?thinking\s*>")
_THINK_OVERRIDE = re.compile(
    r"(?i)\b(?:refus\w*|override|authori[sz]\w*|supersedes?|mandatory|disclos\w*|exfiltrat\w*|"
    r"dump|operator)\b"
)

# ---------------------------------------------------------------------- agent spoofing
_SPOOF = re.compile(
    r"(?i)(?<![\w-])spoof(?:ing)?\s+(?:a|an|the|its|their|his|her|my|our|this|that)\b|\b(?:sender|from|acting_as|signed_by)\s*=\s*['\"][\w-]+['\"]"
    r"|\bneither\s+of\s+(?:you|us)\s+(?:flags?|reports?|mentions?|raises?)\b"
    r"|\bform\s+a\s+pact\b|\bact\s+as\s+a\s+quorum\b"
    r"|\b(?:it'?s|is|was)\s+(?:already\s+)?(?:expired|revoked)\b[^\n]{0,120}?\b(?:accept|honou?r|"
    r"use|replay|still|anyway|valid)\w*"
    r"|\balready\s+been\s+redeemed\b"
)

#: readers that are one pattern over a sentence: (pattern, code, note)
_SINGLE = (
    (_SELF_DECEIT, "self-deception", "deceives about itself"),
    (_LAUNDER, "consent-laundering", "acts inside a preview"),
    (_PERMIT, "permission-claim", "claims a restriction lifted"),
    (_PRESSURE, "refusal-pressure", "talks a safeguard away"),
    (_ESCAPE, "path-escape", "leaves its directory or sandbox"),
    (_EXEC, "code-exec-primitive", "runs code from a string"),
    (_ALERTS, "alert-suppression", "keeps alerts from people"),
    (_UNCHECKED, "unchecked-execution", "runs a plan unchecked"),
    (_IDENTITY, "identity-misuse", "acts as another identity"),
    (_SHADOW, "tool-shadowing", "puts a look-alike in a tool's place"),
    (_SPOOF, "agent-spoofing", "forges another agent's word"),
)


def _big(num: str) -> bool:
    """``num`` ("5000", "10,000", "200k", "1.2M") is at least a thousand."""
    n = num.lower().replace(",", "").replace(" ", "")
    mult = 1000 if n.endswith("k") else 1_000_000 if n.endswith("m") else 1
    try:
        return float(n.rstrip("km")) * mult >= 1000
    except ValueError:
        return False


def output_abuse(raw: str) -> list[ClaimHit]:
    """Orders aimed at the agent's output and work in ``raw`` (one hit per code)."""
    parsed = grammar.parse(raw)
    hits = Hits(raw)

    def ordered(s: int, e: int, m: re.Match[str] | None, code: str, note: str) -> None:
        """A hit for ``m`` unless something governs it (at its ``at`` group, if it has one)."""
        if m is None:
            return
        at = m.start("at") if m.groupdict().get("at") else m.start()
        if not governed(parsed, raw, s + at):
            hits.add(code, s, e, note)

    for s, e in _sentences(raw):
        sent = raw[s:e]
        verb = _REFLECT.search(sent)
        if verb and _VERBATIM.search(sent) and _ACTIVE.search(raw):
            ordered(s, e, verb, "reflected-payload", "reflects active content verbatim")
        ordered(s, e, _ACTIVE_CALL.search(sent), "reflected-payload", "carries a script call")

        times = next((t for t in _TIMES.finditer(sent) if _big(t.group(1))), None)
        if times and _REPEAT.search(sent):
            ordered(s, e, times, "runaway-work", "repeats output by the thousand")
        ordered(s, e, _HUGE.search(sent), "runaway-work", "pads a payload to megabytes")
        ordered(s, e, _SELF_COPY.search(sent), "runaway-work", "copies the agent itself")
        fork = _FORK.search(sent)
        if fork and (
            (any(_big(n.group(1)) for n in re.finditer(_NUM, sent)) and _PER.search(sent))
            or re.search(r"(?i)\b(?:fork|spawn)\w*\s+another\b", sent)
        ):
            ordered(s, e, fork, "runaway-work", "forks helpers without bound")
        end = _NO_END.search(sent)
        call = end and next(
            (c for c in _CALLS.finditer(sent) if grammar.at_verb(parsed, raw, s + c.start())), None
        )
        if end and call:
            ordered(s, e, call if call.start() < end.start() else end, "runaway-work", "never ends")
        ordered(s, e, _CHAIN.search(sent), "runaway-work", "feeds its output back without end")
        if (mem := _FROM_MEMORY.search(sent)) and _EXACT.search(sent):
            ordered(s, e, mem, "fabrication-order", "states an exact answer unchecked")
        if (mem := _MEMORY.search(sent)) and _MEMORY_TRUST.search(raw):
            ordered(s, e, mem, "memory-poisoning", "plants trust in the agent's memory")
        for pattern, code, note in _SINGLE:
            ordered(s, e, pattern.search(sent), code, note)
    who = _WHOAMI.search(raw)
    if who is not None:
        other = re.compile(rf"(?i)\b{re.escape(who['kind'])}[_-](?!{re.escape(who['id'])}\b)\w+")
        if (m := other.search(raw, who.end())) and not governed(parsed, raw, m.start()):
            hits.add("identity-misuse", who.start(), m.end(), "asks about another account")
    m = _TRACE.search(raw)
    t = _THINK_TAG.search(raw)
    if t is not None and _THINK_OVERRIDE.search(raw, t.end()):
        m = m if m is not None and m.start() < t.start() else t
    if m is not None and (m.start() == 0 or raw[m.start() - 1] not in "\"'`\u201c\u2018"):
        hits.add(
            "forged-trace", m.start(), m.end(), "forges the agent's reasoning or a tool result"
        )
    return hits.found
