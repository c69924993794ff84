"""skillci's own release: one version, checked where it is written, and the notes of a tag.

The version lives in ``skillci/__init__.py`` (``__version__``) only; pyproject.toml reads it
(``[tool.setuptools.dynamic]``). A release is ``cut`` (the version set, the CHANGELOG's
``[Unreleased]`` entries moved under ``## [X.Y.Z] - DATE``), committed, and tagged ``vX.Y.Z``;
the tag runs .github/workflows/publish.yml, whose first job is ``check --tag``. Design 350.

    python scripts/release.py check [--tag vX.Y.Z] [--notes FILE] [--root DIR]
    python scripts/release.py cut X.Y.Z [--date YYYY-MM-DD] [--dry-run] [--root DIR]

``check`` without ``--tag`` (the test suite runs it): the version is ``X.Y.Z``, pyproject.toml
takes it from ``skillci.__version__``, and the CHANGELOG's newest release heading, if any, is
that version. With ``--tag``: also the tag is ``v`` + the version and the CHANGELOG has a
non-empty section for it, written to ``--notes`` (the GitHub release's body). Exit codes: 0
agreed, 2 a disagreement (one line naming the file and what to do).

Standard library only: the workflow runs it before anything is installed.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
INIT = Path("skillci") / "__init__.py"
VERSION_LINE = re.compile(r'^__version__ = "([^"]*)"$', re.MULTILINE)
SEMVER = re.compile(r"(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)")
#: ``## [1.2.3]`` or ``## [1.2.3] - 2026-12-03``; ``## [Unreleased]`` is not a release.
HEADING = re.compile(r"^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?\s*$", re.MULTILINE)
UNRELEASED = "Unreleased"
EXIT_DISAGREE = 2


class Disagreement(Exception):
    """One place disagrees with the version: the message names the file and the fix."""


def read_version(root: Path) -> str:
    text = (root / INIT).read_text(encoding="utf-8")
    found = VERSION_LINE.findall(text)
    if len(found) != 1:
        raise Disagreement(f'{INIT}: expected one line `__version__ = "X.Y.Z"`')
    if not SEMVER.fullmatch(found[0]):
        raise Disagreement(f"{INIT}: __version__ {found[0]!r} is not X.Y.Z (semantic version)")
    return str(found[0])


def check_pyproject(root: Path) -> None:
    project = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    static = project.get("project", {}).get("version")
    if static is not None:
        raise Disagreement(
            f"pyproject.toml: [project] version = {static!r} is a second version; remove it "
            'and keep dynamic = ["version"] (skillci.__version__ is the one place)'
        )
    attr = project.get("tool", {}).get("setuptools", {}).get("dynamic", {}).get("version", {})
    dynamic = project.get("project", {}).get("dynamic", [])
    if "version" not in dynamic or attr.get("attr") != "skillci.__version__":
        raise Disagreement(
            'pyproject.toml: the version must be dynamic = ["version"] with '
            '[tool.setuptools.dynamic] version = { attr = "skillci.__version__" }'
        )


def sections(changelog: str) -> list[tuple[str, str | None, str]]:
    """(title, date, body) of each ``## [...]`` section, newest first."""
    marks = list(HEADING.finditer(changelog))
    out = []
    for i, m in enumerate(marks):
        end = marks[i + 1].start() if i + 1 < len(marks) else len(changelog)
        body = changelog[m.end() : end]
        body = re.sub(r"^\[[^\]]+\]: \S+\s*$", "", body, flags=re.MULTILINE)  # link refs
        out.append((m.group(1), m.group(2), body.strip()))
    return out


def check_changelog(root: Path, version: str, tagged: bool) -> str | None:
    """The notes of ``version``'s section (None when untagged and not released yet)."""
    released = [(t, d, b) for t, d, b in sections(read_changelog(root)) if t != UNRELEASED]
    for title, _, _ in released:
        if not SEMVER.fullmatch(title):
            raise Disagreement(f"CHANGELOG.md: heading [{title}] is not a version X.Y.Z")
    if released and released[0][0] != version:
        raise Disagreement(
            f"CHANGELOG.md: the newest release is [{released[0][0]}] but {INIT} says "
            f"{version}; run `python scripts/release.py cut {released[0][0]}` or fix the heading"
        )
    notes = next((b for t, _, b in released if t == version), None)
    if tagged and not notes:
        raise Disagreement(
            f"CHANGELOG.md: no entries under `## [{version}]`; run "
            f"`python scripts/release.py cut {version}` before tagging"
        )
    return notes


def read_changelog(root: Path) -> str:
    return (root / "CHANGELOG.md").read_text(encoding="utf-8")


def check(root: Path, tag: str | None, notes_out: Path | None) -> str:
    version = read_version(root)
    check_pyproject(root)
    if tag is not None and tag != f"v{version}":
        raise Disagreement(
            f"tag {tag!r} is not v{version} ({INIT}); tag the commit whose version it names"
        )
    notes = check_changelog(root, version, tagged=tag is not None)
    if notes_out is not None:
        if notes is None:
            raise Disagreement("--notes needs --tag: only a tagged release has notes")
        notes_out.write_text(notes + "\n", encoding="utf-8")
    return version


def cut(root: Path, version: str, date: str, dry_run: bool) -> list[str]:
    """Set the version and move [Unreleased] under ``## [version] - date``; what changed."""
    if not SEMVER.fullmatch(version):
        raise Disagreement(f"{version!r} is not X.Y.Z (semantic version)")
    current = read_version(root)
    changelog = read_changelog(root)
    released = [t for t, _, _ in sections(changelog) if t != UNRELEASED]
    if version in released:
        raise Disagreement(f"CHANGELOG.md: [{version}] is already released")
    if released and _key(version) <= _key(released[0]):
        raise Disagreement(f"{version} is not newer than the last release {released[0]}")
    unreleased = next((b for t, _, b in sections(changelog) if t == UNRELEASED), None)
    if not unreleased:
        raise Disagreement(
            "CHANGELOG.md: nothing under `## [Unreleased]` to release; add the entries first"
        )
    head = f"## [{UNRELEASED}]\n"
    new_changelog = changelog.replace(head, f"{head}\n## [{version}] - {date}\n", 1)
    init = (root / INIT).read_text(encoding="utf-8")
    new_init = VERSION_LINE.sub(f'__version__ = "{version}"', init, count=1)
    done = [f"CHANGELOG.md: ## [{version}] - {date} (the [Unreleased] entries)"]
    if current != version:
        done.append(f"{INIT}: __version__ {current} -> {version}")
    if not dry_run:
        (root / "CHANGELOG.md").write_text(new_changelog, encoding="utf-8")
        (root / INIT).write_text(new_init, encoding="utf-8")
    return done


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="scripts/release.py", description=__doc__.split("\n")[0])
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    sub = parser.add_subparsers(dest="command", required=True)
    p_check = sub.add_parser("check", help="the version agrees everywhere it is written")
    p_check.add_argument("--tag", help="the release tag, vX.Y.Z")
    p_check.add_argument("--notes", type=Path, help="write the tag's CHANGELOG section here")
    p_cut = sub.add_parser("cut", help="set the version and date the [Unreleased] entries")
    p_cut.add_argument("version")
    p_cut.add_argument("--date", default=dt.datetime.now(dt.UTC).date().isoformat())
    p_cut.add_argument("--dry-run", action="store_true", help="print what would change")
    args = parser.parse_args(argv)
    try:
        if args.command == "check":
            version = check(args.root, args.tag, args.notes)
            print(
                f"release: version {version} agrees" + (f" with tag {args.tag}" if args.tag else "")
            )
        else:
            for line in cut(args.root, args.version, args.date, args.dry_run):
                print(("would change " if args.dry_run else "changed ") + line)
    except Disagreement as err:
        prefix = "::error::" if os.environ.get("GITHUB_ACTIONS") == "true" else "error: "
        print(f"{prefix}{err}", file=sys.stderr)
        return EXIT_DISAGREE
    return 0


if __name__ == "__main__":
    sys.exit(main())
