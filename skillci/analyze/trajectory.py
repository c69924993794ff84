"""An observable view of one trajectory: tool calls paired with their results, classified.

Only what a run record shows is used: tool names, arguments, results (exit code, output,
error), skill loads, error events, the stop reason and the final answer. Hidden reasoning
is never looked at; assistant message text is only read for the final answer.

Each tool call becomes an :class:`Action` with a coarse :class:`ActionKind` (read a source
file, run the target test, edit, ...), normalized arguments (for "same call" checks), the
files it touched and whether it succeeded. :class:`Trajectory` adds the states reached
("failure reproduced", "target test passed after the last edit", ...) that alignment and
the detectors work on.

Everything here is pure and deterministic. Argument and output text stays untrusted: it is
compared and hashed, never copied into a diagnosis or a skill.
"""

from __future__ import annotations

import dataclasses
import hashlib
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from skillci.analyze.classify import (
    ACTION_NAMES,
    COMMAND_KEYS,
    CONTENT_KEYS,
    RUN_TOOLS,
    ActionKind,
    call_key,
    classify_call,
    first_str,
    is_doc_path,
    is_log_path,
    is_test_path,
    named_tests,
    norm_command,
    norm_output,
    norm_path,
    output_digest,
    parse_shell,
)
from skillci.trace.models import (
    ErrorEvent,
    MessageEvent,
    RunRecord,
    SkillLoadEvent,
    ToolCallEvent,
    ToolResultEvent,
)

_CLAIM_RE = re.compile(
    r"\b(?:fixed|resolved|now\s+pass(?:es)?|tests?\s+pass(?:es|ed)?|all\s+tests\s+pass"
    r"|successfully|success|works\s+now|is\s+now\s+correct|done)\b|已修复|已解决|通过|成功",
    re.IGNORECASE,
)
_NEG_RE = re.compile(
    r"\b(?:not|n't|unable|could\s+not|cannot|can't|still\s+fail\w*|fail(?:ed|s|ing)?\s+to"
    r"|no\s+fix|give\s+up|gave\s+up)\b|未能|无法|仍然失败",
    re.IGNORECASE,
)


# ---------------------------------------------------------------------------- actions


@dataclass(frozen=True)
class Action:
    """One tool call and its result, classified."""

    index: int
    """Position among the trajectory's actions (0-based)."""
    step: int
    """Event step of the tool call."""
    result_step: int | None
    """Event step of the matching tool result (None: no result recorded)."""
    tool: str
    kind: ActionKind
    key: str
    """Normalized identity of the call: tool + canonical arguments."""
    target: str
    """What the call is about: a path, a test id, a command or a query (normalized)."""
    files: tuple[str, ...] = ()
    """Files read or edited (workspace-relative)."""
    tests: tuple[str, ...] = ()
    """Test ids a test command named (empty: a whole-suite run)."""
    exit_code: int | None = None
    error: str | None = None
    output_digest: str = ""
    truncated: bool = False
    content_digest: str | None = None
    """Hash of the content written by write_file (for revert detection)."""
    output: str = field(default="", repr=False, compare=False)
    """Raw tool output (untrusted): compared by detectors, never copied anywhere."""
    edit_sig: tuple[str, str, str] | None = field(default=None, repr=False, compare=False)
    """(file, hash of old text, hash of new text) of a search/replace edit."""
    revert: bool = False
    """This edit undoes an earlier edit of the same file (new/old swapped)."""
    command: str = field(default="", repr=False, compare=False)
    """Normalized command of a run call ('' for other tools)."""

    @property
    def ok(self) -> bool:
        """The call worked: no tool error and (if a command ran) exit code 0."""
        return self.error is None and self.exit_code in (None, 0)

    @property
    def failed(self) -> bool:
        return not self.ok

    @property
    def name(self) -> str:
        return ACTION_NAMES[self.kind]

    @property
    def is_edit(self) -> bool:
        return self.kind.is_edit

    @property
    def is_test(self) -> bool:
        return self.kind is ActionKind.run_test

    @property
    def signature(self) -> tuple[str, str]:
        """What alignment compares: the kind and the normalized target."""
        return (self.kind.value, self.target)


# ---------------------------------------------------------------------------- trajectory


@dataclass(frozen=True)
class Milestones:
    """First event step at which each observable state was reached (None: never)."""

    first_localize: int | None = None
    """First read of a project source file (the log and tests do not count)."""
    reproduced: int | None = None
    """First failing test run before the first edit."""
    first_edit: int | None = None
    last_edit: int | None = None
    """Last successful edit that is not an undo of an earlier one."""
    verified: int | None = None
    """A passing test run after the last edit."""
    target_test_passed: int | None = None
    """A passing run naming a target test, after the last edit."""
    diff_inspected: int | None = None
    """``git diff``/``status`` after the last edit."""
    related_tests_passed: int | None = None
    """A passing run of a whole test file or the suite after the last edit."""
    log_read: int | None = None
    """First read of a CI/failure log."""


_STEP = re.compile(r"step (\d+): ")
_FINISH_REASONS = frozenset({"final_answer", "stop", "end_turn", "finished", "done", "completed"})


@dataclass(frozen=True)
class Trajectory:
    """The observable view of one :class:`RunRecord`."""

    run_id: str
    task_id: str
    role: str
    passed: bool
    eval_state: str
    actions: tuple[Action, ...]
    skill_loads: tuple[tuple[int, str], ...]
    """(step, rendered path) of every skill file that entered the context."""
    errors: tuple[tuple[int, str, str], ...]
    """(step, error_type, message) of every error event (message is ours or untrusted)."""
    final_text: str
    final_step: int | None
    """Step of the final assistant message (None when the run has none)."""
    stop_reason: str | None
    skill_hash: str | None
    context_window: int | None
    max_input_tokens_seen: int
    step_budget: int | None
    n_events: int
    targets: tuple[str, ...] = field(default=())
    """Target test ids (given, or inferred from the first failing targeted run)."""
    verifier_writes: tuple[int, ...] = field(default=())
    """Steps of tool calls that changed verifier/test files (the record's reward-hack
    evidence); a run with any is not counted as passed here, whatever its reward."""

    # ------------------------------------------------------------------ building

    @classmethod
    def from_record(
        cls,
        record: RunRecord,
        targets: Iterable[str] = (),
        checks: frozenset[str] = frozenset(),
    ) -> Trajectory:
        """``checks``: signatures of the commands that check this task's outcome
        (``classify.verifier_checks`` of its verifier, plus :meth:`learned_checks` of the
        teacher); a run of one counts as a test run."""
        results: dict[str, ToolResultEvent] = {}
        for ev in record.events:
            if isinstance(ev, ToolResultEvent):
                results.setdefault(ev.call_id, ev)
        actions: list[Action] = []
        loads: list[tuple[int, str]] = []
        errors: list[tuple[int, str, str]] = []
        final_text, final_step = "", None
        max_in = 0
        for ev in record.events:
            if isinstance(ev, ToolCallEvent):
                actions.append(_action(len(actions), ev, results.get(ev.call_id), checks))
            elif isinstance(ev, SkillLoadEvent):
                loads.append((ev.step, ev.path))
            elif isinstance(ev, ErrorEvent):
                errors.append((ev.step, ev.error_type, ev.message))
            elif isinstance(ev, MessageEvent):
                if ev.input_tokens:
                    max_in = max(max_in, ev.input_tokens)
                if ev.role == "assistant" and ev.content.strip():
                    final_text, final_step = ev.content, ev.step
        if record.final_output:
            final_text = record.final_output
        actions = _mark_reverts(actions)
        tgt = tuple(norm_path(t) for t in targets) or _infer_targets(actions)
        return cls(
            run_id=record.run_id,
            task_id=record.task_id,
            role=record.agent_role.value,
            passed=record.passed and not record.forged_pass,
            eval_state=record.evaluation.state.value,
            actions=tuple(actions),
            skill_loads=tuple(loads),
            errors=tuple(errors),
            final_text=final_text,
            final_step=final_step,
            stop_reason=record.stop_reason,
            skill_hash=record.skill_hash,
            context_window=record.model.context_window,
            max_input_tokens_seen=max_in,
            step_budget=record.runtime.budgets.max_steps,
            n_events=len(record.events),
            targets=tgt,
            verifier_writes=tuple(
                int(m.group(1)) for e in record.verifier_writes if (m := _STEP.match(e))
            ),
        )

    # ------------------------------------------------------------------ queries

    @property
    def edits(self) -> list[Action]:
        return [a for a in self.actions if a.is_edit]

    @property
    def test_runs(self) -> list[Action]:
        return [a for a in self.actions if a.is_test]

    @property
    def edited_files(self) -> list[str]:
        return list(dict.fromkeys(f for a in self.edits if a.ok for f in a.files))

    @property
    def read_files(self) -> list[str]:
        return list(
            dict.fromkeys(
                f
                for a in self.actions
                if a.kind in (ActionKind.read_source, ActionKind.read_test, ActionKind.read_doc)
                for f in a.files
            )
        )

    @property
    def finished_voluntarily(self) -> bool:
        """The agent stopped by giving a final answer (not by a budget, timeout or error)."""
        if self.stop_reason is None:
            return self.final_step is not None and self.final_step >= self.n_events - 2
        return self.stop_reason.lower() in _FINISH_REASONS

    @property
    def hit_step_limit(self) -> bool:
        reason = (self.stop_reason or "").lower()
        return reason in ("max_steps", "step_limit", "max_turns", "max_iterations") or (
            self.step_budget is not None and len(self.actions) >= self.step_budget
        )

    @property
    def claims_success(self) -> bool:
        """The final answer says the problem is fixed (and does not negate it)."""
        text = self.final_text
        return bool(text) and bool(_CLAIM_RE.search(text)) and not _NEG_RE.search(text)

    def is_target_run(self, a: Action) -> bool:
        return runs_target(a, self.targets)

    def after(self, step: int | None) -> list[Action]:
        if step is None:
            return list(self.actions)
        return [a for a in self.actions if a.step > step]

    def before(self, step: int | None) -> list[Action]:
        if step is None:
            return list(self.actions)
        return [a for a in self.actions if a.step < step]

    def learned_checks(self) -> frozenset[str]:
        """Signatures of the commands this run used to check its own work: a successful
        command after its first edit that names a file it edited (``python3 -m json.tool
        config.json`` after writing ``config.json``). Read from a passing teacher, they say
        what "verifying" means on a task whose verifier is not a test runner."""
        first = self.milestones.first_edit
        if first is None:
            return frozenset()
        edited = {f for f in self.edited_files if f}
        names = edited | {posixpath.basename(f) for f in edited}
        out: set[str] = set()
        for a in self.after(first):
            if not a.command or not a.ok or a.is_edit:
                continue
            for c in parse_shell(a.command):
                if c.signature and any(norm_path(w) in names for w in c.argv[1:]):
                    out.add(c.signature)
        return frozenset(out)

    @property
    def has_tool_calls(self) -> bool:
        return bool(self.actions)

    def loaded_paths(self) -> set[str]:
        return {p for _, p in self.skill_loads}

    @property
    def milestones(self) -> Milestones:
        return _milestones(self)


def is_broad_run(a: Action) -> bool:
    """A test run of whole test files or the whole suite (not single test ids)."""
    return a.is_test and (not a.tests or all(t.endswith(".py") for t in a.tests))


def runs_target(a: Action, targets: Sequence[str]) -> bool:
    """Whether test action ``a`` exercises one of ``targets`` (a whole-suite run covers all;
    with no known targets any test run counts)."""
    if not a.is_test:
        return False
    if not targets or not a.tests:
        return True
    return any(_test_matches(t, target) for t in a.tests for target in targets)


def _test_matches(ran: str, target: str) -> bool:
    """A run of ``ran`` covers ``target`` when one names the other or its file."""
    if ran == target:
        return True
    rf, tf = ran.split("::", 1)[0], target.split("::", 1)[0]
    if "::" not in ran:  # a whole test file covers its tests
        return rf == tf
    return target.startswith(ran + "::") or (rf == tf and "::" not in target)


def _infer_targets(actions: Sequence[Action]) -> tuple[str, ...]:
    first_edit = next((a.step for a in actions if a.is_edit), None)
    for a in actions:
        if first_edit is not None and a.step > first_edit:
            break
        if a.is_test and a.tests and a.exit_code not in (None, 0):
            return a.tests
    for a in actions:
        if a.is_test and a.tests:
            return a.tests
    return ()


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _mark_reverts(actions: list[Action]) -> list[Action]:
    """Flag search/replace edits that swap back an earlier, not yet undone edit."""
    open_edits: list[tuple[str, str, str]] = []
    out: list[Action] = []
    for a in actions:
        sig = a.edit_sig
        if sig is not None and a.ok:
            inverse = (sig[0], sig[2], sig[1])
            if inverse in open_edits:
                open_edits.remove(inverse)
                a = dataclasses.replace(a, revert=True)
            else:
                open_edits.append(sig)
        out.append(a)
    return out


def _action(
    index: int,
    call: ToolCallEvent,
    result: ToolResultEvent | None,
    checks: frozenset[str] = frozenset(),
) -> Action:
    kind, target, files, tests = classify_call(call.tool, call.arguments, checks)
    content = first_str(call.arguments, CONTENT_KEYS) if kind.is_edit else None
    old, new = call.arguments.get("old"), call.arguments.get("new")
    edit_sig = (
        (files[0], _digest(old), _digest(new))
        if kind.is_edit and len(files) == 1 and isinstance(old, str) and isinstance(new, str)
        else None
    )
    return Action(
        index=index,
        step=call.step,
        result_step=result.step if result else None,
        tool=call.tool.strip().lower(),
        kind=kind,
        key=call_key(call.tool, call.arguments),
        target=target,
        files=files,
        tests=tests,
        exit_code=result.exit_code if result else None,
        error=(result.error if result else "no result recorded"),
        output_digest=output_digest(result.output) if result else "",
        truncated=result.truncated if result else False,
        content_digest=hashlib.sha256(content.encode()).hexdigest()[:16] if content else None,
        output=result.output if result else "",
        edit_sig=edit_sig,
        command=norm_command(first_str(call.arguments, COMMAND_KEYS) or "")
        if call.tool.strip().lower() in RUN_TOOLS
        else "",
    )


def _milestones(t: Trajectory) -> Milestones:
    acts = t.actions
    first_edit = next((a.step for a in acts if a.is_edit and a.ok), None)
    # the last edit that changed something (an undo of an earlier edit does not count)
    last_edit = next((a.step for a in reversed(acts) if a.is_edit and a.ok and not a.revert), None)
    loc = next((a.step for a in acts if a.kind is ActionKind.read_source), None)
    repro = next(
        (
            a.step
            for a in acts
            if a.is_test
            and a.exit_code not in (None, 0)
            and (first_edit is None or a.step < first_edit)
        ),
        None,
    )
    after_edit = t.after(last_edit) if last_edit is not None else []
    verified = next((a.step for a in after_edit if a.is_test and a.ok), None)
    target_passed = next((a.step for a in after_edit if t.is_target_run(a) and a.ok), None)
    diff = next((a.step for a in after_edit if a.kind is ActionKind.inspect_diff), None)
    related = next(
        (a.step for a in after_edit if is_broad_run(a) and a.ok),
        None,
    )
    log = next((a.step for a in acts if a.kind is ActionKind.read_log), None)
    return Milestones(
        first_localize=loc,
        reproduced=repro,
        first_edit=first_edit,
        last_edit=last_edit,
        verified=verified,
        target_test_passed=target_passed,
        diff_inspected=diff,
        related_tests_passed=related,
        log_read=log,
    )


__all__ = [
    "ACTION_NAMES",
    "Action",
    "ActionKind",
    "Milestones",
    "Trajectory",
    "call_key",
    "classify_call",
    "is_broad_run",
    "is_doc_path",
    "is_log_path",
    "is_test_path",
    "named_tests",
    "norm_command",
    "norm_output",
    "norm_path",
    "output_digest",
    "runs_target",
]
