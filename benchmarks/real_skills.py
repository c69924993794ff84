"""Real public skills through import, lint, render and export, per split of the corpus.

Usage: python -m benchmarks.real_skills [--json] [--split dev|test|all] [--verbose]

For every skill in tests/fixtures/real-skills/SOURCES.yaml (copied byte-exact from its
publisher's repository), measured with skillci's defaults:

- lossless: ``skill import`` then ``skill export`` gives back every file byte for byte
  (and the executable bits); a refused import counts as not lossless;
- lint errors: errors ``skill lint`` reports on the freshly imported package;
- indexed: the skill's loadable documents (bundled text docs: .md/.txt/.rst …) that the
  render counts (tokens > 0) and lists with a load-when line.

The split (dev / test-only) was fixed by a hash of the skill id before any skill was
looked at (see SOURCES.yaml); the test-only figure is the one to quote.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

import yaml

from skillci.errors import SkillciError
from skillci.skill.lint import lint
from skillci.skill.package import SKILL_MD, loadable_docs, read_executables, read_tree
from skillci.skill.porting import export_plain, import_plain
from skillci.skill.render import linking_sentence, render

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "fixtures" / "real-skills"


@dataclass
class SkillResult:
    id: str
    split: str
    lossless: bool
    lint_errors: int
    docs: int
    indexed: int
    linked: int = 0  # load-when taken from a sentence that links the file
    vague_warnings: int = 0
    problem: str = ""
    error_codes: list[str] = field(default_factory=list)


def measure(entry: dict[str, str]) -> SkillResult:
    folder = CORPUS / entry["dir"]
    files = read_tree(folder)
    executable = read_executables(folder)
    docs = loadable_docs(files)
    res = SkillResult(entry["id"], entry["split"], False, 0, len(docs), 0)
    try:
        pkg = import_plain(files, executable=executable, source=str(folder))
    except SkillciError as err:
        res.problem = f"import refused: {err.one_line()}"
        return res
    out = export_plain(pkg)
    res.lossless = out == files and pkg.executable == executable
    if not res.lossless:
        diff = sorted(set(out) ^ set(files)) or [r for r in files if out.get(r) != files[r]]
        res.problem = f"export differs: {diff[:3]}"
    report = lint(pkg)
    res.lint_errors = report.errors
    res.error_codes = sorted({f.code for f in report.findings if f.severity == "error"})
    res.vague_warnings = sum(f.code == "SK010" for f in report.findings)
    rendered = render(pkg, "folder")
    texts = [(SKILL_MD, pkg.text(SKILL_MD))] + [(r, pkg.text(r)) for r in docs]
    for rel in docs:
        f = rendered.file(rel)
        if f is not None and f.tokens > 0 and f.when:
            res.indexed += 1
            res.linked += f.when == linking_sentence(texts, rel)
    return res


def summary(results: list[SkillResult]) -> dict[str, object]:
    n = len(results)
    return {
        "skills": n,
        "lossless": f"{sum(r.lossless for r in results)}/{n}",
        "lint_errors": sum(r.lint_errors for r in results),
        "skills_with_lint_errors": sum(r.lint_errors > 0 for r in results),
        "indexed": f"{sum(r.indexed for r in results)}/{sum(r.docs for r in results)}",
        "load_when_from_link": sum(r.linked for r in results),
        "vague_warnings": sum(r.vague_warnings for r in results),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--split", choices=("dev", "test", "all"), default="all")
    ap.add_argument("--verbose", action="store_true", help="one line per skill")
    args = ap.parse_args(argv)
    entries = yaml.safe_load((CORPUS / "SOURCES.yaml").read_text(encoding="utf-8"))["skills"]
    start = time.monotonic()
    results = [measure(e) for e in entries if args.split == "all" or e["split"] == args.split]
    by_split = {
        s: summary([r for r in results if r.split == s])
        for s in ("dev", "test")
        if any(r.split == s for r in results)
    }
    if args.json:
        print(json.dumps({"splits": by_split, "skills": [asdict(r) for r in results]}, indent=1))
        return 0
    if args.verbose:
        for r in results:
            print(
                f"{r.split:4} {r.id:45} lossless={r.lossless!s:5} lint_errors={r.lint_errors}"
                f" {','.join(r.error_codes)} indexed={r.indexed}/{r.docs} {r.problem}"
            )
    for split, s in by_split.items():
        label = "test-only" if split == "test" else "dev"
        print(
            f"{label:9} {s['skills']:3} skills: import->export lossless {s['lossless']}, "
            f"lint errors at defaults {s['lint_errors']} (in {s['skills_with_lint_errors']} "
            f"skills), files indexed {s['indexed']} (load-when from the linking sentence: "
            f"{s['load_when_from_link']}); SK010 warnings on instruction sentences "
            f"{s['vague_warnings']}"
        )
    print(f"({time.monotonic() - start:.1f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
