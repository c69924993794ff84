"""Classify one tool call from its name and arguments: kind, subject, files, test ids.

Observable only: the call's tool name and arguments (never its reasoning). Tool-name
aliases cover other harnesses (``bash``/``shell`` for ``run``, ``str_replace`` for edits);
argument keys are looked up by their usual names. Shell commands are classified by shape
(test runner, ``git diff``/``status``, shell stand-ins for dedicated tools, redirections
that edit files). Normalizers make "the same call" comparable across runs and workspaces.
Pure and deterministic.
"""

from __future__ import annotations

import enum
import hashlib
import json
import posixpath
import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any


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

PATH_KEYS = ("path", "file", "file_path", "filename", "target", "relpath")
COMMAND_KEYS = ("command", "cmd", "script")
QUERY_KEYS = ("query", "pattern", "regex", "text", "needle")
PATCH_KEYS = ("patch", "diff", "input", "edits")
CONTENT_KEYS = ("content", "contents", "text", "data")

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
_DOC_RE = re.compile(r"(?:^|/)(?:docs?|references?|manual)/|\.(?:md|rst|txt|adoc)$", re.IGNORECASE)
_LOG_RE = re.compile(r"(?:^|/|[._-])(?:ci|logs?|build|failure|traceback)(?:[._/-]|$)|\.log$", re.I)
_WS_PREFIX_RE = re.compile(r"^/(?:.*?/)?(?:workspace|testbed|repo|app|src_root)/")
#: from a number's first digit only, without giving digits back (design 466: read from each
#: digit of a run of 12,000, 3.8 s)
_TIMING_RE = re.compile(r"(?<!\d)\d++(?:\.\d++)?\s?(?:s|ms|sec|seconds)\b")
_ADDR_RE = re.compile(r"0x[0-9a-fA-F]+")
_DIFF_FILE_RE = re.compile(
    r"^(?:\+\+\+\s+(?:b/)?(?P<a>\S+)|\*\*\*\s+(?:Update|Add|Delete)\s+File:\s+(?P<b>\S+))", re.M
)


def first_str(args: Mapping[str, Any], keys: Sequence[str]) -> str | None:
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


def _patch_files(text: str) -> tuple[str, ...]:
    files = []
    for m in _DIFF_FILE_RE.finditer(text):
        f = m.group("a") or m.group("b")
        if f and f != "/dev/null":
            files.append(norm_path(f))
    return tuple(dict.fromkeys(files))


def classify_call(
    tool: str, arguments: Mapping[str, Any], checks: frozenset[str] = frozenset()
) -> tuple[ActionKind, str, tuple[str, ...], tuple[str, ...]]:
    """(kind, target, files, tests) of a tool call, from its name and arguments only.

    ``checks``: signatures of commands that check the task's outcome (see
    :func:`verifier_checks`, :meth:`SimpleCommand.signature`); a run of one is a ``run_test``."""
    t = tool.strip().lower()
    path = first_str(arguments, PATH_KEYS)
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
        q = first_str(arguments, QUERY_KEYS) or ""
        return ActionKind.search_code, " ".join(q.split()), (), ()
    if t in WRITE_TOOLS:
        kind = ActionKind.edit_test if npath and is_test_path(npath) else ActionKind.edit_source
        return kind, npath, (npath,) if npath else (), ()
    if t in PATCH_TOOLS:
        text = first_str(arguments, PATCH_KEYS) or ""
        files = _patch_files(text) or ((npath,) if npath else ())
        kind = (
            ActionKind.edit_test
            if files and all(is_test_path(f) for f in files)
            else ActionKind.edit_source
        )
        return kind, ",".join(files), files, ()
    if t in RUN_TOOLS:
        cmd = norm_command(first_str(arguments, COMMAND_KEYS) or "")
        return _classify_command(cmd, checks)
    return ActionKind.other, json.dumps(dict(arguments), sort_keys=True, default=str), (), ()


def _classify_command(
    cmd: str, checks: frozenset[str] = frozenset()
) -> tuple[ActionKind, str, tuple[str, ...], tuple[str, ...]]:
    """Classify a shell command from its parsed simple commands (see :func:`parse_shell`).

    Order: a check of the outcome (a known test runner, or a program ``checks`` names —
    learned from the task's verifier and the teacher), ``git diff``/``status``, a write to a
    workspace file (redirection to a file that is not ``/dev/null`` or a descriptor,
    ``tee``, ``sed -i``, ``patch``), then what the first real command does."""
    parsed = parse_shell(cmd)
    sigs = [c.signature for c in parsed]
    if _TEST_CMD_RE.search(cmd) or any(s in checks for s in sigs if s):
        tests = named_tests(cmd)
        return ActionKind.run_test, ",".join(tests) or "<suite>", (), tests
    if _DIFF_CMD_RE.search(cmd):
        return ActionKind.inspect_diff, cmd, (), ()
    written = tuple(dict.fromkeys(f for c in parsed for f in c.writes))
    if written:
        target = written[-1]
        kind = ActionKind.edit_test if is_test_path(target) else ActionKind.edit_source
        return kind, target, written, ()
    head = next((c for c in parsed if c.argv), None)
    line = " ".join(head.argv) if head is not None else cmd
    if _SHELL_SEARCH_RE.search(line):
        return ActionKind.shell_search, cmd, (), ()
    if _SHELL_READ_RE.search(line):
        return ActionKind.shell_read, cmd, (), ()
    if _SHELL_LIST_RE.search(line):
        return ActionKind.shell_list, cmd, (), ()
    return ActionKind.run_other, cmd, (), ()


# ---------------------------------------------------------------------------- shell parsing

_OPS = frozenset({";", "&&", "||", "|", "&", "|&", "(", ")", ";;"})
_REDIRECTS = frozenset({">", ">>", "<", "<<", "<<<", ">&", "&>", "&>>", ">|", "<>", "<&"})
_SINKS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"})
#: Words that run the command after them (``sudo pytest``, ``timeout 60 make test``).
_WRAPPERS = frozenset({"sudo", "env", "time", "nice", "nohup", "timeout", "command", "exec"})
#: Shell built-ins and plumbing that never check anything on their own.
_NOT_CHECKS = frozenset(
    {
        "cd", "echo", "printf", "export", "set", "unset", "source", ".", "true", "false",
        "exit", "return", "test", "[", "[[", "mkdir", "rm", "cp", "mv", "touch", "chmod",
        "chown", "ln", "cat", "head", "tail", "ls", "tee", "sleep", "wc", "sort", "uniq",
        "tr", "cut", "grep", "sed", "awk", "find", "xargs", "pip", "pip3", "apt-get", "apt",
        "curl", "wget", "uv", "git", "if", "then", "else", "fi", "for", "do", "done",
        "while", "case", "esac", "local", "trap", "shift", "read", "wait", "umask",
    }
)  # fmt: skip
_INTERPRETER_RE = re.compile(r"^(python|node|ruby|perl|bash|sh|zsh|deno|bun)[\d.]*$")


class SimpleCommand:
    """One simple command of a shell line: its words and the files it redirects into."""

    __slots__ = ("argv", "writes")

    def __init__(self, argv: tuple[str, ...], writes: tuple[str, ...]) -> None:
        self.argv = argv
        """Words after wrappers (``sudo``, ``timeout 5``) and ``VAR=value`` assignments."""
        self.writes = writes
        """Workspace files the command writes: ``>``/``>>`` targets that are not sinks or
        descriptors, ``tee`` arguments, in-place ``sed``/``perl`` files, ``patch`` targets."""

    @property
    def program(self) -> str:
        return posixpath.basename(self.argv[0]) if self.argv else ""

    @property
    def signature(self) -> str:
        """What "the same check" means across runs: the program (an interpreter with its
        ``-m module`` or script name): ``python -m json.tool``, ``python check.py``, ``jq``.
        Empty for shell plumbing (``cd``, ``echo``, ``cat``...)."""
        prog = self.program
        if not prog or prog in _NOT_CHECKS:
            return ""
        m = _INTERPRETER_RE.match(prog)
        if m is None:
            return prog
        base, rest = m.group(1), self.argv[1:]
        for i, w in enumerate(rest):
            if w == "-m" and i + 1 < len(rest):
                return f"{base} -m {rest[i + 1]}"
            if w in ("-c", "-e"):
                return ""  # inline code: nothing stable to learn
            if not w.startswith("-"):
                return f"{base} {posixpath.basename(w)}"
        return ""

    def __repr__(self) -> str:
        return f"SimpleCommand(argv={self.argv!r}, writes={self.writes!r})"


def _lex(cmd: str) -> list[str]:
    text = cmd if "<<" in cmd else cmd.replace("\n", " ; ")
    lex = shlex.shlex(text, posix=True, punctuation_chars=";&|<>()")
    lex.whitespace_split = True
    lex.commenters = ""
    try:
        return list(lex)
    except ValueError:  # unbalanced quotes: fall back to words
        return text.split()


def parse_shell(cmd: str) -> tuple[SimpleCommand, ...]:
    """The simple commands of a shell line, split at ``;``, ``&&``, ``||``, ``|``, with
    redirections taken out of the words: ``2>&1`` and ``> /dev/null`` write no file,
    ``> out.json`` writes ``out.json``. A heredoc's body is not parsed as commands."""
    out: list[SimpleCommand] = []
    words: list[str] = []
    writes: list[str] = []
    toks = _lex(cmd)
    i = 0

    def flush() -> None:
        argv = _strip_wrappers(words)
        out.append(SimpleCommand(tuple(argv), tuple(writes + _arg_writes(argv))))
        words.clear()
        writes.clear()

    while i < len(toks):
        tok = toks[i]
        if tok in _OPS:
            flush()
        elif tok in _REDIRECTS:
            if words and words[-1].isdigit():
                words.pop()  # the descriptor of ``2>``
            dest = toks[i + 1] if i + 1 < len(toks) else ""
            i += 1
            if tok == "<<":  # heredoc: the rest is its body
                i = len(toks)
            elif tok in _WRITE_OPS and _is_file(dest):
                writes.append(norm_path(dest))
        else:
            words.append(tok)
        i += 1
    flush()
    return tuple(c for c in out if c.argv or c.writes)


_WRITE_OPS = frozenset({">", ">>", ">|", "&>", "&>>"})


def _is_file(dest: str) -> bool:
    """A redirection target that is a file (not a descriptor such as ``1`` or ``&2``, not a
    sink such as ``/dev/null``)."""
    return bool(dest) and not dest.isdigit() and not dest.startswith("&") and dest not in _SINKS


def _strip_wrappers(words: list[str]) -> list[str]:
    i = 0
    while i < len(words):
        w = words[i]
        if re.fullmatch(r"[A-Za-z_]\w*=.*", w):
            i += 1
        elif w in _WRAPPERS:
            i += 1
            while i < len(words) and (
                words[i].startswith("-") or re.fullmatch(r"[\d.]+[smh]?", words[i])
            ):
                i += 1
        else:
            break
    return words[i:]


def _arg_writes(argv: list[str]) -> list[str]:
    """Files a command writes through its arguments (``tee f``, ``sed -i ... f``)."""
    if not argv:
        return []
    prog = posixpath.basename(argv[0])
    args = [a for a in argv[1:] if not a.startswith("-")]
    if prog == "tee":
        return [norm_path(a) for a in args]
    inplace = any(a.startswith("-i") or a == "--in-place" for a in argv[1:])
    if prog == "sed" and inplace and len(args) >= 2:
        return [norm_path(a) for a in args[1:]]
    if prog == "perl" and any(re.fullmatch(r"-\w*i\S*", a) for a in argv[1:]) and args:
        return [norm_path(args[-1])]
    if prog == "patch" and args:
        return [norm_path(args[0])]
    if argv[:2] == ["git", "apply"]:
        return [norm_path(a) for a in args[1:]] or ["<patch>"]
    return []


def verifier_checks(script: str) -> frozenset[str]:
    """Signatures of the checks a task's verifier (``tests/test.sh``) runs: what "checking
    the outcome" means for this task (``pytest``, ``python -m json.tool``, ``jq``...)."""
    sigs: set[str] = set()
    for line in script.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        for c in parse_shell(s):
            if c.signature:
                sigs.add(c.signature)
    return frozenset(sigs)


def call_key(tool: str, arguments: Mapping[str, Any]) -> str:
    """Canonical identity of a call: same tool + same normalized arguments -> same key."""
    canon: dict[str, Any] = {}
    for k, v in sorted(arguments.items()):
        if isinstance(v, str):
            if k in PATH_KEYS:
                v = norm_path(v)
            elif k in COMMAND_KEYS:
                v = norm_command(v)
            else:
                v = " ".join(v.split())
        canon[k] = v
    return tool.strip().lower() + ":" + json.dumps(canon, sort_keys=True, default=str)


__all__ = [
    "ACTION_NAMES",
    "COMMAND_KEYS",
    "CONTENT_KEYS",
    "LIST_TOOLS",
    "PATCH_KEYS",
    "PATCH_TOOLS",
    "PATH_KEYS",
    "QUERY_KEYS",
    "READ_TOOLS",
    "RUN_TOOLS",
    "SEARCH_TOOLS",
    "SKILL_TOOLS",
    "WRITE_TOOLS",
    "ActionKind",
    "SimpleCommand",
    "call_key",
    "classify_call",
    "first_str",
    "is_doc_path",
    "is_log_path",
    "is_test_path",
    "named_tests",
    "norm_command",
    "norm_output",
    "norm_path",
    "output_digest",
    "parse_shell",
    "verifier_checks",
]
