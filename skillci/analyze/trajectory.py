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
import enum
import hashlib
import json
import posixpath
import re
import shlex
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from skillci.trace.models import (
    ErrorEvent,
    MessageEvent,
    RunRecord,
    SkillLoadEvent,
    ToolCallEvent,
    ToolResultEvent,
)


class ActionKind(enum.StrEnum):
    """What a tool call did, as far as its name and arguments show."""

    read_log = "read_log"
    read_source = "read_source"
    read_test = "read_test"
    read_doc = "read_doc"
    list_files = "list_files"
    search_code = "search_code"
    run_test = "run_test"
    inspect_diff = "inspect_diff"
    edit_source = "edit_source"
    edit_test = "edit_test"
    load_skill_file = "load_skill_file"
    shell_read = "shell_read"
    shell_search = "shell_search"
    shell_list = "shell_list"
    run_other = "run_other"
    other = "other"

    @property
    def is_edit(self) -> bool:
        return self in (ActionKind.edit_source, ActionKind.edit_test)

    @property
    def is_exploration(self) -> bool:
        return self in _EXPLORATION


_EXPLORATION = frozenset(
    {
        ActionKind.list_files,
        ActionKind.search_code,
        ActionKind.shell_search,
        ActionKind.shell_list,
    }
)

#: Canonical snake_case name of each kind, used in diagnoses (student/teacher behaviour).
ACTION_NAMES: dict[ActionKind, str] = {
    ActionKind.read_log: "read_ci_failure_log",
    ActionKind.read_source: "read_target_source_file",
    ActionKind.read_test: "read_nearest_test",
    ActionKind.read_doc: "read_reference_doc",
    ActionKind.list_files: "list_files",
    ActionKind.search_code: "search_code",
    ActionKind.run_test: "run_target_test",
    ActionKind.inspect_diff: "inspect_git_diff",
    ActionKind.edit_source: "edit_source_file",
    ActionKind.edit_test: "edit_test_file",
    ActionKind.load_skill_file: "load_skill_file",
    ActionKind.shell_read: "read_file_with_shell",
    ActionKind.shell_search: "search_with_shell",
    ActionKind.shell_list: "list_files_with_shell",
    ActionKind.run_other: "run_command",
    ActionKind.other: "call_tool",
}

# ---------------------------------------------------------------------------- argument keys

_PATH_KEYS = ("path", "file", "file_path", "filename", "target", "relpath")
_COMMAND_KEYS = ("command", "cmd", "script")
_QUERY_KEYS = ("query", "pattern", "regex", "text", "needle")
_PATCH_KEYS = ("patch", "diff", "input", "edits")
_CONTENT_KEYS = ("content", "contents", "text", "data")

READ_TOOLS = frozenset({"read_file", "open_file", "view_file", "cat"})
LIST_TOOLS = frozenset({"list_files", "list_dir", "ls"})
SEARCH_TOOLS = frozenset({"search_code", "grep", "search", "find_in_files"})
RUN_TOOLS = frozenset({"run", "bash", "shell", "exec", "execute", "run_command", "terminal"})
WRITE_TOOLS = frozenset(
    {"write_file", "create_file", "edit_file", "str_replace", "replace_in_file"}
)
PATCH_TOOLS = frozenset({"apply_patch", "patch"})
SKILL_TOOLS = frozenset({"load_skill_file", "load_skill", "read_skill_file"})

_TEST_CMD_RE = re.compile(
    r"(?:^|[\s;&|(])(?:python\d?(?:\.\d+)?\s+-m\s+(?:pytest|unittest|nose2)|pytest|py\.test"
    r"|nose2|tox|make\s+test|npm\s+test|go\s+test|cargo\s+test)\b"
)
_DIFF_CMD_RE = re.compile(r"(?:^|[\s;&|(])git\s+(?:--no-pager\s+)?(?:diff|status|show)\b")
_SHELL_READ_RE = re.compile(r"^(?:cat|head|tail|less|more|nl|bat)\b|^sed\s+-n\b|^awk\b")
_SHELL_SEARCH_RE = re.compile(
    r"^(?:grep|egrep|rg|ag|ack|git\s+grep)\b|^find\b.*\s-(?:i?name|path)\b"
)
_SHELL_LIST_RE = re.compile(r"^(?:ls|tree|find|dir)\b")
_SHELL_EDIT_RE = re.compile(
    r"^(?:sed\s+(?:-\w*\s+)*-i|perl\s+-\w*i|patch\b|git\s+apply\b|tee\b)|(?<![<>&\d])>>?\s*(?!&)\S"
)
_DOC_RE = re.compile(r"(?:^|/)(?:docs?|references?|manual)/|\.(?:md|rst|txt|adoc)$", re.IGNORECASE)
_LOG_RE = re.compile(r"(?:^|/|[._-])(?:ci|logs?|build|failure|traceback)(?:[._/-]|$)|\.log$", re.I)
_WS_PREFIX_RE = re.compile(r"^/(?:.*?/)?(?:workspace|testbed|repo|app|src_root)/")
_TIMING_RE = re.compile(r"\d+(?:\.\d+)?\s?(?:s|ms|sec|seconds)\b")
_ADDR_RE = re.compile(r"0x[0-9a-fA-F]+")
_DIFF_FILE_RE = re.compile(
    r"^(?:\+\+\+\s+(?:b/)?(?P<a>\S+)|\*\*\*\s+(?:Update|Add|Delete)\s+File:\s+(?P<b>\S+))", re.M
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


def _first_str(args: Mapping[str, Any], keys: Sequence[str]) -> str | None:
    for k in keys:
        v = args.get(k)
        if isinstance(v, str) and v.strip():
            return v
    return None


def norm_path(path: str) -> str:
    """A workspace-relative POSIX path: ``./a//b.py`` and ``/workspace/a/b.py`` -> ``a/b.py``."""
    p = path.strip().strip("'\"").replace("\\", "/")
    p = _WS_PREFIX_RE.sub("", p)
    p = posixpath.normpath(p) if p else p
    while p.startswith("./"):
        p = p[2:]
    return "" if p == "." else p


def norm_command(cmd: str) -> str:
    """Whitespace-collapsed command, with a leading ``cd <workspace> &&`` dropped."""
    c = " ".join(cmd.strip().split())
    c = re.sub(r"^cd\s+\S+\s*&&\s*", "", c)
    return c


def norm_output(text: str) -> str:
    """Output with timings and addresses masked, for "same result" comparisons."""
    return _ADDR_RE.sub("0x?", _TIMING_RE.sub("<t>", " ".join(text.split())))


def output_digest(text: str) -> str:
    return hashlib.sha256(norm_output(text).encode()).hexdigest()[:16]


def is_test_path(path: str) -> bool:
    p = norm_path(path)
    name = posixpath.basename(p)
    parts = p.split("/")
    return (
        "tests" in parts[:-1]
        or "test" in parts[:-1]
        or name.startswith("test_")
        or name.endswith(("_test.py", "_tests.py"))
        or name == "conftest.py"
    )


def is_doc_path(path: str) -> bool:
    return bool(_DOC_RE.search(norm_path(path))) and not is_log_path(path)


def is_log_path(path: str) -> bool:
    return bool(_LOG_RE.search(norm_path(path)))


def named_tests(command: str) -> tuple[str, ...]:
    """Test ids/files a test command names (``a/test_x.py::test_y``, ``-k expr``)."""
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    out: list[str] = []
    for i, tok in enumerate(tokens):
        if tok == "-k" and i + 1 < len(tokens):
            out.append("-k " + tokens[i + 1])
        elif "::" in tok or (tok.endswith(".py") and is_test_path(tok)):
            out.append(norm_path(tok))
        elif re.fullmatch(r"(?:tests?\.)?[\w.]*test\w*(?:\.\w+)*", tok) and tok.count(".") >= 1:
            out.append(tok)  # unittest dotted id
    return tuple(out)


def _shell_edit_target(command: str) -> str | None:
    try:
        tokens = shlex.split(command)
    except ValueError:
        tokens = command.split()
    for i, tok in enumerate(tokens):
        if tok in (">", ">>") and i + 1 < len(tokens):
            return norm_path(tokens[i + 1])
        if tok.startswith(">") and len(tok) > 1 and not tok.startswith(">&"):
            return norm_path(tok.lstrip(">"))
    paths = [t for t in tokens[1:] if not t.startswith("-") and ("/" in t or "." in t)]
    return norm_path(paths[-1]) if paths else None


def _patch_files(text: str) -> tuple[str, ...]:
    files = []
    for m in _DIFF_FILE_RE.finditer(text):
        f = m.group("a") or m.group("b")
        if f and f != "/dev/null":
            files.append(norm_path(f))
    return tuple(dict.fromkeys(files))


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


def classify_call(
    tool: str, arguments: Mapping[str, Any]
) -> tuple[ActionKind, str, tuple[str, ...], tuple[str, ...]]:
    """(kind, target, files, tests) of a tool call, from its name and arguments only."""
    t = tool.strip().lower()
    path = _first_str(arguments, _PATH_KEYS)
    npath = norm_path(path) if path else ""
    if t in SKILL_TOOLS:
        return ActionKind.load_skill_file, npath, (), ()
    if t in READ_TOOLS:
        if not npath:
            return ActionKind.read_source, "", (), ()
        if is_log_path(npath):
            kind = ActionKind.read_log
        elif is_test_path(npath):
            kind = ActionKind.read_test
        elif is_doc_path(npath):
            kind = ActionKind.read_doc
        else:
            kind = ActionKind.read_source
        return kind, npath, (npath,), ()
    if t in LIST_TOOLS:
        return ActionKind.list_files, npath or ".", (), ()
    if t in SEARCH_TOOLS:
        q = _first_str(arguments, _QUERY_KEYS) or ""
        return ActionKind.search_code, " ".join(q.split()), (), ()
    if t in WRITE_TOOLS:
        kind = ActionKind.edit_test if npath and is_test_path(npath) else ActionKind.edit_source
        return kind, npath, (npath,) if npath else (), ()
    if t in PATCH_TOOLS:
        text = _first_str(arguments, _PATCH_KEYS) or ""
        files = _patch_files(text) or ((npath,) if npath else ())
        kind = (
            ActionKind.edit_test
            if files and all(is_test_path(f) for f in files)
            else ActionKind.edit_source
        )
        return kind, ",".join(files), files, ()
    if t in RUN_TOOLS:
        cmd = norm_command(_first_str(arguments, _COMMAND_KEYS) or "")
        return _classify_command(cmd)
    return ActionKind.other, json.dumps(dict(arguments), sort_keys=True, default=str), (), ()


def _classify_command(cmd: str) -> tuple[ActionKind, str, tuple[str, ...], tuple[str, ...]]:
    if _TEST_CMD_RE.search(cmd):
        tests = named_tests(cmd)
        return ActionKind.run_test, ",".join(tests) or "<suite>", (), tests
    if _DIFF_CMD_RE.search(cmd):
        return ActionKind.inspect_diff, cmd, (), ()
    if _SHELL_EDIT_RE.search(cmd):
        target = _shell_edit_target(cmd)
        files = (target,) if target else ()
        kind = ActionKind.edit_test if target and is_test_path(target) else ActionKind.edit_source
        return kind, target or cmd, files, ()
    if _SHELL_SEARCH_RE.search(cmd):
        return ActionKind.shell_search, cmd, (), ()
    if _SHELL_READ_RE.search(cmd):
        return ActionKind.shell_read, cmd, (), ()
    if _SHELL_LIST_RE.search(cmd):
        return ActionKind.shell_list, cmd, (), ()
    return ActionKind.run_other, cmd, (), ()


def call_key(tool: str, arguments: Mapping[str, Any]) -> str:
    """Canonical identity of a call: same tool + same normalized arguments -> same key."""
    canon: dict[str, Any] = {}
    for k, v in sorted(arguments.items()):
        if isinstance(v, str):
            if k in _PATH_KEYS:
                v = norm_path(v)
            elif k in _COMMAND_KEYS:
                v = norm_command(v)
            else:
                v = " ".join(v.split())
        canon[k] = v
    return tool.strip().lower() + ":" + json.dumps(canon, sort_keys=True, default=str)


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

    # ------------------------------------------------------------------ building

    @classmethod
    def from_record(cls, record: RunRecord, targets: Iterable[str] = ()) -> Trajectory:
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
                actions.append(_action(len(actions), ev, results.get(ev.call_id)))
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
            passed=record.passed,
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


def _action(index: int, call: ToolCallEvent, result: ToolResultEvent | None) -> Action:
    kind, target, files, tests = classify_call(call.tool, call.arguments)
    content = _first_str(call.arguments, _CONTENT_KEYS) if kind.is_edit else None
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
        command=norm_command(_first_str(call.arguments, _COMMAND_KEYS) or "")
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
