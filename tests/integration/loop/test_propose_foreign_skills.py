"""The propose loop on skills that are not ours (issue 29), end to end.

Three non-debugging skills of the real corpus, each with a task written here (a real
verifier: ``tests/test.sh`` checks the file the agent writes), the built-in agent in the
bubblewrap sandbox, scripted through loopback OpenAI-compatible servers:

- student (a) follows an added rule: it runs the task's check after writing when its skill
  tells it to (and then writes the file right), else writes a broken file and stops;
- student (b) ignores the skill: always writes the broken file and stops;
- student (c) never calls a tool;
- the teacher writes the right file and runs the check on it.

Each run ends in a row (skill, student, diagnosis class, patch text, propose status, the
gate's token-growth and change-guard verdicts); ``SKILLCI_EVIDENCE=path`` writes the table.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from skillci.analyze.classify import verifier_checks
from skillci.compile import TemplateCompiler, propose_task
from skillci.compile.loop import LoopBudget
from skillci.gate.change_guard import guard_change
from skillci.patch.limits import token_growth
from skillci.providers.routes import ModelRoute
from skillci.runners.base import AgentSpec, plan
from skillci.runners.sandbox import bwrap_path
from skillci.runners.scheduler import Scheduler
from skillci.skill.package import SkillPackage, read_executables, read_tree
from skillci.skill.porting import import_plain
from skillci.skill.render import render
from skillci.tasks.loader import load_task
from skillci.tasks.models import Task
from skillci.trace.models import RunRecord
from skillci.trace.store import TraceStore
from tests.fakes.openai_server import FAKE_KEY_ENV, FakeOpenAI

ROOT = Path(__file__).resolve().parents[3]
CORPUS = ROOT / "tests" / "fixtures" / "real-skills"
TOML = ROOT / "tests" / "fixtures" / "envcheck" / "dockerfile-only" / "task.toml"

pytestmark = [
    pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is not usable here"),
    pytest.mark.slow,  # 21 sandboxed trials + litellm import: 101 s and 115 s measured
]


@dataclass(frozen=True)
class Case:
    skill: str
    file: str
    good: str
    bad: str
    instruction: str
    verifier: str


CASES = (
    Case(
        "anthropics/brand-guidelines",
        "brand.json",
        '{"primary": "#141413", "accent": "#d97757"}\n',
        "{'primary': '#141413', accent: #d97757}\n",
        "Write brand.json: a JSON object with the keys primary and accent (hex colours).",
        "python3 -m json.tool brand.json > /dev/null && grep -q '\"accent\"' brand.json",
    ),
    Case(
        "anthropics/internal-comms",
        "update.json",
        '{"title": "Weekly update", "items": ["shipped", "next"]}\n',
        '{"title": "Weekly update", "items": ["shipped", "next"],}\n',
        "Write update.json: a JSON object with a title and a list of items.",
        "python3 -m json.tool update.json > /dev/null && grep -q '\"items\"' update.json",
    ),
    Case(
        "obra/brainstorming",
        "ideas.json",
        '{"ideas": ["a", "b", "c"]}\n',
        '{"ideas": ["a", "b", "c"]\n',
        "Write ideas.json: a JSON object whose ideas key lists three ideas.",
        "python3 -m json.tool ideas.json > /dev/null && grep -q '\"ideas\"' ideas.json",
    ),
)
RULE_WORDS = "run_the_check"  # what any generic verification rule tells the student


def _task(root: Path, case: Case) -> Task:
    (root / "environment").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "task.toml").write_text(TOML.read_text())
    (root / "instruction.md").write_text(case.instruction + "\n")
    (root / "environment" / "README.txt").write_text("workspace\n")
    (root / "tests" / "test.sh").write_text(
        "#!/usr/bin/env bash\nLOGS=${LOGS_DIR:-/logs}; mkdir -p $LOGS/verifier\n"
        f"cd /app\nif {case.verifier}; then r=1; else r=0; fi\n"
        'echo $r > "$LOGS/verifier/reward.txt"\n'
    )
    return load_task(root)


def _turn(body: dict[str, Any]) -> int:
    return sum(1 for m in body.get("messages", []) if m.get("role") == "assistant")


Script = Callable[[dict[str, Any]], Any]


def _student(kind: str, case: Case) -> Script:
    check = f"python3 -m json.tool {case.file} > /dev/null"

    def answer(body: dict[str, Any]) -> Any:
        told = RULE_WORDS in json.dumps(body)
        turn = _turn(body)
        if kind == "no-tools":
            return "I would write the file now."
        if kind == "follows" and told:
            script: list[Any] = [
                [("write_file", {"path": case.file, "content": case.bad})],
                [("run", {"command": check})],
                [("write_file", {"path": case.file, "content": case.good})],
                [("run", {"command": check})],
                "Done: the check exits 0.",
            ]
        else:
            script = [[("write_file", {"path": case.file, "content": case.bad})], "Done."]
        return script[min(turn, len(script) - 1)]

    return answer


def _teacher(case: Case) -> Script:
    script: list[Any] = [
        [("write_file", {"path": case.file, "content": case.good})],
        [("run", {"command": f"python3 -m json.tool {case.file} > /dev/null"})],
        "Done: the file parses.",
    ]
    return lambda body: script[min(_turn(body), len(script) - 1)]


def _agent(server: FakeOpenAI, role: str) -> AgentSpec:
    route = ModelRoute(
        model=f"openai/fake-{role}", api_base=server.base_url, api_key_env=FAKE_KEY_ENV, timeout=10
    )
    return AgentSpec(kind="builtin", role=role, route_name=f"fake/{role}", route=route, max_steps=8)


def _run(home: Path, agent: AgentSpec, task: Task, pkg: SkillPackage | None, i: int) -> RunRecord:
    store = TraceStore(home)
    specs = plan(
        [task],
        agent,
        repeats=i + 1,
        state_dir=home,
        skill=render(pkg, "builtin") if pkg else None,
        skill_package_hash=pkg.content_hash if pkg else None,
    )
    [trial] = Scheduler(store=store).run([specs[i]]).trials
    assert trial.run_id is not None, trial
    return store.get(trial.run_id)


def _row(case: Case, kind: str, home: Path, tmp: Path) -> dict[str, Any]:
    folder = CORPUS / case.skill
    pkg = import_plain(read_tree(folder), executable=read_executables(folder), source=case.skill)
    task = _task(tmp / "task", case)
    counts: dict[str, int] = {}
    with FakeOpenAI([_student(kind, case)]) as s, FakeOpenAI([_teacher(case)]) as t:
        student, teacher = _agent(s, "student"), _agent(t, "teacher")

        def run_student(tk: Task, p: SkillPackage) -> RunRecord:
            n = counts.setdefault(p.content_hash, 0)
            counts[p.content_hash] = n + 1
            return _run(home, student, tk, p, n)

        res = propose_task(
            task,
            pkg,
            run_student=run_student,
            run_teacher=lambda tk: _run(home, teacher, tk, None, 0),
            compiler=TemplateCompiler(),
            budget=LoopBudget(max_rounds=2, repeats=1),
            checks=sorted(verifier_checks(task.verifier_script.read_text())),
            instruction=task.instruction,
        )
    p = res.proposal
    d = p.diagnosis
    row: dict[str, Any] = {
        "skill": case.skill,
        "student": kind,
        "diagnosis": d.failure_class.value if d else "-",
        "why": (d.rationale if d else p.reason)[:400],
        "status": p.status,
        "before": f"{p.before.passed}/{p.before.total}" if p.before else "-",
        "after": f"{p.after.passed}/{p.after.total}" if p.after else "-",
        "patch": [],
        "gate": "no candidate",
    }
    if p.patches and res.candidate is not None:
        op = p.patches[0].ops[0]
        rule = getattr(op, "rule", None)
        if rule is not None:
            row["patch"] = [rule.id, *rule.instruction.steps]
        m = pkg.manifest
        tg = token_growth(
            render(pkg).bootstrap_tokens,
            render(res.candidate).bootstrap_tokens,
            max_growth=m.release_gate.max_token_growth,
            max_added=m.patch_limits.max_added_tokens,
        )
        verdict, _ = guard_change(pkg, res.candidate)
        row["gate"] = (
            f"token_growth {'pass' if tg.passed else 'FAIL'} ({tg.value}); guard {verdict}"
        )
    return row


def test_the_loop_on_three_skills_that_are_not_ours(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(FAKE_KEY_ENV, "sk-fake-not-a-secret")
    rows = []
    for ci, case in enumerate(CASES):
        for kind in ("follows", "ignores", "no-tools"):
            where = tmp_path / f"{ci}-{kind}"
            rows.append(_row(case, kind, where / "home", where))
    if os.environ.get("SKILLCI_EVIDENCE"):
        Path(os.environ["SKILLCI_EVIDENCE"]).write_text(json.dumps(rows, indent=1))
    by = {(r["skill"], r["student"]): r for r in rows}
    fixture_words = ("code_was_edited", "target_function", "ci_log", "target_source_file")
    for case in CASES:
        follows, ignores, silent = (by[(case.skill, k)] for k in ("follows", "ignores", "no-tools"))
        # (a) the added rule repairs the task and the gate's limits and guard accept it
        assert follows["status"] == "proposed", follows
        assert follows["after"] == "1/1" and follows["before"] == "0/1"
        assert "token_growth pass" in follows["gate"] and "guard pass" in follows["gate"]
        text = " ".join(follows["patch"])
        assert "python -m json.tool <file>" in text and not any(w in text for w in fixture_words)
        # (b) the same patch does not move a student that ignores the skill
        assert ignores["status"] in ("no_improvement", "diagnosis_repeated"), ignores
        assert ignores["after"] == "0/1"
        # (c) no tool call: a harness failure, no teacher, no patch
        assert silent["diagnosis"] == "harness_failure" and silent["status"] == "not_compilable"
        assert silent["patch"] == [] and "tool_choice" in silent["why"]
