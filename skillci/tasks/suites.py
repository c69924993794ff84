"""Suites (``evals/suites/<name>.yaml``) and the sealed ``final`` split.

The final split measures the skill once, at the end, on tasks the optimiser never saw. If
discovery, diagnosis, compile, patch or gate code could read it, the number would be
contaminated without anyone noticing. So the seal is enforced in code, not by convention:

* :func:`load_suite` takes a :class:`~skillci.tasks.models.Purpose`; asking for a suite of
  the final split (by name or by its ``split:`` field) with ``Purpose.optimize`` raises
  :class:`~skillci.errors.SealedSplitError`.
* :func:`skillci.tasks.loader.load_task` refuses, under ``Purpose.optimize``, a task whose
  id is listed in a final suite (:func:`sealed_task_ids`).
* ``tests/unit/tasks/test_sealed.py`` scans ``skillci/analyze``, ``skillci/compile`` and
  ``skillci/patch`` for reads of the final suite file or ``Purpose.final_report``.

Only ``skillci eval run --suite final`` (report purpose) reads it.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

import yaml
from pydantic import ValidationError

from skillci.errors import SealedSplitError, TaskFormatError
from skillci.tasks.models import Purpose, Split, Suite

#: Name of the sealed split (and of its suite file, ``final.yaml``).
SEALED_SPLIT = Split.final
SUITE_SUFFIXES = (".yaml", ".yml")
#: a line that seals a suite; its leading blanks stay on the line (``^\s*`` read the rest of a run
#: of blank lines from each of them: quadratic on a suite file a fork's pull request writes)
_FINAL_SPLIT_LINE = re.compile(r"^[^\S\n]*split\s*:\s*[\"']?final\b", re.MULTILINE)


def suites_dir(root: Path) -> Path:
    """``root`` may be the repo root (``<root>/evals/suites``) or the suites dir itself.

    A root that has an ``evals/`` dir is a repo root even when ``evals/suites`` is absent.
    """
    return root / "evals" / "suites" if (root / "evals").is_dir() else root


def suite_file(sdir: Path, name: str) -> Path | None:
    for suffix in SUITE_SUFFIXES:
        p = sdir / f"{name}{suffix}"
        if p.is_file():
            return p
    return None


#: Parsed suites by (file name, sha256 of the bytes): a gate asks for the same few suite
#: files hundreds of times (every task load checks the sealed ids), YAML parsing is slow.
_PARSED: dict[tuple[str, str], Suite] = {}
_PARSED_MAX = 512


def _parse_suite(path: Path) -> Suite:
    raw = path.read_bytes()
    key = (path.stem, hashlib.sha256(raw).hexdigest())
    hit = _PARSED.get(key)
    if hit is not None:
        return hit.model_copy(deep=True)
    suite = _parse_suite_text(path, raw.decode("utf-8"))
    if len(_PARSED) >= _PARSED_MAX:
        _PARSED.clear()
    _PARSED[key] = suite
    return suite.model_copy(deep=True)


def _parse_suite_text(path: Path, text: str) -> Suite:
    try:
        data = yaml.safe_load(text)
    except RecursionError:
        raise TaskFormatError("suite YAML nested too deep", file=path) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + 1 if mark is not None else None
        raise TaskFormatError(
            f"suite is not valid YAML: {getattr(exc, 'problem', exc)}", file=path, line=line
        ) from None
    if not isinstance(data, dict):
        raise TaskFormatError("suite must be a YAML mapping with split: and tasks:", file=path)
    data.setdefault("name", path.stem)
    try:
        return Suite.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise TaskFormatError(
            f"suite field {loc!r}: {err['msg']}",
            file=path,
            line=_yaml_key_line(path, str(err["loc"][0]) if err["loc"] else ""),
            hint="a suite needs split: (discovery|validation|regression|ood|security|final) "
            "and tasks: [ids]",
        ) from None


def _yaml_key_line(path: Path, key: str) -> int | None:
    if not key:
        return None
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if line.startswith(f"{key}:"):
            return i
    return None


def _check_seal(name: str, split: Split | None, purpose: Purpose, path: Path | None) -> None:
    if purpose is Purpose.optimize and (name == SEALED_SPLIT.value or split is SEALED_SPLIT):
        raise SealedSplitError(
            f"suite {name!r} belongs to the sealed final split and cannot be read "
            f"for optimisation (purpose={purpose.value})",
            file=path,
        )


def load_suite(name: str, root: Path, *, purpose: Purpose) -> Suite:
    """Load ``<suites dir>/<name>.yaml``.

    Raises :class:`SealedSplitError` when ``purpose`` is ``optimize`` and the suite is the
    final split — checked on the name *before* the file is opened, and on the ``split:``
    field after (a suite called ``holdout`` with ``split: final`` is sealed too) — or when
    an optimisation suite lists a task that a final suite also lists.
    """
    sdir = suites_dir(root)
    _check_seal(name, None, purpose, None)
    path = suite_file(sdir, name)
    if path is None:
        known = ", ".join(list_suites(root)) or "none"
        raise TaskFormatError(
            f"no suite {name!r} in {sdir}",
            hint=f"known suites: {known}; suites are evals/suites/<name>.yaml",
        )
    suite = _parse_suite(path)
    _check_seal(suite.name, suite.split, purpose, path)
    if purpose is Purpose.optimize:
        leaked = sorted(set(suite.tasks) & sealed_task_ids(root))
        if leaked:
            raise SealedSplitError(
                f"suite {suite.name!r} lists tasks of the sealed final split: {', '.join(leaked)}",
                file=path,
                hint="a task belongs to the final split or to an optimisation split, never both",
            )
    return suite


def list_suites(root: Path) -> list[str]:
    """Names of the suite files under the suites dir (sorted; the final one included)."""
    sdir = suites_dir(root)
    if not sdir.is_dir():
        return []
    return sorted(p.stem for p in sdir.iterdir() if p.suffix in SUITE_SUFFIXES and p.is_file())


def sealed_task_ids(root: Path | None) -> frozenset[str]:
    """Ids of tasks listed in any suite of the final split.

    This is the one place that reads a final suite without a purpose: it only learns *which*
    ids are sealed, so that loaders can refuse them. Set ``SKILLCI_SEALED_TASKS`` (comma
    separated) to add ids from outside the repo (e.g. a private holdout).
    """
    ids: set[str] = set()
    extra = os.environ.get("SKILLCI_SEALED_TASKS", "")
    ids.update(t.strip() for t in extra.split(",") if t.strip())
    if root is None:
        return frozenset(ids)
    sdir = suites_dir(root)
    if not sdir.is_dir():
        return frozenset(ids)
    for path in sorted(sdir.iterdir()):
        if path.suffix not in SUITE_SUFFIXES or not path.is_file():
            continue
        try:
            suite = _parse_suite(path)
        except TaskFormatError:
            # Fail closed only when the broken file may be a final suite; a broken
            # discovery suite must not stop every other suite from loading.
            text = path.read_text(encoding="utf-8", errors="replace")
            if path.stem == SEALED_SPLIT.value or _FINAL_SPLIT_LINE.search(text):
                raise
            continue
        if suite.split is SEALED_SPLIT or suite.name == SEALED_SPLIT.value:
            ids.update(suite.tasks)
    return frozenset(ids)


__all__ = [
    "SEALED_SPLIT",
    "list_suites",
    "load_suite",
    "sealed_task_ids",
    "suite_file",
    "suites_dir",
]
