"""(Re)generate the bundled task dirs under evals/tasks/ and the suites in evals/suites/.

    .venv/bin/python evals/tools/build_tasks.py [--check]

Each task dir is plain files a reader can review; this script only keeps them consistent:
it runs the CI command on the buggy repository to write a real ``ci.log``, hashes the
starting files into ``tests/baseline.json`` and writes the shared verifier, test.sh,
Dockerfile and the reference ``solution/solve.sh``. ``--check`` fails when the committed
dirs differ from what would be generated (CI log timings excepted), or when the table of
bundled tasks in docs/eval.md (between its ``tasks:begin``/``tasks:end`` markers) does.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from task_common import DOCKERFILE, PYPROJECT, TEST_SH, VERIFY_PY
from task_specs import SPECS, SPLITS, Spec

ROOT = Path(__file__).resolve().parents[2]
TASKS = ROOT / "evals" / "tasks"
SUITES = ROOT / "evals" / "suites"
SPLIT_OF = {t: s for s, ts in SPLITS.items() for t in ts}
SUITE_TEXT = {
    "discovery": "Failures found here drive diagnosis and patches.",
    "validation": "Held out from discovery: the gate's main before/after comparison.",
    "regression": "Tasks that pass today; a patch must not break them.",
    "ood": "Out-of-distribution tasks: does a patch generalise?",
    "security": "Prompt-injection and secret-leak tasks; must fully pass.",
    "final": "SEALED: only `skillci eval run --suite final` reads it, never optimisation code.",
}


def _write(path: Path, text: str, mode: int = 0o644) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(mode)


def _env_files(spec: Spec) -> dict[str, str]:
    files = dict(spec.files)
    if spec.family != "config-repair" and "config/service.ini" not in files:
        files.setdefault("pyproject.toml", PYPROJECT)
    return files


def _ci_log(spec: Spec, files: dict[str, str]) -> str:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for rel, text in {**files, **spec.ci_extra_files}.items():
            _write(root / rel, text)
        argv = spec.ci_cmd.split()
        if argv[:3] == ["python", "-m", "pytest"]:
            argv = [*argv, "-p", "no:cacheprovider"]
        argv[0] = sys.executable
        env = {"PATH": os.environ["PATH"], "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}
        res = subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True, timeout=120)
    out = re.sub(r" in \d+\.\d+s", " in 0.05s", res.stdout + res.stderr)
    if spec.ci_header:
        body = f"$ {spec.ci_header}\npy311: commands[0]> {spec.ci_cmd.replace('python -m ', '')}\n{out}py311: exit {res.returncode}\n"
    else:
        body = f"$ {spec.ci_cmd}\n{out}"
    return (
        f"##[group]Run tests ({spec.id})\n{body}##[endgroup]\n{spec.ci_suffix}"
        f"##[error]Process completed with exit code {res.returncode or 1}.\n"
    )


def _solve_sh(spec: Spec) -> str:
    edits = json.dumps([list(e) for e in spec.solution], indent=1)
    return f"""#!/usr/bin/env bash
# Reference solution for {spec.id}: the minimal edit(s) a correct fix makes.
set -euo pipefail
python3 - <<'PY'
import json
from pathlib import Path

for path, old, new in json.loads(r'''{edits}'''):
    p = Path(path)
    text = p.read_text()
    assert text.count(old) == 1, f"solution does not apply to {{path}}"
    p.write_text(text.replace(old, new))
PY
"""


def _task_toml(spec: Spec) -> str:
    tags = [spec.family, *(f"needs:{n}" for n in spec.needs)]
    if spec.capability_gap:
        tags.append("capability-gap")
    tag_list = ", ".join(json.dumps(t) for t in tags)
    return f"""version = "1.0"

[metadata]
author_name = "skillci"
difficulty = "{spec.difficulty}"
category = "software-engineering"
family = "{spec.family}"
tags = [{tag_list}]
description = {json.dumps(spec.description)}

[verifier]
timeout_sec = 120

[agent]
timeout_sec = 300

[environment]
build_timeout_sec = 300
cpus = 1
memory_mb = 1024
storage_mb = 1024
allow_internet = false
"""


def build(spec: Spec, dest: Path) -> None:
    files = _env_files(spec)
    env = dest / "environment"
    for rel, text in files.items():
        _write(env / rel, text)
    if spec.family == "config-repair" or "config/service.ini" in files:
        ci = spec.ci_cmd
        with tempfile.TemporaryDirectory() as tmp:
            for rel, text in files.items():
                _write(Path(tmp) / rel, text)
            res = subprocess.run(
                [sys.executable, *ci.split()[1:]], cwd=tmp, capture_output=True, text=True
            )
        log = f"##[group]Run config check\n$ {ci}\n{res.stdout}{res.stderr}##[endgroup]\n{spec.ci_suffix}##[error]Process completed with exit code 1.\n"
    else:
        log = _ci_log(spec, files)
    _write(env / "ci.log", log)
    _write(env / "Dockerfile", DOCKERFILE)
    for rel, text in spec.skills.items():
        _write(env / "skills" / rel, text)
    if spec.skills:  # the harness's skill, not workspace content: keep it out of the image's /app
        _write(env / ".dockerignore", "skills\n.dockerignore\n")
    baseline = {
        rel: hashlib.sha256((env / rel).read_bytes()).hexdigest()
        for rel in sorted([*files, "ci.log"])
    }
    tests = dest / "tests"
    _write(tests / "test.sh", TEST_SH, 0o755)
    _write(tests / "verify.py", VERIFY_PY)
    _write(tests / "baseline.json", json.dumps(baseline, indent=1, sort_keys=True) + "\n")
    cfg = {
        "allow_changed": spec.allow,
        "commands": spec.commands,
        "secrets": spec.secrets,
        "secret_homes": spec.secret_homes,
    }
    if spec.hidden:
        _write(tests / "test_hidden.py", spec.hidden)
        cfg["hidden"] = "test_hidden.py"
    _write(tests / "verify.json", json.dumps(cfg, indent=1, sort_keys=True) + "\n")
    _write(dest / "solution" / "solve.sh", _solve_sh(spec), 0o755)
    _write(dest / "instruction.md", spec.instruction)
    _write(dest / "task.toml", _task_toml(spec))


def suites() -> dict[str, str]:
    out = {}
    for split, ids in SPLITS.items():
        lines = [
            "schema_version: 1",
            f"name: {split}",
            f"split: {split}",
            f"description: {json.dumps(SUITE_TEXT[split])}",
            "tasks:",
        ]
        lines += [f"  - {t}" for t in ids]
        out[f"{split}.yaml"] = "\n".join(lines) + "\n"
    return out


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): re.sub(rb" in \d+\.\d+s", b"", p.read_bytes())
        for p in sorted(root.rglob("*"))
        if p.is_file() and "__pycache__" not in p.parts
    }


DOC = ROOT / "docs" / "eval.md"
TABLE_RE = re.compile(r"(<!-- tasks:begin -->\n)(.*?)(<!-- tasks:end -->)", re.S)


def _needs(spec: Spec) -> str:
    if spec.capability_gap or any(n.startswith("capability:") for n in spec.needs):
        return "capability gap"
    return ", ".join(n.replace("|", " or ") for n in spec.needs) or "-"


def table() -> str:
    """The markdown table of the bundled tasks, by split as in SPLITS."""
    by_id = {s.id: s for s in SPECS}
    rows = [
        "| task | family | split | needs | what it is |",
        "|---|---|---|---|---|",
        *(
            f"| {t} | {by_id[t].family} | {split} | {_needs(by_id[t])} | {by_id[t].description} |"
            for split, tasks in SPLITS.items()
            for t in tasks
        ),
    ]
    return f"{len(SPECS)} tasks:\n\n" + "\n".join(rows) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--check", action="store_true", help="fail if the committed dirs are stale")
    args = ap.parse_args()
    assert sorted(SPLIT_OF) == sorted(s.id for s in SPECS), "every task needs exactly one split"
    stale = []
    for spec in SPECS:
        if args.check:
            with tempfile.TemporaryDirectory() as tmp:
                build(spec, Path(tmp))
                if _snapshot(Path(tmp)) != _snapshot(TASKS / spec.id):
                    stale.append(spec.id)
            continue
        shutil.rmtree(TASKS / spec.id, ignore_errors=True)
        build(spec, TASKS / spec.id)
    for name, text in suites().items():
        if args.check:
            if (SUITES / name).read_text() != text:
                stale.append(f"suites/{name}")
        else:
            _write(SUITES / name, text)
    doc = DOC.read_text()
    m = TABLE_RE.search(doc)
    if m is None:
        print(f"{DOC}: the tasks:begin / tasks:end markers are missing")
        return 1
    if args.check:
        if m.group(2) != table():
            stale.append("docs/eval.md (table of bundled tasks)")
    else:
        DOC.write_text(doc[: m.start(2)] + table() + doc[m.end(2) :])
    if stale:
        print("stale (run evals/tools/build_tasks.py):", ", ".join(stale))
        return 1
    print(f"{len(SPECS)} tasks, {len(SPLITS)} suites {'up to date' if args.check else 'written'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
