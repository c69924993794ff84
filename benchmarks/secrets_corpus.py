"""Secret redaction on the gitleaks corpus, per format and context, and its false positives.

    python -m benchmarks.secrets_corpus [--verbose] [--benign-every N]

Corpus: tests/fixtures/secrets/secrets.jsonl (one test string per gitleaks rule). Each
secret is redacted in three kinds of context:

- ``sample``: gitleaks' own sample contexts (``x_api_token = "..."``, JSON, YAML, code);
- ``keyword``: prose naming the provider next to the value (``adafruit key: ...``,
  ``the adafruit token is ...``) - no assignment, no quotes;
- ``bare``: the value alone on a line.

``--sweep`` prints, for other entropy checks, how many still-missed bare formats they would
find (formats split dev / test-only by a hash of the name) and how many real-skill lines
they would newly change.

A format is *found* in a context when the secret is gone from every text of that context.
False positives: every non-empty line of the real skills' text files under
tests/fixtures/real-skills that redaction changes (they hold no live secrets; each changed
line is printed with ``--verbose``).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

from skillci.trace import secretscan
from skillci.trace.redact import Redactor

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "secrets" / "secrets.jsonl"
REAL_SKILLS = ROOT / "tests" / "fixtures" / "real-skills"
_TOK = re.compile(r"[A-Za-z0-9+/=_\-.]{16,}")
TEXT_SUFFIXES = (".md", ".py", ".sh", ".js", ".ts", ".json", ".yaml", ".yml", ".toml", ".txt")


def contexts(item: dict[str, str]) -> dict[str, list[str]]:
    i, s = item["ident"], item["secret"]
    name = i or item["format"].split("-")[0]
    sample = (
        [
            f'{i}_api_token = "{s}"',
            f"{i}Token={s}",
            f'{{\n    "{i}_token": "{s}"\n}}',
            f"{i}_token: '{s}'",
            f'var {i}Token string = "{s}"',
        ]
        if i
        else [s]
    )
    keyword = [f"{name} key: {s}", f"The {name} token is {s} for now."]
    return {"sample": sample, "keyword": keyword, "bare": [s]}


def load() -> list[dict[str, str]]:
    return [json.loads(x) for x in CORPUS.read_text(encoding="utf-8").splitlines() if x]


def benign_lines(every: int = 1) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for p in sorted(REAL_SKILLS.rglob("*")):
        if not p.is_file() or p.suffix not in TEXT_SUFFIXES:
            continue
        try:
            text = p.read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue
        out += [(str(p.relative_to(REAL_SKILLS)), ln) for ln in text.splitlines() if ln.strip()]
    return out[::every]


def _split(fmt: str) -> str:
    """dev / test by sha256 of the format name (fixed before looking at the values)."""
    return (
        "dev"
        if int(hashlib.sha256(fmt.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < 0.5
        else "test"
    )


def _entropy_check(min_len: float, limit: float) -> Callable[[str], bool]:
    ent = secretscan._entropy_fn()

    def hit(text: str) -> bool:
        for m in _TOK.finditer(text):
            t = m.group(0).strip("=._-")
            if len(t) < min_len or secretscan._identifier_like(t):
                continue
            if any(c.isdigit() for c in t) and any(c.isalpha() for c in t) and ent(t) >= limit:
                return True
        return False

    return hit


def _plugin_check(name: str, limit: float) -> Callable[[str], bool]:
    from detect_secrets.plugins import high_entropy_strings as hes

    plugin = getattr(hes, name)(limit=limit)
    return lambda text: bool(list(plugin.analyze_line(filename="x.txt", line=text, line_number=1)))


def sweep(r: Redactor, items: list[dict[str, str]]) -> None:
    """Which entropy checks would find the bare values still missed, at what cost in
    real-skill lines not changed today (design 271)."""
    missed = [it for it in items if it["secret"] in r.redact_text(it["secret"])]
    lines = [ln for _, ln in benign_lines() if r.redact_text(ln) == ln]
    checks: dict[str, Callable[[str], bool]] = {
        f"detect-secrets {n} limit {lim}": _plugin_check(n, lim)
        for n, lim in (("Base64HighEntropyString", 4.5), ("Base64HighEntropyString", 3.5))
    }
    checks["detect-secrets HexHighEntropyString limit 3.0"] = _plugin_check(
        "HexHighEntropyString", 3.0
    )
    for n in (20, 24, 32):
        for lim in (3.5, 4.0, 4.5):
            checks[f"letters+digits len>={n} entropy>={lim}"] = _entropy_check(n, lim)
    for label, fn in checks.items():
        got = {"dev": 0, "test": 0}
        tot = {"dev": 0, "test": 0}
        for it in missed:
            tot[_split(it["format"])] += 1
            got[_split(it["format"])] += fn(it["secret"])
        fp = sum(1 for ln in lines if fn(ln))
        print(
            f"[sweep] {label}: bare newly found dev {got['dev']}/{tot['dev']}, test-only "
            f"{got['test']}/{tot['test']}; real-skill lines newly changed {fp}/{len(lines)}"
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--verbose", "-v", action="store_true")
    ap.add_argument("--benign-every", type=int, default=1, help="check every Nth benign line")
    ap.add_argument("--sweep", action="store_true", help="entropy limits for bare values")
    args = ap.parse_args(argv)
    r = Redactor(env={})
    items = load()
    if args.sweep:
        sweep(r, items)
        return 0
    found: dict[str, list[str]] = {"sample": [], "keyword": [], "bare": []}
    missed: dict[str, list[str]] = {"sample": [], "keyword": [], "bare": []}
    for item in items:
        for ctx, texts in contexts(item).items():
            ok = all(item["secret"] not in r.redact_text(t) for t in texts)
            (found if ok else missed)[ctx].append(item["format"])
    n = len(items)
    for ctx in found:
        print(f"[{ctx}] found {len(found[ctx])}/{n} formats ({100 * len(found[ctx]) / n:.1f}%)")
        if args.verbose:
            print("  missed: " + ", ".join(missed[ctx]))
    lines = benign_lines(args.benign_every)
    changed = [(w, ln) for w, ln in lines if r.redact_text(ln) != ln]
    print(
        f"[benign] {len(lines)} lines of real skills' text files: changed by redaction "
        f"{len(changed)} ({100 * len(changed) / max(1, len(lines)):.2f}%)"
    )
    if args.verbose:
        for w, ln in changed:
            print(f"  FP {w}: {ln[:160]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
