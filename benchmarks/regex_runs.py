"""Which of skillci's regular expressions read a run of one character shape in more than linear
time?

    python -m benchmarks.regex_runs [--chars N] [--min-seconds S] [--json]

Design 466 found patterns that cost the square of a run's length (a run of spaces, of "../", of
"eyJ"): a patch, a trial's output or an imported artifact chooses its own shape, so each such
pattern is a way to stall the gate. This finds every pattern of the package: each module's
compiled patterns (imported, so patterns built at import time count too) and every string
literal given to ``re.compile``/``search``/``match``/``fullmatch``/``findall``/``finditer``/
``sub``/``subn``/``split`` anywhere, inside functions too (read from the source; nothing in a
function is run). A pattern its module reads through ``skillci.mdscan.bracket_matches`` (design
468) is timed through it, and one read only through a linear equal (:data:`READ_THROUGH`)
through that. Each is run with ``finditer`` over a run of every shape of
:data:`benchmarks.untrusted_worst_case.LOG_SHAPES` at ``N`` and ``2N`` characters; a pattern
whose time grows more than threefold (linear: twofold; quadratic: fourfold) and reaches
``--min-seconds`` at ``2N`` is printed with the shape, its two times and where it is defined,
slowest first (a pattern already past ``--max-seconds`` at ``N`` is printed without the second
run). ``finditer`` is the scan a search or a substitution makes; a pattern used only
with ``match``/``fullmatch`` is marked, since it is tried at one position, not at each.
Exit 0 always (a report, not a check); all times are measured in this run.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import json
import pkgutil
import re
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchmarks.untrusted_worst_case import LOG_SHAPES, fill
from skillci.analyze.detectors.understanding import _secret_path
from skillci.mdscan import bracket_matches
from skillci.providers.sim.evidence import log_path
from skillci.providers.sim.skilltext import named_paths
from skillci.skill.render import strip_markup
from skillci.tasks.loader import toml_header
from skillci.trace.importers.benchflow import skill_md_paths
from skillci.trace.importers.common import verifier_paths

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "skillci"
#: ``re`` functions whose first argument is a pattern
CALLS = frozenset(
    {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
)
ANCHORED = frozenset({"match", "fullmatch"})
#: patterns their module reads only through a function that finds the same matches in linear
#: time (designs 466, 468), by the pattern's module-level name
READ_THROUGH: dict[str, Callable[[str], object]] = {
    "skillci.trace.importers.common._VERIFIER_PATH": verifier_paths,
    "skillci.trace.importers.benchflow._SKILL_MD": skill_md_paths,
    "skillci.analyze.detectors.understanding._SECRET_PATH_RE": _secret_path,
    "skillci.skill.render._MARKUP": strip_markup,
    "skillci.tasks.loader._TOML_HEADER": toml_header,
    "skillci.providers.sim.evidence._LOG_PATH": log_path,
    "skillci.providers.sim.skilltext._PATH_RE": named_paths,
}


@dataclass
class Found:
    pattern: str
    flags: int
    where: set[str] = field(default_factory=set)
    uses: set[str] = field(default_factory=set)
    #: what its module reads it through instead of ``finditer`` (timed so): ``bracket_matches``
    #: with the module's ``escapes``, or a linear equal of :data:`READ_THROUGH`
    reader: Callable[[str], object] | None = None


def _flags(node: ast.expr | None) -> int | None:
    """The value of a flags argument made of ``re.X`` names joined by ``|``; None otherwise."""
    if node is None:
        return 0
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        value = getattr(re, node.attr, None)
        return int(value) if isinstance(value, re.RegexFlag) else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        left, right = _flags(node.left), _flags(node.right)
        return None if left is None or right is None else left | right
    return None


def literal_patterns(path: Path, rel: str) -> list[tuple[str, int, str, str]]:
    """(pattern, flags, where, the re function) of each call on a string literal in ``path``."""
    out = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
            continue
        fn = node.func
        if not (isinstance(fn.value, ast.Name) and fn.value.id == "re" and fn.attr in CALLS):
            continue
        if not node.args or not isinstance(node.args[0], ast.Constant):
            continue
        pattern = node.args[0].value
        if not isinstance(pattern, str):
            continue
        flag_arg = next((k.value for k in node.keywords if k.arg == "flags"), None)
        if flag_arg is None:
            pos = {"compile": 1, "sub": 3, "subn": 3, "split": 2}.get(fn.attr, 2)
            flag_arg = node.args[pos] if len(node.args) > pos else None
        flags = _flags(flag_arg)
        if flags is not None:
            out.append((pattern, flags, f"{rel}:{node.lineno}", fn.attr))
    return out


def bracket_names(path: Path) -> dict[str, bool]:
    """The module-level names ``path`` passes to ``bracket_matches``/``bracket_sub``, with the
    ``escapes`` they are read with."""
    out = {}
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id not in ("bracket_matches", "bracket_sub") or not node.args:
            continue
        esc = next((k.value for k in node.keywords if k.arg == "escapes"), None)
        if isinstance(node.args[0], ast.Name) and isinstance(esc, ast.Constant):
            out[node.args[0].id] = bool(esc.value)
    return out


def patterns() -> list[Found]:
    """Every pattern of the package, deduplicated by (pattern, flags)."""
    found: dict[tuple[str, int], Found] = {}

    def add(pattern: str, flags: int, where: str, use: str) -> Found:
        try:  # inline flags ("(?i)") count as flags: a literal and its compiled form are one
            flags = re.compile(pattern, flags).flags & ~int(re.UNICODE)  # implied for str
        except re.error:
            flags &= ~int(re.UNICODE)
        f = found.setdefault((pattern, flags), Found(pattern, flags))
        f.where.add(where)
        f.uses.add(use)
        return f

    pkg = importlib.import_module(PACKAGE)
    for info in pkgutil.walk_packages(pkg.__path__, f"{PACKAGE}."):
        if info.name.endswith(".__main__"):  # running it is the CLI
            continue
        try:
            mod = importlib.import_module(info.name)
        except ImportError as exc:  # an optional dependency: its literals are still read below
            print(f"  {info.name}: not imported ({exc})", file=sys.stderr)
            continue
        source = getattr(mod, "__file__", None)
        bracketed = bracket_names(Path(source)) if source else {}
        for name, value in vars(mod).items():
            if isinstance(value, re.Pattern) and isinstance(value.pattern, str):
                where = f"{info.name}.{name}"
                f = add(value.pattern, value.flags, where, "compiled")
                if name in bracketed:
                    f.uses.add("bracket_matches")
                    f.reader = functools.partial(bracket_matches, value, escapes=bracketed[name])
                f.reader = READ_THROUGH.get(where, f.reader)
    for path in sorted((ROOT / PACKAGE).rglob("*.py")):
        rel = str(path.relative_to(ROOT))
        for pattern, flags, where, use in literal_patterns(path, rel):
            add(pattern, flags, where, use)
    return list(found.values())


def scan_time(
    rx: re.Pattern[str], text: str, reader: Callable[[str], object] | None = None
) -> float:
    """Seconds to read ``text`` as the pattern is read: ``finditer``, or ``reader``."""
    t0 = time.perf_counter()
    if reader is not None:
        reader(text)
    else:
        for _ in rx.finditer(text):
            pass
    return time.perf_counter() - t0


def superlinear(
    found: list[Found], chars: int, min_seconds: float, max_seconds: float = 2.0
) -> list[tuple[float, float, str, Found]]:
    """(time at 2N, time at N, shape, pattern) of each pattern and shape past the bar."""
    out = []
    for i, f in enumerate(found):
        if i % 200 == 0:
            print(f"  {i}/{len(found)} patterns", file=sys.stderr, flush=True)
        try:
            rx = re.compile(f.pattern, f.flags)
        except re.error:
            continue
        worst: tuple[float, float, str] | None = None
        for unit in LOG_SHAPES:
            small = scan_time(rx, fill(unit, chars), f.reader)
            if small < min_seconds / 8:  # even quadratic stays under the bar at 2N
                continue
            if small > max_seconds:
                big = small * 4  # not run: quadratic's estimate, marked by the 4.0x ratio
            else:
                big = scan_time(rx, fill(unit, 2 * chars), f.reader)
            if big >= min_seconds and big > 3 * small and (worst is None or big > worst[0]):
                worst = (big, small, unit)
        if worst:
            out.append((*worst, f))
    out.sort(key=lambda r: r[0], reverse=True)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--chars", type=int, default=4_000, help="N: the shorter run's length")
    ap.add_argument(
        "--min-seconds", type=float, default=0.02, help="report a pattern this slow at 2N"
    )
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    found = patterns()
    slow = superlinear(found, args.chars, args.min_seconds)
    took = time.perf_counter() - t0
    if args.json:
        rows = [
            {
                "pattern": f.pattern,
                "flags": f.flags,
                "where": sorted(f.where),
                "uses": sorted(f.uses),
                "unit": unit,
                "s_n": round(small, 4),
                "s_4n": round(big, 4),
            }
            for big, small, unit, f in slow
        ]
        print(json.dumps({"patterns": len(found), "chars": args.chars, "superlinear": rows}))
        return 0
    print(
        f"{len(found)} patterns, runs of {len(LOG_SHAPES)} shapes at {args.chars} and "
        f"{2 * args.chars} characters ({took:.0f} s): {len(slow)} grow faster than linear"
    )
    for big, small, unit, f in slow:
        only_anchored = f.uses <= ANCHORED
        print(
            f"  {big:7.3f} s at 2N ({big / max(small, 1e-6):4.1f}x N) on {unit!r}: "
            f"{', '.join(sorted(f.where))}{'  (match/fullmatch only)' if only_anchored else ''}"
        )
        print(f"      {f.pattern[:150]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
