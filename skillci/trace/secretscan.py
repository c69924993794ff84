"""Secret spans in text: detect-secrets' regex plugins, entropy, and skillci's own gaps.

:func:`redact` replaces every span found by

1. the regex plugins of Yelp's ``detect-secrets`` (their capture group when they have one);
2. skillci's own patterns, only for formats detect-secrets lacks (``_OWN``);
3. an entropy check (``detect-secrets``' Shannon entropy) on prefixed tokens
   (``xyz_live_<random>``) and on long bare tokens that look random (upper, lower and digits,
   no long lowercase word inside) - content hashes, run ids and model routes are not.

Tokens broken by a line break (a JWT wrapped at 76 columns) are matched on the text with
those breaks removed and redacted across them. See docs/design/162-redaction-detector.md.
"""

from __future__ import annotations

import functools
import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Iterator

#: detect-secrets plugins left out: IP addresses are not secrets here; private keys are
#: redacted as whole blocks by the caller; the keyword and entropy plugins are line-based
#: heuristics replaced by the checks below; basic-auth and npm patterns are unbounded
#: (quadratic on long lines) and the IBM/Cloudant/SoftLayer ones are keyword=value shapes -
#: bounded equivalents live in skillci.trace.redact (URL credentials, key=value).
_SKIPPED_PLUGINS = frozenset(
    {
        "IPPublicDetector",
        "PrivateKeyDetector",
        "KeywordDetector",
        "Base64HighEntropyString",
        "HexHighEntropyString",
        "NpmDetector",
        "BasicAuthDetector",
        "IbmCloudIamDetector",
        "IbmCosHmacDetector",
        "CloudantDetector",
        "SoftlayerDetector",
    }
)

#: (kind, pattern, group, needles) for formats detect-secrets does not cover.
_OWN_PATTERNS: tuple[tuple[str, re.Pattern[str], int], ...] = (
    ("npm_token", re.compile(r"\bnpm_[A-Za-z0-9]{36}\b"), 0),
    ("slack_app_token", re.compile(r"\bxapp-\d-[A-Za-z0-9]+-\d+-[A-Za-z0-9]+"), 0),
    ("slack_token", re.compile(r"\bxox[a-z]-[A-Za-z0-9-]{10,}"), 0),
    (
        "discord_webhook",
        re.compile(r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[\w-]+"),
        0,
    ),
    ("vault_token", re.compile(r"\bhv[sbr]\.[A-Za-z0-9_-]{20,}"), 0),
    ("digitalocean_token", re.compile(r"\bdo[por]_v1_[a-f0-9]{64}\b"), 0),
    ("databricks_token", re.compile(r"\bdapi[a-f0-9]{32}(?:-\d)?\b"), 0),
    ("age_secret_key", re.compile(r"AGE-SECRET-KEY-1[0-9A-Z]{58}"), 0),
    ("stripe_key", re.compile(r"\b[rsp]k_(?:live|test|prod)_[A-Za-z0-9]{10,99}\b"), 0),
    ("pypi_token", re.compile(r"\bpypi-[A-Za-z0-9_-]{50,}"), 0),
    ("gitlab_token", re.compile(r"\bgl[a-z]{1,4}-[A-Za-z0-9_-]{20,}"), 0),
    ("sendgrid_key", re.compile(r"\bSG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"), 0),
    (
        "slack_webhook",
        re.compile(r"https://hooks\.slack\.com/(?:services|workflows)/[A-Za-z0-9/_-]+"),
        0,
    ),
    (
        "cli_password",
        re.compile(r"(?:^|\s)(?:-u|--user)\s+['\"]?[^\s:'\"]{1,64}:([^\s'\"]{1,256})"),
        1,
    ),
    (
        "cli_password",
        re.compile(r"\b(?:mysql|mysqldump|mysqladmin|mariadb)\b[^\n]{0,200}?\s-p([^\s'\"]{1,256})"),
        1,
    ),
    ("netrc_password", re.compile(r"\b(?:login|user)\s+\S{1,128}\s+password\s+(\S{1,256})"), 1),
    ("docker_auth", re.compile(r"\"auth\"\s*:\s*\"([A-Za-z0-9+/=]{8,})\""), 1),
    ("intra42_secret", re.compile(r"\bs-s4t2(?:ud|af)-[a-f0-9]{64}\b"), 0),
    # a value named in prose ("the adafruit token is X", "datadog key: X"): no assignment
    # or quotes for the key=value rules, too little entropy for the token check
    (
        "keyword_value",
        re.compile(
            r"(?i)\b(?:api[ _-]?key|access[ _-]?key|secret(?:[ _-]?key)?|token|key|password|"
            r"passwd|pwd|credential|client[ _-]?(?:id|secret)|auth(?:[ _-]?token)?)s?"
            r"(?:\s+(?:is|was|are|=|:)|\s*[:=])\s*[\"'`]?([A-Za-z0-9_+/=.~-]{16,512})"
        ),
        1,
    ),
)

_OWN_NEEDLES = (
    ("npm_",),
    ("xapp-",),
    ("xox",),
    ("discord",),
    ("hvs.", "hvb.", "hvr."),
    ("_v1_",),
    ("dapi",),
    ("age-secret-key-1",),
    ("k_live_", "k_test_", "k_prod_"),
    ("pypi-",),
    ("gl",),
    ("sg.",),
    ("hooks.slack.com",),
    ("-u", "--user"),
    ("mysql", "mariadb"),
    ("password",),
    ('"auth"',),
    ("s-s4t2",),
    ("key", "token", "secret", "passw", "pwd", "credential", "client", "auth"),
)
_OWN = tuple((k, rx, g, n) for (k, rx, g), n in zip(_OWN_PATTERNS, _OWN_NEEDLES, strict=True))

_TOKEN = re.compile(r"(?<![A-Za-z0-9+/=_.~-])[A-Za-z0-9+/=_.~-]{20,4096}+")
_PREFIXED = re.compile(
    r"(?<![A-Za-z0-9])[A-Za-z]{2,12}[_.-](?:[A-Za-z]{2,8}[_.-]){0,2}([A-Za-z0-9][A-Za-z0-9+/_.-]{15,4096}+={0,2})"
)
_LOWER_RUN = re.compile(r"[a-z]{12,}")
#: A token this long at this entropy is a secret without a key name (design 271).
BARE_MIN_LEN = 20
BARE_ENTROPY = 4.5
#: Content hashes and ids skillci writes itself (lowercase hex, dashes) are never secrets.
_HEXISH = re.compile(r"^[0-9a-f-]+$")
#: Characters that may continue a token across a wrapped line.
_TOKEN_CHAR = re.compile(r"[A-Za-z0-9+/=_.-]")
_BREAK = re.compile(r"(?<=[A-Za-z0-9+/=_.-])[ \t]*\r?\n[ \t]*(?=[A-Za-z0-9+/=_.-])")


#: Lowercase substrings one of which every match of a plugin contains: a pattern whose
#: needles are all absent is not run (keeps long texts linear and fast).
_PLUGIN_NEEDLES: dict[str, tuple[str, ...]] = {
    "AWSKeyDetector": ("a3t", "abia", "acca", "akia", "asia", "aws"),
    "ArtifactoryDetector": ("akc", "ap"),
    "AzureStorageKeyDetector": ("accountkey=",),
    "GitHubTokenDetector": ("gh",),
    "GitLabTokenDetector": ("gl", "gr1348941"),
    "JwtTokenDetector": ("eyj",),
    "MailchimpDetector": ("-us",),
    "OpenAIDetector": ("t3blbkfj",),
    "PypiTokenDetector": ("pypi-",),
    "SendGridDetector": ("sg.",),
    "SlackDetector": ("xox", "hooks.slack"),
    "SquareOAuthDetector": ("sq0csp-",),
    "StripeDetector": ("k_live_",),
    "TelegramBotTokenDetector": (":",),
    "TwilioKeyDetector": ("ac", "sk"),
}


@functools.cache
def _plugins() -> tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...]:
    try:
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:  # a declared dependency; an old environment may predate it
        logging.getLogger(__name__).error(
            "detect-secrets is not installed; redaction uses skillci's own patterns only "
            "(pip install -e . to add it)"
        )
        return ()
    out: list[tuple[str, re.Pattern[str], tuple[str, ...]]] = []
    mapping: dict[str, type] = dict(get_mapping_from_secret_type_to_class())
    for kind, cls in sorted(mapping.items()):
        if cls.__name__ in _SKIPPED_PLUGINS or not issubclass(cls, RegexBasedDetector):
            continue
        name = re.sub(r"[^a-z0-9]+", "_", kind.lower()).strip("_")
        needles = _PLUGIN_NEEDLES.get(cls.__name__, ())
        out += [(name, rx, needles) for rx in cls().denylist]
    return tuple(out)


@functools.cache
def _entropy_fn() -> Callable[[str], float]:
    try:
        from detect_secrets.plugins.high_entropy_strings import Base64HighEntropyString
    except ImportError:
        return _shannon
    fn: Callable[[str], float] = Base64HighEntropyString().calculate_shannon_entropy
    return fn


def _shannon(data: str) -> float:
    """Shannon entropy in bits per character (used when detect-secrets is missing)."""
    if not data:
        return 0.0
    n = len(data)
    return -sum(c / n * math.log2(c / n) for c in Counter(data).values())


def warm() -> None:
    """Load detect-secrets' plugins now (once per process), not inside the first write."""
    _plugins()
    _entropy_fn()


def _identifier_like(tok: str) -> bool:
    """Paths, routes and dotted names: several short parts between separators."""
    parts = [p for p in re.split(r"[/._-]", tok) if p]
    return len(parts) >= 3 and sum(map(len, parts)) / len(parts) < 10


def _value_like(tok: str) -> bool:
    """A named value that may be a secret: letters and digits, not a path or dotted name."""
    core = tok.strip("=._-~")
    return (
        len(core) >= 16
        and any(c.isalpha() for c in core)
        and any(c.isdigit() for c in core)
        and not _path_like(core)
    )


def _path_like(tok: str) -> bool:
    """Paths and dotted names (``a/b/c``, ``pkg.mod.Class``); ``_`` and ``-`` are token
    characters here (``pscale_pw_...``, ``sm_pat_...``)."""
    parts = [p for p in re.split(r"[/.]", tok) if p]
    return len(parts) >= 3 and sum(map(len, parts)) / len(parts) < 10


def _random_looking(tok: str, limit: float) -> bool:
    if _identifier_like(tok):
        return False
    core = tok.strip("=._-")
    if not (any(c.isupper() for c in core) or any(c.isdigit() for c in core)):
        return False
    if not any(c.isalpha() for c in core) or not any(c.isdigit() for c in core):
        return False
    return _entropy_fn()(core) >= limit


def _trim(text: str, s: int, e: int) -> tuple[int, int]:
    while s < e and text[s] in " \t\"'=:,(":
        s += 1
    while e > s and text[e - 1] in " \t\"',)":
        e -= 1
    return s, e


#: Ids and hashes skillci and the harnesses write, kept by shape (design 341): tool-call ids
#: (Anthropic ``toolu_``/``srvtoolu_``, OpenAI ``call_``/``chatcmpl-``/``msg_``/``resp_``,
#: OpenCode ``ses_``/``prt_``), skillci run/trial/patch ids and the importers' run ids
#: (``opencode-ses_...``), UUIDs, Harbor trial names (``<task>__<7 chars>``, design 408) and
#: bare sha1/sha256 hex. Only the generic detectors
#: (entropy, unknown prefixes) yield to them; a named or provider-shaped secret never does.
_ALLOWED_ID = re.compile(
    r"^(?:(?:srv)?toolu_(?:vrtx_)?[A-Za-z0-9]{16,40}|call_[A-Za-z0-9]{16,40}|"
    r"chatcmpl-[A-Za-z0-9]{16,40}|(?:msg|resp|fc|rs|ses|prt)_[A-Za-z0-9]{16,60}|"
    r"(?:run|trial|patch|eval|gate|job|task|opencode|codex|claude-code|harbor|benchflow)-"
    r"[A-Za-z0-9][A-Za-z0-9_.-]{3,80}|"
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|"
    r"[a-z0-9]{1,16}(?:[._-][a-z0-9]{1,16}){0,12}__[A-Za-z0-9]{7}|"
    r"[0-9a-f]{40}|[0-9a-f]{64})$"
)
#: A URL without credentials (design 408): scheme, host, then its path.
_URL = re.compile(r"^https?://([^/?#\s]*)(/[^?#]*)?")
#: URL path pieces that are content addresses or readable slugs, not keys (design 408).
_URL_PIECE = re.compile(r"^(?:[0-9a-f-]{16,}(?:\.[a-z0-9]{1,5})?|[a-z0-9.-]+\.[a-z]{2,})$")
_GENERIC_KINDS = frozenset({"high_entropy", "prefixed_token"})


def _allowed(text: str, s: int, e: int, kind: str) -> bool:
    """Whether a generic hit is an id, a hash or part of a path (design 341)."""
    if kind not in _GENERIC_KINDS:
        return False
    a, b = s, e
    while a > 0 and not text[a - 1].isspace() and text[a - 1] not in "\"'`,;()[]{}<>=":
        a -= 1
    while b < len(text) and not text[b].isspace() and text[b] not in "\"'`,;()[]{}<>=":
        b += 1
    word = text[a:b].rstrip(".:")
    if word.startswith(("/", "./", "../", "~/")) or _path_like(word):
        return True  # a path: trial dirs, job dirs
    if word.startswith(("http://", "https://")) and _url_path_hit(word, s - a, e - a):
        return True
    return (
        _ALLOWED_ID.match(text[s:e].strip("=._~-")) is not None
        or _ALLOWED_ID.match(word) is not None
    )


def _url_path_hit(url: str, s: int, e: int) -> bool:
    """Whether ``url[s:e]`` lies in the host and path of a URL without credentials and every
    ``/``-separated piece of it is a hex content address, a host name, a readable slug
    (``Protecting-MCP-Safety-via-…``) or shorter than a key (design 408). Queries, fragments
    and user:password@ never yield; webhook URLs are redacted before this runs."""
    m = _URL.match(url)
    if m is None or "@" in m.group(1) or e > m.end():
        return False
    return all(
        len(p) < 16 or _URL_PIECE.match(p) is not None or _identifier_like(p)
        for p in url[s:e].strip(":/").split("/")
    )


#: detect-secrets' JWT pattern read once per run of its characters: at the run's start, only
#: when the run is followed by "." and another run (then its first "eyJ" that has a character
#: after it starts the match, as the plugin's leftmost match does); the plugin's own pattern
#: scans to the run's end from every "eyJ" in it (100,000 characters of "eyJ": 3.4 s)
_JWT_LINEAR = re.compile(
    r"(?<![A-Za-z0-9_=-])(?=[A-Za-z0-9_=-]*+\.[A-Za-z0-9_=-])[A-Za-z0-9_=-]*?"
    r"(eyJ[A-Za-z0-9_=-]+\.[A-Za-z0-9_=-]+\.?)"
)
_OPENAI_RUN = re.compile(r"[A-Za-z0-9_-]+")
_OPENAI_MARK = re.compile(r"(?<=[A-Za-z0-9]{20})T3BlbkFJ(?=[A-Za-z0-9]{20})")


def _openai_linear(text: str) -> Iterator[tuple[int, int]]:
    """The matches of detect-secrets' OpenAI pattern (``sk-``, letters, digits, ``-`` and
    ``_``, then 20 letters or digits, ``T3BlbkFJ`` and 20 more), one scan: a match lies in one
    run of those characters, from the run's first ``sk-`` to its last marker that has 20
    letters or digits on each side and room for ``sk-`` before them, so a run holds at most
    one (the pattern's greedy middle from every ``sk-`` of a failing run is quadratic)."""
    for run in _OPENAI_RUN.finditer(text):
        word = run.group(0)
        first = word.find("sk-")
        marks = [m.start() for m in _OPENAI_MARK.finditer(word)] if first >= 0 else []
        if marks and marks[-1] - 20 >= first + 3:
            yield run.start() + first, run.start() + marks[-1] + 28


def _plugin_spans(rx: re.Pattern[str], text: str) -> Iterator[tuple[int, int]]:
    """``rx``'s matches in ``text`` as its first matched group's span, else the whole match
    trimmed; the two quadratic plugin patterns through their linear equals."""
    if rx.pattern == _OPENAI_PATTERN:
        for s, e in _openai_linear(text):
            yield _trim(text, s, e)
        return
    if rx.pattern == _JWT_PATTERN:
        for m in _JWT_LINEAR.finditer(text):
            yield _trim(text, *m.span(1))
        return
    for m in rx.finditer(text):
        g = next((i for i in range(1, (m.lastindex or 0) + 1) if m.group(i)), 0)
        yield m.span(g) if g else _trim(text, *m.span())


#: detect-secrets 1.5's patterns read by :func:`_plugin_spans`' linear equals (another
#: version's pattern is not equal to these and is used as it is)
_OPENAI_PATTERN = "sk-[A-Za-z0-9-_]*[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}"
_JWT_PATTERN = r"eyJ[A-Za-z0-9-_=]+\.[A-Za-z0-9-_=]+\.?[A-Za-z0-9-_.+/=]*?"


def spans(text: str) -> list[tuple[int, int, str]]:
    """(start, end, kind) of every secret found in ``text``, unmerged."""
    out: list[tuple[int, int, str]] = []
    low = text.lower()
    for kind, rx, needles in _plugins():
        if needles and not any(n in low for n in needles):
            continue
        for s, e in _plugin_spans(rx, text):
            if e > s:
                out.append((s, e, kind))
    for kind, rx, group, needles in _OWN:
        if not any(n in low for n in needles):
            continue
        for m in rx.finditer(text):
            if m.group(group) and (kind != "keyword_value" or _value_like(m.group(group))):
                out.append((*m.span(group), kind))
    for m in _PREFIXED.finditer(text):
        tail = m.group(1)
        if len(tail) >= 20 and not _HEXISH.match(tail) and _random_looking(tail, 3.7):
            out.append((m.start(), m.end(), "prefixed_token"))
    for m in _TOKEN.finditer(text):
        tok = m.group(0)
        long_mixed = (
            len(tok) >= 32
            and any(c.isupper() for c in tok)
            and any(c.islower() for c in tok)
            and not _LOWER_RUN.search(tok)
        )
        # design 271: a bare value of 20+ letters and digits at 4.5 bits per character is
        # random enough on its own (single-case keys: Asana, Airtable, Algolia, ...).
        if (long_mixed or len(tok.strip("=._~-")) >= BARE_MIN_LEN) and _random_looking(
            tok, BARE_ENTROPY
        ):
            out.append((m.start(), m.end(), "high_entropy"))
    return [x for x in out if "[REDACTED" not in text[x[0] : x[1]] and not _allowed(text, *x)]


def _merged(found: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    merged: list[tuple[int, int, str]] = []
    for s, e, k in sorted(found):
        if merged and s <= merged[-1][1]:
            ps, pe, pk = merged[-1]
            merged[-1] = (ps, max(pe, e), pk)
        else:
            merged.append((s, e, k))
    return merged


def redact(text: str, marker: Callable[[str], str]) -> str:
    """``text`` with every secret span replaced by ``marker(kind)``."""
    found = spans(text)
    if "\n" in text:
        # join tokens wrapped over lines; keep spans that cross a removed break
        src: list[int] = []
        pieces: list[str] = []
        pos = 0
        for m in _BREAK.finditer(text):
            pieces.append(text[pos : m.start()])
            src += range(pos, m.start())
            pos = m.end()
        if pieces:
            pieces.append(text[pos:])
            src += range(pos, len(text))
            joined = "".join(pieces)
            for s, e, k in spans(joined):
                os_, oe = src[s], src[e - 1] + 1
                if oe - os_ == e - s:
                    continue  # does not cross a break: found on the text itself
                # design 408: an id, hash or path ending a line is not the head of a
                # wrapped token ("…SessionId=<uuid>\nLATAM export")
                line_end = next(src[i] + 1 for i in range(s, e - 1) if src[i + 1] != src[i] + 1)
                head = re.split(r"[=:]", text[os_:line_end])[-1]
                if not head or not _allowed(text, line_end - len(head), line_end, k):
                    found.append((os_, oe, k))
    if not found:
        return text
    out = []
    pos = 0
    for s, e, k in _merged(found):
        out.append(text[pos:s])
        out.append(marker(k))
        pos = e
    out.append(text[pos:])
    return "".join(out)
