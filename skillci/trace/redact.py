"""Remove secrets from anything before it is written: run records, blobs, reports.

The detector is Yelp's ``detect-secrets`` (its regex plugins: AWS, Slack tokens and
webhooks, Stripe, GitLab, PyPI, SendGrid, npm, JWT, Discord, Telegram, Twilio, Square,
Mailchimp, Azure, basic-auth URLs ...) plus a Shannon-entropy check on key-like tokens
(detect-secrets' own entropy function), plus skillci's own patterns only for formats it
lacks (see ``_OWN``). Text split over a line break inside a token is joined before matching,
and dict keys are redacted like values (design 162). In order:

1. **Shapes** of well-known credentials: OpenAI/Anthropic-style ``sk-…``, GitHub
   ``ghp_/gho_/ghu_/ghs_/ghr_…`` and ``github_pat_…``, Slack ``xox?-…``, AWS ``AKIA…``/
   ``ASIA…``, Google ``AIza…``, Hugging Face ``hf_…``, JWTs, PEM private keys,
   ``Authorization: Bearer …``, credentials in URLs (``https://user:pass@host``) and long
   hex/base64 values after ``key=``, ``token:``, ``secret=``, ``password=`` (password values
   of any length).
2. **Environment values** of variables whose *names* look secret (default ``*_KEY``,
   ``*_TOKEN``, ``*_SECRET``, ``*PASSWORD*``, ``*_PAT``; add patterns with
   ``SKILLCI_SECRET_ENV_NAMES=NAME_GLOB,...``): the literal value is replaced wherever it
   appears. Values shorter than 8 characters are ignored (``DEBUG_TOKEN=1`` must not
   redact every ``1``).
3. **Dict keys** that name a secret (``api_key``, ``password``, ``authorization``, an env
   name matching rule 2): their string value is replaced whatever its shape.

A match becomes ``[REDACTED:<kind>]``. Redaction works on values, not on serialized JSON,
so structural fields such as ``trial_cache_key`` or ``content_hash`` (bare hex) are kept.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

import skillci.trace.secretscan as secretscan

M = TypeVar("M", bound=BaseModel)

#: Env var name globs whose values are secret (case-insensitive).
DEFAULT_SECRET_ENV_PATTERNS: tuple[str, ...] = (
    "*_KEY",
    "*_TOKEN",
    "*_SECRET",
    "*PASSWORD*",
    "*_PAT",
    "*_API_KEY*",
    "*_CREDENTIALS",
    "*_KEYS",
)
SECRET_ENV_NAMES_ENV = "SKILLCI_SECRET_ENV_NAMES"  # noqa: S105 - a variable name
MIN_ENV_VALUE_LEN = 8

#: Dict keys whose string values are always secret (case-insensitive globs).
SECRET_FIELD_PATTERNS: tuple[str, ...] = (
    "*api_key*",
    "*apikey*",
    "*secret*",
    "*password*",
    "*passwd*",
    "authorization",
    "*access_token*",
    "*refresh_token*",
    "*private_key*",
    "token",
    "*_token",
)
#: Keys that look secret by name but hold content hashes / ids skillci writes itself.
NON_SECRET_FIELDS = re.compile(r"(cache_key|_hash|_tokens|token_count|tokens)$", re.IGNORECASE)


def marker(kind: str) -> str:
    return f"[REDACTED:{kind}]"


_B64 = r"[A-Za-z0-9+/_.~=-]"
#: (kind, pattern). Order matters: specific shapes before generic ones.
_SHAPES: tuple[tuple[str, re.Pattern[str], tuple[str, ...]], ...] = (
    ("github_pat", re.compile(r"\bgithub_pat_[A-Za-z0-9_]{20,}"), ("github_pat_",)),
    ("github_token", re.compile(r"\bgh[pousr]_[A-Za-z0-9]{20,}"), ("gh",)),
    ("api_key", re.compile(r"\bsk-[A-Za-z0-9_-]{16,}"), ("sk-",)),
    ("slack_token", re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), ("xox",)),
    ("aws_access_key", re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), ("akia", "asia")),
    ("google_api_key", re.compile(r"\bAIza[0-9A-Za-z_-]{35}"), ("aiza",)),
    ("hf_token", re.compile(r"\bhf_[A-Za-z0-9]{30,}"), ("hf_",)),
    (
        "jwt",
        re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
        ("eyj",),
    ),
)
#: Webhook URLs whose path is the credential (design 341).
_WEBHOOK = re.compile(
    r"https?://(?:hooks\.zapier\.com/hooks/catch/\d+/[A-Za-z0-9]+/?|"
    r"hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_-]{10,}|"
    r"(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/[A-Za-z0-9_-]{20,}|"
    r"[a-z0-9-]+\.webhook\.office\.com/[^\s\"'<>]{20,}|"
    r"maker\.ifttt\.com/trigger/[^\s/]+/with/key/[A-Za-z0-9_-]{10,})"
)
#: The one secret the workflows hand to the gate: ``NAME=value`` lines (design 341).
MODEL_KEYS_ENV = "SKILLCI_MODEL_KEYS"
_PEM_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")
_PEM_END = re.compile(r"-----END [A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----")


def _redact_pem(text: str) -> str:
    """Replace PEM private key blocks; a block cut off before its END is redacted to the end."""
    out: list[str] = []
    pos = 0
    while (begin := _PEM_BEGIN.search(text, pos)) is not None:
        out.append(text[pos : begin.start()])
        out.append(marker("private_key"))
        end = _PEM_END.search(text, begin.end())
        if end is None:
            return "".join(out)
        pos = end.end()
    out.append(text[pos:])
    return "".join(out)


_BEARER = re.compile(r"(?i)\b(bearer|token|basic)([ \t]{1,8})([A-Za-z0-9+/_.~=-]{12,4096})")
_URL_CREDS = re.compile(
    r"(?i)(?<![a-z0-9+.-])([a-z][a-z0-9+.-]{0,30}://)([^/\s:@]{0,256}):([^/\s@]{1,256})@"
)
_ASSIGN = re.compile(
    # Bounded and anchored at a token start: linear time on long runs of word characters.
    r"(?i)(?<![A-Za-z0-9_.-])"
    r"(?P<name>[A-Za-z0-9_.-]{0,40}?(?:key|token|secret|password|passwd|pwd|access_?id|client_?id|auth)[A-Za-z0-9_]{0,40})"
    r"(?P<q1>[\"']?(?:[ \t]{1,4}(?:string|str|String|const))?)"
    r"(?P<sep>[ \t]{0,8}(?::=|\.=|\?=|=>|[=:])[ \t]{0,8})(?P<q2>[\"'`]?)(?P<val>[^\s\"'`,;&}<]{1,4096})"
)
_HEXB64_VALUE = re.compile(rf"^{_B64}{{12,}}$")


#: Texts a :class:`Redactor` remembers the redaction of, and the longest one it remembers.
MEMO_MAX = 20_000
MEMO_MAX_LEN = 4_096
#: Memos shared by every :class:`Redactor` of the same rules (design 433), by their digest.
_MEMOS: dict[str, dict[str, str]] = {}
#: Distinct rule sets remembered (tests build many); beyond it the memos start afresh.
MEMOS_MAX = 32


def _model_key_values(text: str) -> list[tuple[str, str]]:
    """Entries of ``SKILLCI_MODEL_KEYS`` (``NAME=value`` lines, ``export``/quotes allowed);
    parsed here rather than imported from providers (trace must not import providers)."""
    out: list[tuple[str, str]] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        name, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out.append((name.strip(), value))
    return out


def _memo(patterns: tuple[str, ...], literals: list[tuple[str, str]]) -> dict[str, str]:
    """The memo of the Redactors with these rules (keyed by their digest, not the values)."""
    h = hashlib.sha256(json.dumps([patterns, literals]).encode()).hexdigest()
    memo = _MEMOS.get(h)
    if memo is None:
        if len(_MEMOS) >= MEMOS_MAX:
            _MEMOS.clear()
        memo = _MEMOS.setdefault(h, {})
    return memo


class Redactor:
    """Replaces secrets in strings and JSON-like data. Cheap to build; reuse per write."""

    def __init__(
        self,
        *,
        env: Mapping[str, str] | None = None,
        secret_env_patterns: Iterable[str] | None = None,
        extra_secrets: Iterable[str] = (),
    ) -> None:
        env = os.environ if env is None else env
        patterns = list(DEFAULT_SECRET_ENV_PATTERNS if secret_env_patterns is None else ())
        if secret_env_patterns is not None:
            patterns += list(secret_env_patterns)
        patterns += [p.strip() for p in env.get(SECRET_ENV_NAMES_ENV, "").split(",") if p.strip()]
        self.secret_env_patterns: tuple[str, ...] = tuple(p.upper() for p in patterns)
        values: dict[str, str] = {}
        for name, value in env.items():
            if len(value) >= MIN_ENV_VALUE_LEN and self.is_secret_env_name(name):
                values[value] = f"env:{name}"
        for name, value in _model_key_values(env.get(MODEL_KEYS_ENV, "")):
            if len(value) >= MIN_ENV_VALUE_LEN:
                values[value] = f"env:{MODEL_KEYS_ENV}:{name}"
        for value in extra_secrets:
            if len(value) >= MIN_ENV_VALUE_LEN:
                values.setdefault(value, "secret")
        # longest first so a value containing another is replaced whole
        self._literals = sorted(values.items(), key=lambda kv: -len(kv[0]))
        #: text -> redacted text: a report repeats its ids, suite and task names many times
        #: (a 50-task gate report: 2 285 strings, 720 distinct), and the result depends only
        #: on the text and the fields above, so every Redactor of the same rules shares it
        #: (design 433: a trial's logs, its record and the store's second pass over the
        #: record redact the same strings; a string redaction left as it was is found again)
        self._done = _memo(self.secret_env_patterns, self._literals)
        secretscan.warm()

    def is_secret_env_name(self, name: str) -> bool:
        upper = name.upper()
        return any(fnmatch.fnmatchcase(upper, p) for p in self.secret_env_patterns)

    def is_secret_field(self, key: str) -> bool:
        if NON_SECRET_FIELDS.search(key):
            return False
        low = key.lower()
        return self.is_secret_env_name(key) or any(
            fnmatch.fnmatchcase(low, p) for p in SECRET_FIELD_PATTERNS
        )

    def redact_text(self, text: str) -> str:
        """``text`` with every secret replaced by ``[REDACTED:<kind>]``."""
        if not text:
            return text
        done = self._done.get(text)
        if done is None:
            done = self._redact_text(text)
            if len(self._done) >= MEMO_MAX:
                self._done.clear()
            if len(text) <= MEMO_MAX_LEN:
                self._done[text] = done
        return done

    def _redact_text(self, text: str) -> str:
        for value, kind in self._literals:
            if value in text:
                text = text.replace(value, marker(kind))
        if "PRIVATE KEY" in text:
            text = _redact_pem(text)
        low = text.lower()
        for kind, pattern, needles in _SHAPES:
            if any(n in low for n in needles):
                text = pattern.sub(marker(kind), text)
        if "hook" in text or "ifttt" in text:
            text = _WEBHOOK.sub(marker("webhook_url"), text)
        text = _URL_CREDS.sub(lambda m: f"{m.group(1)}{marker('url_credentials')}@", text)
        text = _BEARER.sub(self._bearer, text)
        text = _ASSIGN.sub(self._assignment, text)
        return secretscan.redact(text, marker)

    @staticmethod
    def _bearer(m: re.Match[str]) -> str:
        scheme, value = m.group(1), m.group(3)
        # "Bearer" is specific; "token"/"basic" are also English words: want a digit too.
        if scheme.lower() != "bearer" and not (
            re.search(r"\d", value) and re.search(r"[A-Za-z]", value)
        ):
            return m.group(0)
        return f"{scheme}{m.group(2)}{marker('bearer_token')}"

    @staticmethod
    def _assignment(m: re.Match[str]) -> str:
        name, val = m.group("name"), m.group("val")
        if val.startswith(("[REDACTED", "$")) or NON_SECRET_FIELDS.search(name):
            return m.group(0)
        is_password = re.search(r"(?i)pass|pwd", name) is not None
        # "Password: never print it" is prose; "password: hunter2" is not.
        prose = ":" in m.group("sep") and not m.group("q2") and re.fullmatch(r"[A-Za-z]+", val)
        if is_password and prose:
            return m.group(0)
        if not is_password and not _HEXB64_VALUE.match(val):
            return m.group(0)
        if not is_password and not re.search(r"\d", val):
            return m.group(0)  # words like 'key: cache_directory_of_tasks' are prose
        return (
            f"{name}{m.group('q1')}{m.group('sep')}{m.group('q2')}"
            f"{marker('password' if is_password else 'secret_assignment')}"
        )

    def redact_obj(self, obj: Any) -> Any:
        """Redact a JSON-like structure (dicts, lists, strings; other scalars unchanged)."""
        if isinstance(obj, str):
            return self.redact_text(obj)
        if isinstance(obj, list | tuple):
            return [self.redact_obj(v) for v in obj]
        if isinstance(obj, dict):
            out: dict[Any, Any] = {}
            for k, v in obj.items():
                key = self.redact_text(k) if isinstance(k, str) else k
                if isinstance(k, str) and isinstance(v, str) and v and self.is_secret_field(k):
                    out[key] = v if v.startswith("[REDACTED") else marker(f"field:{k}")
                else:
                    out[key] = self.redact_obj(v)
            return out
        return obj

    def redact_model(self, model: M) -> M:
        """A copy of ``model`` with every string redacted (validated again)."""
        data = self.redact_obj(model.model_dump(mode="json", by_alias=True))
        return type(model).model_validate(data)


def redact_text(text: str) -> str:
    """Redact with the default rules and the current process environment."""
    return Redactor().redact_text(text)


#: Files larger than this are not rewritten (logs that big are not kept as text anyway).
MAX_REDACT_FILE_BYTES = 20 * 1024 * 1024


def _one_document(text: str) -> bool:
    """A JSON file holding one document (else JSON Lines)."""
    return text.lstrip().startswith(("{", "[")) and "\n{" not in text.strip()


def _redact_json(text: str, r: Redactor) -> str | None:
    """A JSON (or JSON Lines) file with every string redacted as a string: on the raw text,
    escaped quotes and ``\\n`` hide the context detectors match on. The text itself when
    nothing changes (the file keeps its bytes); None when it is not JSON."""
    try:
        if _one_document(text):
            data = json.loads(text)
            clean = r.redact_obj(data)
            if clean == data:
                return text
            return json.dumps(clean, ensure_ascii=False, indent=1) + "\n"
        rows = [json.loads(ln) if ln.strip() else None for ln in text.splitlines()]
        cleaned = [r.redact_obj(v) for v in rows]
    except (ValueError, RecursionError):  # too deep for JSON: redacted as text
        return None
    if cleaned == rows:
        return text
    return "".join(("" if v is None else json.dumps(v, ensure_ascii=False)) + "\n" for v in cleaned)


def _raw_pass_keeping_json(text: str, r: Redactor) -> str:
    """The raw-text pass over JSON whose strings were already redacted one by one, kept only
    where it leaves valid JSON: on escaped text a detector can match across an escape
    (``\\n`` + token reads as one token) and its marker would break the line; such a match
    is an artifact of the escaping, and every string in the line has already been redacted."""
    parts = [text] if _one_document(text) else text.splitlines(keepends=True)
    out = []
    for part in parts:
        raw = r.redact_text(part)
        if raw != part and part.strip():
            try:
                json.loads(raw)
            except ValueError:
                raw = part
        out.append(raw)
    return "".join(out)


def redact_files(root: Path, redactor: Redactor | None = None) -> int:
    """Redact every UTF-8 text file under ``root`` in place (atomically); returns how many
    changed. Binary files and symlinks are left alone."""
    from skillci.fsutil import atomic_write_text

    r = redactor or Redactor()
    changed = 0
    for path, text, clean in _redacted_files(root, r):
        if clean != text:
            atomic_write_text(path, clean)
            changed += 1
    return changed


def warm_files(root: Path, redactor: Redactor) -> None:
    """Redact the text files under ``root`` as :func:`redact_files` would, writing nothing:
    ``redactor``'s memo then holds their strings, and a :func:`redact_files` of the same
    files later (e.g. once the verifier has run) finds them there (design 433)."""
    for _ in _redacted_files(root, redactor):
        pass


def _redacted_files(root: Path, r: Redactor) -> Iterator[tuple[Path, str, str]]:
    """(path, text, redacted text) of every UTF-8 text file under ``root``."""
    for path in sorted(root.rglob("*")) if root.is_dir() else []:
        try:
            if path.is_symlink() or not path.is_file():
                continue
            if path.stat().st_size > MAX_REDACT_FILE_BYTES:
                continue
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        parsed = _redact_json(text, r) if path.suffix in (".json", ".jsonl") else None
        clean = r.redact_text(text) if parsed is None else _raw_pass_keeping_json(parsed, r)
        yield path, text, clean


__all__ = [
    "DEFAULT_SECRET_ENV_PATTERNS",
    "MODEL_KEYS_ENV",
    "SECRET_ENV_NAMES_ENV",
    "Redactor",
    "marker",
    "redact_files",
    "redact_text",
    "warm_files",
]
