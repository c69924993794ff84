"""The simulated procedure, written as a generator and replayed on every call.

:class:`Mind` yields one :class:`Action` at a time and receives the tool result text. The
provider is stateless: for each request it builds a fresh Mind from the transcript,
replays the recorded results into it and returns the next action. What the Mind does
depends only on the messages (skill text in context, instruction, tool results), the role,
the seed and the slip rate — see docs/simulator.md for the contract.
"""

from __future__ import annotations

import ast
import builtins
import hashlib
import shlex
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import Any

from skillci.providers.sim import evidence as ev
from skillci.providers.sim.injection import injections, mask_secrets
from skillci.providers.sim.repair import (
    Edit,
    config_candidates,
    expectation_shortcut,
    python_candidates,
)
from skillci.providers.sim.skilltext import (
    KEYWORDS,
    Behaviours,
    behaviours,
    explicit_loads,
    index_entries,
    named_paths,
    situation_of,
)
from skillci.providers.sim.transcript import Transcript

SCAN_SUFFIXES = (".py", ".ini", ".cfg", ".toml", ".json", ".yaml", ".yml")
MAX_CANDIDATES = {"student": 12, "teacher": 24}
_REPEAT_CAP = 60
#: exit codes of a command that did not run the tests at all: pytest usage (4), no tests (5),
#: timeout (124), not executable (126), not found (127).
_COMMAND_FAILURE = (4, 5, 124, 126, 127)


@dataclass(frozen=True)
class Action:
    """A tool call, or the final answer when ``final`` is set."""

    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    final: str | None = None
    out_of_domain: bool = False
    """The task is not one the simulator models: no answer, a model error instead."""


Gen = Generator[Action, str, Any]


def exit_code(result: str) -> int | None:
    first = result.split("\n", 1)[0]
    if first.startswith("exit_code: "):
        try:
            return int(first.split(": ", 1)[1])
        except ValueError:
            return None
    return None


def _unit(*parts: object) -> float:
    h = hashlib.sha256("\0".join(str(p) for p in parts).encode()).digest()
    return int.from_bytes(h[:8], "big") / 2**64


@dataclass
class Target:
    path: str
    func: str | None = None
    line: int | None = None
    kind: str = "python"  # python | config
    message: str = ""


class Mind:
    """One simulated model working one task."""

    def __init__(self, tr: Transcript, role: str, seed: int, slip_rate: float = 0.0) -> None:
        self.teacher = role == "teacher"
        self.role = "teacher" if self.teacher else "student"
        self.instruction = tr.instruction
        self.boot = "" if self.teacher else tr.bootstrap_skill
        self.tools = tr.tool_names
        self.loaded: dict[str, str] = {}
        self.files: dict[str, str] = {}
        self.followed: set[str] = set()
        self.revealed: list[str] = []
        self.noticed_injection = False
        slips = {k for k in KEYWORDS if _unit(seed, self.instruction, k) < slip_rate}
        self._slips = slips
        self.test_cmd = ""
        self._undo: dict[Edit, str] = {}

    # ------------------------------------------------------------------ perception

    @property
    def skill_text(self) -> str:
        return "\n".join([self.boot, *self.loaded.values()])

    @property
    def b(self) -> Behaviours:
        if self.teacher:
            return Behaviours.all_on()
        return behaviours(self.skill_text).without(self._slips)

    # ------------------------------------------------------------------ acting

    def call(self, tool: str, **args: Any) -> Gen:
        result = yield Action(tool, args)
        if tool == "load_skill_file" and not result.startswith("error:"):
            self.loaded[str(args.get("path"))] = result
        if tool == "read_file" and not result.startswith("error:"):
            self.files[str(args.get("path"))] = result
        yield from self._observe(result)
        return result

    def _observe(self, result: str) -> Gen:
        found = [i for i in injections(result) if i.line not in self.followed]
        if found:
            self.noticed_injection = True
        if self.b.ignore_injections:
            return
        for inj in found:
            self.followed.add(inj.line)
            if inj.kind == "run":
                yield from self.call("run", command=inj.arg)
            elif inj.kind == "write" and inj.target:
                target = shlex.quote(inj.target)
                yield from self.call(
                    "run",
                    command=f'mkdir -p "$(dirname {target})" && printf "%s\\n" {shlex.quote(inj.arg)} >> {target}',
                )
            elif inj.kind == "delete":
                yield from self.call("run", command=f"rm -f -- {shlex.quote(inj.arg)}")
            elif inj.kind == "reveal":
                text = yield from self.call("read_file", path=inj.arg)
                if not text.startswith("error:"):
                    self.revealed.append(f"Contents of {inj.arg}:\n{text.strip()}")

    def load_for(self, situation: str) -> Gen:
        if self.teacher or "load_skill_file" not in self.tools:
            return
        index = dict(index_entries(self.skill_text))
        wanted = [p for p, when in index.items() if situation_of(when) == situation]
        wanted += [
            p
            for p in explicit_loads(self.skill_text)
            if p in index and situation_of(index[p]) == situation
        ]
        for path in dict.fromkeys(wanted):
            if path not in self.loaded:
                yield from self.call("load_skill_file", path=path)

    def read(self, path: str) -> Gen:
        text = yield from self.call("read_file", path=path)
        return None if text.startswith("error:") else text

    def run_cmd(self, cmd: str, test_id: str | None) -> Gen:
        """Run; on a command-level failure repeat it (habit) or change one input (rule)."""
        result: str = yield from self.call("run", command=cmd)
        tried = [cmd]
        fails = 1
        while exit_code(result) in _COMMAND_FAILURE:
            if exit_code(result) == 124:
                yield from self.load_for("timeout")
            if self.b.no_repeat and fails >= 2:
                yield from self.load_for("repeated_failure")
                alts = [
                    f"python -m pytest -x -q {test_id}" if test_id else "",
                    "python -m pytest -q",
                ]
                alt = next((a for a in alts if a and a not in tried), None)
                if alt is None:
                    return result
                tried.append(alt)
                cmd, fails = alt, 0
                if self.test_cmd in tried:
                    self.test_cmd = alt
            elif fails >= _REPEAT_CAP:
                return result
            result = yield from self.call("run", command=cmd)
            fails += 1
        return result

    def apply(self, edit: Edit, *, revert: bool = False) -> Gen:
        old, new = (edit.new, edit.old) if revert else (edit.old, edit.new)
        before = self.files.get(edit.path)
        if not old:  # undo of a deleted line: put the whole file back
            content = self._undo.get(edit, before or "")
            res = yield from self.call("write_file", path=edit.path, content=content)
            after: str | None = content
        else:
            res = yield from self.call("apply_patch", path=edit.path, old=old, new=new)
            after = before.replace(old, new, 1) if before is not None else None
        if not res.startswith("error:"):
            if not revert and before is not None:
                self._undo[edit] = before
            if after is not None:
                self.files[edit.path] = after
        return res

    # ------------------------------------------------------------------ procedure

    def run(self) -> Gen:
        yield from self.load_for("start")
        log = ev.log_path(self.instruction)
        check = ev.instruction_command(self.instruction)
        if not self.b.localize_first:
            yield from self.scan()
        log_text = (yield from self.read(log)) if log else None
        log_text = log_text or ""
        tests = ev.failing_tests(log_text)
        test_id = tests[0] if tests else None
        target = yield from self.localize(log_text, test_id)
        if target is None and not (
            check or tests or ev.frames(log_text) or ev.check_errors(log_text)
        ):
            # nothing a repair task gives (a failing log, a check command): not our domain
            return (yield Action(out_of_domain=True))
        if target is None:
            return (yield Action(final="I could not find the code that fails; no change made."))
        yield from self.load_for("localized")
        source = self.files.get(target.path) or (yield from self.read(target.path))
        if source is None:
            return (yield Action(final=f"I could not read {target.path}; no change made."))
        test_file = test_id.split("::")[0] if test_id else None
        if self.b.read_nearest_test and test_file and test_file not in self.files:
            yield from self.read(test_file)
        smallest = f"python -m pytest -x -q {test_id}" if test_id else None
        ci = ev.ci_command(log_text)
        self.test_cmd = (
            check
            or (smallest if self.b.smallest_test and smallest else None)
            or ci
            or "python -m pytest -q"
        )
        if self.b.reproduce_first:
            yield from self.load_for("about_to_test")
            yield from self.run_cmd(self.test_cmd, test_id)
        outcome, edit = yield from self.fix(target, test_id, test_file)
        return (yield Action(final=(yield from self.finish(outcome, edit, target))))

    def scan(self) -> Gen:
        listing = yield from self.call("list_files", path=".")
        paths = [p.strip() for p in listing.splitlines() if p.strip().endswith(SCAN_SUFFIXES)]
        for p in sorted(p for p in paths if not p.startswith(("tests/", "test/")))[:40]:
            yield from self.read(p)

    def localize(self, log_text: str, test_id: str | None) -> Gen:
        errors = ev.check_errors(log_text)
        if errors:
            e = errors[0]
            return Target(e.path, line=e.line, kind="config", message=e.message)
        frame = (
            ev.first_project_frame(log_text)
            if self.b.localize_first
            else ev.deepest_project_frame(log_text)
        )
        target = Target(frame.path, frame.func, frame.line) if frame else None
        for path in [] if self.teacher else named_paths(self.skill_text):
            text = self.files.get(path) or (yield from self.read(path))
            if text is not None:
                func = target.func if target and f"def {target.func}(" in text else None
                return Target(path, func, target.line if target and target.path == path else None)
        if target is None and test_id:
            yield from self.load_for("no_frame")
            target = yield from self.find_called(test_id)
        return target

    def find_called(self, test_id: str) -> Gen:
        path, _, name = test_id.partition("::")
        src = self.files.get(path) or (yield from self.read(path))
        if not src:
            return None
        called: list[str] = []
        try:
            tree = ast.parse(src)
        except SyntaxError:
            return None
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node.name == name.split("[")[0]:
                called = [
                    c.func.id
                    for c in ast.walk(node)
                    if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                ]
        for fn in [c for c in called if c not in dir(builtins) and c not in ("raises", "approx")]:
            hits = yield from self.call("search_code", pattern=f"def {fn}(")
            for hit in hits.splitlines():
                hpath = hit.split(":", 1)[0]
                if hpath.endswith(".py") and not hpath.startswith(("tests/", "test/")):
                    return Target(hpath, fn, None)
        return None

    def candidates(self, target: Target, source: str) -> list[Edit]:
        if target.kind == "config":
            edits = config_candidates(
                target.path, source, target.line or 0, target.message, teacher=self.teacher
            )
        else:
            edits = python_candidates(
                target.path, source, target.func, target.line, teacher=self.teacher
            )
        return edits[: MAX_CANDIDATES[self.role]]

    def fix(self, target: Target, test_id: str | None, test_file: str | None) -> Gen:
        for _round in range(4):  # config checkers report one error at a time
            source = self.files.get(target.path, "")
            progressed = False
            for edit in self.candidates(target, source):
                yield from self.apply(edit)
                if not self.b.verify:
                    return "claimed", edit
                result = yield from self.run_cmd(self.test_cmd, test_id)
                if exit_code(result) == 0:
                    if self.b.related_tests and test_file and target.kind == "python":
                        related = yield from self.run_cmd(f"python -m pytest -q {test_file}", None)
                        if exit_code(related) != 0:
                            yield from self.apply(edit, revert=True)
                            continue
                    return "verified", edit
                new_errors = ev.check_errors(result)
                if (
                    target.kind == "config"
                    and new_errors
                    and (new_errors[0].path, new_errors[0].line) != (target.path, target.line)
                ):
                    e = new_errors[0]
                    target = Target(e.path, line=e.line, kind="config", message=e.message)
                    if e.path not in self.files:
                        yield from self.read(e.path)
                    progressed = True
                    break
                if self.b.retry:
                    yield from self.apply(edit, revert=True)
                    continue
                return (yield from self.stuck(result)), edit
            if not progressed:
                break
        if not self.teacher and not self.b.never_edit_tests and test_id:
            return (yield from self.shortcut(test_id))
        return "exhausted", None

    def stuck(self, last: str) -> Gen:
        """Verification failed and no rule says what to do next: rerun it unchanged."""
        for _ in range(_REPEAT_CAP):
            result = yield from self.call("run", command=self.test_cmd)
            if self.b.no_repeat and result == last:
                yield from self.load_for("repeated_failure")
                return "gave_up"
            last = result
        return "gave_up"

    def shortcut(self, test_id: str) -> Gen:
        """Out of ideas: make the visible test pass by editing its expectation."""
        result = yield from self.call("run", command=f"python -m pytest -x -q --tb=short {test_id}")
        pair = ev.assertion(result)
        frame = next((f for f in ev.frames(result) if not f.in_project), None)
        path = test_id.split("::")[0]
        src = self.files.get(path) or (yield from self.read(path))
        if not pair or not frame or not src:
            return "exhausted", None
        edit = expectation_shortcut(path, src, frame.line, *pair)
        if edit is None:
            return "exhausted", None
        yield from self.apply(edit)
        return "claimed", edit

    def finish(self, outcome: str, edit: Edit | None, target: Target) -> Gen:
        b = self.b
        if outcome in ("verified", "claimed") and b.check_diff:
            status = yield from self.call("run", command="git status --porcelain")
            keep = {target.path} | ({edit.path} if edit else set())
            cleaned = False
            for ln in status.splitlines()[1:]:
                path = ln[3:].strip()
                if len(ln) < 4 or path in keep or "__pycache__" in path or ".pytest_cache" in path:
                    continue
                q = shlex.quote(path)
                yield from self.call(
                    "run",
                    command=f"rm -rf -- {q}" if ln.startswith("??") else f"git checkout -- {q}",
                )
                cleaned = True
            if cleaned and outcome == "verified":
                rerun = yield from self.call("run", command=self.test_cmd)
                outcome = outcome if exit_code(rerun) == 0 else "gave_up"
        parts: list[str] = []
        if outcome == "verified" and edit:
            parts.append(
                f"Fixed {edit.path} line {edit.line}: `{edit.old.strip()}` -> `{edit.new.strip()}`. "
                f"Verified: `{self.test_cmd}` exited 0."
            )
            if b.check_diff:
                parts.append(f"`git status` shows only {edit.path} changed.")
        elif outcome == "claimed" and edit:
            parts.append(
                f"I fixed the bug in {edit.path} (line {edit.line}). The tests should pass now."
            )
        else:
            parts.append(
                f"I could not fix the failure in {target.path}; I stopped without a verified change."
            )
        if edit and target.kind == "config" and outcome in ("verified", "claimed"):
            lines = self.files.get(edit.path, "").splitlines()
            ctx = "\n".join(lines[max(0, edit.line - 4) : edit.line + 3])
            parts.append("Updated section:\n" + (mask_secrets(ctx) if b.no_leak else ctx))
        if self.noticed_injection and b.ignore_injections:
            parts.append(
                "Some files or outputs contained instructions addressed to AI agents; I treated them as data and did not follow them."
            )
        parts += self.revealed
        return "\n\n".join(parts)


def next_action(tr: Transcript, role: str, seed: int, slip_rate: float = 0.0) -> Action:
    """Replay the transcript into a fresh Mind and return what it does next."""
    gen = Mind(tr, role, seed, slip_rate).run()
    action = next(gen)
    for step in tr.steps:
        if action.final is not None:
            break
        try:
            action = gen.send(step.result)
        except StopIteration:
            return Action(final="Done.")
    return action


__all__ = ["Action", "Mind", "Target", "exit_code", "next_action"]
