"""Time of the readers of untrusted text on their longest input, by the input's shape.

    python -m benchmarks.untrusted_worst_case [--chars N] [--log-chars N] [--skill-chars N]
        [--part guard|redactor|lint|both|all] [--json]

A patch field is scanned up to ``skillci.patch.guard.MAX_TEXT_CHARS`` (20,000) characters,
and a patch from untrusted provenance chooses its fields' shape; a trial's output, which the
redactor reads before anything is stored, is the task's. A pattern read from every position of
a run (of spaces, of "../", of zero-width characters, of "sk-") costs the square of the run's
length. So the patch guard is timed on runs of each shape filling one rule step, the
redactor on runs of each shape filling a log, and (``--part lint``) ``skillci skill lint`` on a
SKILL.md whose body is such a run after one word (a pull request from a fork writes its
skill's text; design 468), each next to ordinary text of the same length. ``both`` is the guard and the redactor;
``all`` adds lint.
Prints each shape's seconds and its ratio to the ordinary text, slowest first, all measured in
this run.
"""

from __future__ import annotations

import argparse
import json
import time

from benchmarks import guard_public as gp
from benchmarks.guard_corpus import ROOT
from skillci.patch.guard import MAX_TEXT_CHARS
from skillci.skill.lint import lint
from skillci.skill.package import SkillPackage
from skillci.trace.redact import Redactor

#: one unit each, repeated to the field's length
SHAPES = tuple(
    dict.fromkeys(
        (
            *" \n\t#-*>=/.,:;'\"`()[]{}<>|&_+!?%$@\\~^0a",
            "\u200b",
            "é",
            "中",
            "../",
            "a\n",
            "ab ",
            "- a\n",
            "# a\n",
            "x=1\n",
            "'a' ",
            '"a" ',
            "http://a.io/",
            "${A}",
            "never ",
            "and then ",
        )
    )
)
#: the redactor's shapes: the guard's, and the prefixes of the secrets it looks for
LOG_SHAPES = tuple(
    dict.fromkeys(
        (
            *SHAPES,
            "eyJ",
            "sk-",
            "sk-ant-",
            "AKIA",
            "ghp_",
            "glpat-",
            "xoxb-",
            "AccountKey=",
            "key=",
            "token: ",
            "Bearer ",
            "-----BEGIN ",
            "0123456789abcdef",
            "a1b2",
        )
    )
)
LOG = "PASSED tests/test_parse.py::test_dates[2026-01-01] in 0.01s\n"
PROSE = (
    "Run the failing test first, then read the traceback and fix the code it points to; "
    "never edit the test to make it pass. "
)


def fill(unit: str, n: int) -> str:
    return (unit * (n // len(unit) + 1))[:n]


def redact_time(text: str) -> float:
    red = Redactor()
    t0 = time.perf_counter()
    red.redact_text(text)
    return time.perf_counter() - t0


def table(title: str, base: float, rows: list[tuple[float, str]]) -> None:
    print(f"{title}; ordinary text: {base:.2f} s")
    for s, u in rows:
        print(f"  {u!r:>18} {s:7.2f} s  {s / max(base, 1e-3):6.1f}x")


def timed(pkg: SkillPackage, text: str) -> float:
    data = gp.patch_for("rule.steps", text)
    t0 = time.perf_counter()
    gp.judge(pkg, data)
    return time.perf_counter() - t0


#: lint's shapes: the guard's, and markdown's own openers
SKILL_SHAPES = tuple(dict.fromkeys((*SHAPES, "`", "``", "[", "![", "](", "*", "_", "> ", "|")))
#: the run follows a word on its line: a line that begins with three backticks opens a fence
FRONT = (
    "---\nname: runs\ndescription: A skill whose body is a run of one shape.\n---\n\n# Runs\n\nSee "
)


def lint_time(body: str) -> float:
    pkg = SkillPackage({"SKILL.md": (FRONT + body + "\n").encode()})
    t0 = time.perf_counter()
    lint(pkg)
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=MAX_TEXT_CHARS, help="the field's length")
    ap.add_argument("--log-chars", type=int, default=200_000, help="the log's length")
    ap.add_argument("--skill-chars", type=int, default=20_000, help="lint: the body's length")
    ap.add_argument(
        "--part",
        choices=("guard", "redactor", "lint", "both", "all"),
        default="both",
        help="what to time (both: the guard and the redactor; all: and lint)",
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    base, rows, log, red, body, lints = 0.0, [], 0.0, [], 0.0, []
    if args.part in ("guard", "both", "all"):
        pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
        timed(pkg, "warm up")
        base = timed(pkg, fill(PROSE, args.chars))
        rows = [(timed(pkg, fill(u, args.chars)), u) for u in SHAPES]
        rows.sort(key=lambda r: r[0], reverse=True)
    if args.part in ("redactor", "both", "all"):
        red = [(redact_time(fill(u, args.log_chars)), u) for u in LOG_SHAPES]
        red.sort(key=lambda r: r[0], reverse=True)
        log = redact_time(fill(LOG, args.log_chars))
    if args.part in ("lint", "all"):
        lint_time("warm up")
        body = lint_time(fill(PROSE, args.skill_chars))
        lints = [(lint_time(fill(u, args.skill_chars)), u) for u in SKILL_SHAPES]
        lints.sort(key=lambda r: r[0], reverse=True)
    if args.json:
        print(
            json.dumps(
                {
                    "guard": {
                        "chars": args.chars,
                        "prose_s": round(base, 3),
                        "shapes": [{"unit": u, "s": round(t, 3)} for t, u in rows],
                    },
                    "redactor": {
                        "chars": args.log_chars,
                        "log_s": round(log, 3),
                        "shapes": [{"unit": u, "s": round(t, 3)} for t, u in red],
                    },
                    "lint": {
                        "chars": args.skill_chars,
                        "prose_s": round(body, 3),
                        "shapes": [{"unit": u, "s": round(t, 3)} for t, u in lints],
                    },
                }
            )
        )
        return 0
    if rows:
        table(f"the patch guard, {args.chars} characters in one rule step", base, rows)
    if red:
        table(f"the redactor, {args.log_chars} characters of a log", log, red)
    if lints:
        table(f"skill lint, a SKILL.md body of {args.skill_chars} characters", body, lints)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
