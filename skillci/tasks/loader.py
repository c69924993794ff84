"""Load task directories (SkillsBench/Harbor and BenchFlow layouts) into :class:`Task`.

Harbor/SkillsBench::

    <id>/instruction.md   task.toml   environment/{Dockerfile,skills/,...}
         tests/test.sh (+ test_outputs.py)   solution/solve.sh

BenchFlow native::

    <id>/task.md (YAML frontmatter + prompt)   environment/   verifier/test.sh   oracle/solve.sh

Loading is strict about what a runner needs (a prompt, a parseable config, a verifier
script) and lenient about the rest (no environment/ or solution/ is allowed here;
``skillci tasks validate`` reports them). Unknown config keys are kept.

Sealed split: under ``Purpose.optimize`` a task listed in a final suite is refused with
:class:`SealedSplitError` (see :mod:`skillci.tasks.suites`).
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from skillci.errors import SealedSplitError, TaskFormatError
from skillci.frontmatter import split_frontmatter
from skillci.fsutil import tree_hash
from skillci.graders.load import load_graders
from skillci.graders.models import GRADERS_FILE
from skillci.tasks.models import Purpose, Suite, Task, TaskConfig
from skillci.tasks.suites import sealed_task_ids

TaskFormat = Literal["harbor", "benchflow"]

#: Names skipped when hashing or copying a task dir (caches, editor droppings).
IGNORED_NAMES = frozenset(
    {"__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".DS_Store", ".git"}
)

#: File and dir names of each layout (instruction, config, verifier dir, solution dir, script).
LAYOUTS: dict[TaskFormat, dict[str, str]] = {
    "harbor": {
        "instruction": "instruction.md",
        "config": "task.toml",
        "verifier": "tests",
        "solution": "solution",
        "solve": "solve.sh",
    },
    "benchflow": {
        "instruction": "task.md",
        "config": "task.md",
        "verifier": "verifier",
        "solution": "oracle",
        "solve": "solve.sh",
    },
}
VERIFIER_SCRIPT = "test.sh"


# ---------------------------------------------------------------------------- hashing


def iter_task_files(root: Path) -> Iterator[tuple[str, Path]]:
    """(posix relative path, absolute path) of every file under ``root``, sorted.

    Skips :data:`IGNORED_NAMES`. Symlinks are reported as files (their target's bytes are
    not followed: :func:`_file_bytes` hashes the link text).
    """
    found: list[tuple[list[str], Path]] = []
    for top, dirs, files in os.walk(root):  # one scandir per dir (rglob stats every path)
        base = Path(top)
        rel_top = base.relative_to(root).parts
        keep = []
        for name in dirs:
            if name in IGNORED_NAMES:
                continue
            if (base / name).is_symlink():  # reported as a file, never followed
                files.append(name)
            else:
                keep.append(name)
        dirs[:] = keep
        for name in files:
            path = base / name
            if name not in IGNORED_NAMES and (path.is_symlink() or path.is_file()):
                found.append(([*rel_top, name], path))
    for parts, path in sorted(found, key=lambda f: f[0]):
        yield "/".join(parts), path


def _file_bytes(path: Path) -> bytes:
    if path.is_symlink():
        return b"symlink:" + str(path.readlink()).encode("utf-8")
    return path.read_bytes()


def dir_hash(root: Path) -> str:
    """sha256 tree hash of every file under ``root`` (paths + contents, order-independent)."""
    return tree_hash((rel, _file_bytes(p)) for rel, p in iter_task_files(root))


def task_hashes(root: Path, verifier_dir: Path) -> tuple[str, str]:
    """(:func:`dir_hash` of ``root``, :func:`dir_hash` of ``verifier_dir``) from one walk
    that reads each file once (``verifier_dir`` is inside ``root``)."""
    if verifier_dir.is_symlink() or not verifier_dir.is_relative_to(root):
        return dir_hash(root), dir_hash(verifier_dir)
    vrel = verifier_dir.relative_to(root).as_posix()
    files = [(rel, _file_bytes(p)) for rel, p in iter_task_files(root)]
    tests = [(rel[len(vrel) + 1 :], data) for rel, data in files if rel.startswith(vrel + "/")]
    return tree_hash(files), tree_hash(tests)


def agent_side_hash(root: Path, verifier_dir: Path) -> str:
    """Tree hash of every task file outside ``verifier_dir``: the instruction, task.toml,
    environment/ and solution/ — everything but the tests. Equal hashes mean only the tests
    changed (what ``skillci eval regrade`` requires)."""
    vrel = verifier_dir.relative_to(root).as_posix()
    return tree_hash(
        (rel, _file_bytes(p))
        for rel, p in iter_task_files(root)
        if rel != vrel and not rel.startswith(vrel + "/")
    )


def check_links_inside(root: Path) -> None:
    """Refuse a task holding a symlink whose target is outside ``root`` (or dangling into
    it from outside): a runner would copy, mount or read the host file it names — Harbor's
    rule "input paths must stay within the task". Links within the task are kept."""
    base = os.path.realpath(root)
    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.name in IGNORED_NAMES:
                    continue
                if entry.is_symlink():
                    target = os.path.realpath(entry.path)
                    if target != base and not target.startswith(base + os.sep):
                        raise TaskFormatError(
                            f"symlink to {os.readlink(entry.path)} points outside the task; "
                            "input paths must stay within the task",
                            file=Path(entry.path),
                            hint="replace the link with a copy of the file it names",
                        )
                elif entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))


# ---------------------------------------------------------------------------- parsing


_TOML_POS = re.compile(r"\(at line (\d+), column (\d+)\)")


#: a TOML table header's name, as :func:`toml_header` reads it
_TOML_HEADER = re.compile(r"^\[+\s*([^\]]+?)\s*\]+")


def toml_header(line: str) -> str | None:
    """``_TOML_HEADER.match(line).group(1)``, or None, in linear time: the pattern retried
    its lazy name from every ``[`` of a long run of them (8,000 took 0.9 s, quadratic), and a
    task file comes from a fork's pull request. The same answer for every line:
    tests/unit/tasks/test_linear_task_readers.py."""
    close = line.find("]")
    opens = len(line) - len(line.lstrip("["))
    if opens == 0 or close < 0:
        return None
    name = opens + (len(line[opens:close]) - len(line[opens:close].lstrip()))
    if name < close:  # the name runs to the last non-blank before the first `]`
        return line[name : len(line[:close].rstrip())]
    if name > opens:  # only blanks between: the name is the last of them
        return line[name - 1 : name]
    return "[" if opens >= 2 else None  # `[[]`: the name is the last `[`


def _toml_key_line(text: str, loc: Sequence[int | str]) -> int | None:
    """Best-effort line of ``[section] key`` (pydantic loc) in TOML text."""
    if not loc:
        return None
    *sections, key = [str(p) for p in loc if not isinstance(p, int)] or [""]
    want = ".".join(sections)
    current = ""
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        header = toml_header(line)
        if header is not None:
            current = header
            if current == ".".join([*sections, key]):
                return i
            continue
        if current == want and re.match(rf"^[\"']?{re.escape(key)}[\"']?\s*=", line):
            return i
    return None


def _validation_error(exc: ValidationError, path: Path, line_of: Any, what: str) -> TaskFormatError:
    err = exc.errors()[0]
    loc = ".".join(str(p) for p in err["loc"]) or "(root)"
    more = f" (+{exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
    return TaskFormatError(
        f"{what} field {loc!r}: {err['msg']}{more}", file=path, line=line_of(err["loc"])
    )


def parse_task_toml(path: Path) -> TaskConfig:
    """Parse ``task.toml`` with tomllib; errors carry file:line."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TaskFormatError(f"not UTF-8 text: {exc}", file=path) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = _TOML_POS.search(str(exc))
        msg = _TOML_POS.sub("", str(exc)).strip()
        raise TaskFormatError(
            f"invalid TOML: {msg}",
            file=path,
            line=int(m.group(1)) if m else None,
            col=int(m.group(2)) if m else None,
        ) from None
    try:
        return TaskConfig.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(
            exc, path, lambda loc: _toml_key_line(text, loc), "task.toml"
        ) from None


def parse_task_md(path: Path) -> tuple[TaskConfig, str]:
    """Parse a BenchFlow ``task.md``: (config from the frontmatter, prompt body)."""
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        raise TaskFormatError(f"not UTF-8 text: {exc}", file=path) from None
    split = split_frontmatter(text)
    fm, body, first = split.yaml_text, split.body, split.yaml_line
    if not split.present:
        raise TaskFormatError(
            "task.md has no YAML frontmatter",
            file=path,
            line=1,
            hint="start task.md with a '---' line, the YAML config, then '---' and the prompt",
        )
    try:
        data = yaml.safe_load(fm) or {}
    except RecursionError:
        raise TaskFormatError("YAML frontmatter nested too deep", file=path, line=first) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise TaskFormatError(
            f"invalid YAML frontmatter: {getattr(exc, 'problem', exc)}",
            file=path,
            line=first + mark.line if mark is not None else first,
        ) from None
    if not isinstance(data, dict):
        raise TaskFormatError("frontmatter must be a YAML mapping", file=path, line=first)

    def line_of(loc: Sequence[int | str]) -> int | None:
        key = str(loc[0]) if loc else ""
        for i, raw in enumerate(fm.splitlines()):
            if key and raw.startswith(f"{key}:"):
                return first + i
        return first

    try:
        return TaskConfig.model_validate(data), body
    except ValidationError as exc:
        raise _validation_error(exc, path, line_of, "task.md frontmatter") from None


def detect_format(task_dir: Path) -> TaskFormat | None:
    """``harbor`` when instruction.md or task.toml exists, ``benchflow`` for task.md."""
    if (task_dir / "instruction.md").is_file() or (task_dir / "task.toml").is_file():
        return "harbor"
    if (task_dir / "task.md").is_file():
        return "benchflow"
    return None


def _default_suites_root(task_dir: Path) -> Path | None:
    """``evals/tasks/<id>`` -> ``evals/suites`` when it exists."""
    candidate = task_dir.parent.parent / "suites"
    return candidate if candidate.is_dir() else None


def check_not_sealed(task_id: str, purpose: Purpose, suites_root: Path | None) -> None:
    """Raise :class:`SealedSplitError` if ``task_id`` is sealed and ``purpose`` is optimize."""
    if purpose is not Purpose.optimize:
        return
    if task_id in sealed_task_ids(suites_root):
        raise SealedSplitError(
            f"task {task_id!r} belongs to the sealed final split and cannot be loaded "
            "for optimisation"
        )


def _refuse_steps(config: TaskConfig, path: Path) -> None:
    if config.steps:
        raise TaskFormatError(
            f"a multi-step Harbor task ({len(config.steps)} [[steps]]): skillci runs "
            "single-step tasks only",
            file=path,
            hint="run it with Harbor itself; see docs/design/150",
        )


def load_task(
    task_dir: Path,
    *,
    purpose: Purpose = Purpose.optimize,
    suites_root: Path | None = None,
) -> Task:
    """Load one task directory.

    ``suites_root`` (repo root or suites dir) tells which ids are sealed; by default it is
    ``<task_dir>/../../suites`` when that exists (the ``evals/tasks``/``evals/suites``
    layout), plus any ids in ``SKILLCI_SEALED_TASKS``. Raises :class:`TaskFormatError` for
    a malformed task and :class:`SealedSplitError` for a sealed task under ``optimize``.
    """
    task_dir = task_dir.resolve()
    if not task_dir.is_dir():
        raise TaskFormatError(f"task dir {task_dir} does not exist or is not a directory")
    check_not_sealed(task_dir.name, purpose, suites_root or _default_suites_root(task_dir))
    return _load_checked(task_dir)


def _load_checked(task_dir: Path, hashes: tuple[str, str] | None = None) -> Task:
    """:func:`load_task` of a resolved dir whose id passed the seal check; ``hashes``: its
    (content, verifier) hashes when the caller knows them (:func:`load_suite_tasks`)."""
    task_id = task_dir.name

    fmt = detect_format(task_dir)
    if fmt is not None:
        check_links_inside(task_dir)
    if fmt is None:
        raise TaskFormatError(
            f"{task_dir} is not a task: no instruction.md + task.toml (Harbor) or task.md "
            "(BenchFlow)",
            file=task_dir,
        )
    lay = LAYOUTS[fmt]
    instruction_path = task_dir / lay["instruction"]
    config_path: Path | None = task_dir / lay["config"]
    if fmt == "harbor":
        assert config_path is not None
        if config_path.is_file():
            config = parse_task_toml(config_path)
        else:
            raise TaskFormatError(
                "missing task.toml",
                file=config_path,
                hint="add a task.toml with version and [verifier]/[agent] timeouts",
            )
        _refuse_steps(config, config_path)
        if not instruction_path.is_file():
            raise TaskFormatError("missing instruction.md", file=instruction_path)
        try:
            instruction = instruction_path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise TaskFormatError(f"not UTF-8 text: {exc}", file=instruction_path) from None
    else:
        config, instruction = parse_task_md(instruction_path)
        _refuse_steps(config, instruction_path)
    if not instruction.strip():
        raise TaskFormatError("the task prompt is empty", file=instruction_path)

    verifier_dir = task_dir / lay["verifier"]
    verifier_script = verifier_dir / VERIFIER_SCRIPT
    graders_file = verifier_dir / GRADERS_FILE
    graders = load_graders(graders_file) if graders_file.is_file() else None
    if not verifier_script.is_file() and graders is None:
        raise TaskFormatError(
            f"missing verifier {lay['verifier']}/{VERIFIER_SCRIPT} (or graders "
            f"{lay['verifier']}/{GRADERS_FILE})",
            file=verifier_script,
            hint="the verifier writes $LOGS_DIR/verifier/reward.txt, or declare assertions "
            "and rubrics in tests/graders.toml (see docs/tasks.md)",
        )
    env_dir = task_dir / "environment"
    solution_dir = task_dir / lay["solution"]
    solve = solution_dir / lay["solve"]
    dockerfile = env_dir / "Dockerfile"
    skills = env_dir / "skills"
    content_hash, verifier_hash = hashes or task_hashes(task_dir, verifier_dir)
    return Task(
        id=task_id,
        root=task_dir,
        format=fmt,
        instruction=instruction,
        instruction_path=instruction_path,
        config_path=config_path,
        config=config,
        environment_dir=env_dir if env_dir.is_dir() else None,
        dockerfile=dockerfile if dockerfile.is_file() else None,
        skills_dir=skills if skills.is_dir() else None,
        verifier_dir=verifier_dir,
        verifier_script=verifier_script,
        solution_dir=solution_dir if solution_dir.is_dir() else None,
        solution_script=solve if solve.is_file() else None,
        graders_file=graders_file if graders is not None else None,
        graders=graders,
        content_hash=content_hash,
        verifier_hash=verifier_hash,
    )


def tasks_dir(root: Path) -> Path:
    """``root`` may be the repo root (``<root>/evals/tasks``) or the tasks dir itself."""
    return root / "evals" / "tasks" if (root / "evals").is_dir() else root


def load_suite_tasks(
    suite: Suite,
    root: Path,
    *,
    purpose: Purpose,
    suites_root: Path | None = None,
    known_hashes: Mapping[str, tuple[str, str]] | None = None,
) -> list[Task]:
    """Load every task of ``suite`` from the tasks dir under ``root``, in suite order.

    ``root`` is the repo root or the tasks dir; ``suites_root`` defaults to ``root``.
    ``known_hashes``: task id -> (content hash, verifier hash) the caller vouches for (a
    checkout of a commit whose task trees it has hashed before); those dirs are not read.
    """
    tdir = tasks_dir(root)
    sroot = suites_root if suites_root is not None else root
    if purpose is Purpose.optimize and suite.split.value == "final":
        raise SealedSplitError(
            f"suite {suite.name!r} is the sealed final split; not loadable for optimisation"
        )
    missing = [t for t in suite.tasks if not (tdir / t).is_dir()]
    if missing:
        raise TaskFormatError(
            f"suite {suite.name!r} names tasks that do not exist in {tdir}: {', '.join(missing)}",
            hint="fix the ids in evals/suites/<name>.yaml or add the task dirs",
        )
    sealed = sealed_task_ids(sroot) if purpose is Purpose.optimize else frozenset()
    out = []
    for t in suite.tasks:  # the seal read once per suite, not once per task
        task_dir = (tdir / t).resolve()
        if task_dir.name in sealed:
            check_not_sealed(task_dir.name, purpose, sroot)  # raises the SealedSplitError
        out.append(_load_checked(task_dir, (known_hashes or {}).get(task_dir.name)))
    return out


def discover_tasks(root: Path) -> list[Path]:
    """Task dirs directly under the tasks dir of ``root`` (sorted; format not checked)."""
    tdir = tasks_dir(root)
    if not tdir.is_dir():
        return []
    return sorted(p for p in tdir.iterdir() if p.is_dir() and detect_format(p) is not None)


__all__ = [
    "IGNORED_NAMES",
    "LAYOUTS",
    "VERIFIER_SCRIPT",
    "TaskFormat",
    "agent_side_hash",
    "check_links_inside",
    "check_not_sealed",
    "detect_format",
    "dir_hash",
    "discover_tasks",
    "iter_task_files",
    "load_suite_tasks",
    "load_task",
    "parse_task_md",
    "parse_task_toml",
    "split_frontmatter",
    "task_hashes",
    "tasks_dir",
    "toml_header",
]
