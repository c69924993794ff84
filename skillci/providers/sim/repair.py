"""The simulated models' fix repertoire: candidate one-line edits, in a fixed order.

Python: mutation operators applied to one line at a time — the traceback's line first,
then the target function's other lines top to bottom. The student knows comparison flips
(all strict comparisons of a line at once, then one at a time), ``+``/``-`` swaps, integer
literal +-1, ``return`` +-1 and boolean flips. The teacher additionally knows argument
swaps of two-argument calls and ``/`` -> ``//``. No skill text adds an operator: a bug that
needs one the student lacks is beyond its capability (not skill-compilable).

Config: edits suggested by a checker message on one line — ``did you mean 'x'``,
``expected one of: a, b``, ``expected an integer``, ``duplicate key`` (student); ``out of
range [lo, hi]`` (teacher only).
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace ``old`` (unique in the file) by ``new``; ``line`` is 1-based."""

    path: str
    line: int
    old: str
    new: str
    op: str


_FLIP = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
_STRICT = {"<": "<=", ">": ">="}
_VALUE_END = {tokenize.NAME, tokenize.NUMBER, tokenize.STRING}


def _tokens(line: str) -> list[tokenize.TokenInfo]:
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(line.strip() + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return [t for t in toks if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]


def _replace(line: str, tok: tokenize.TokenInfo, text: str) -> str:
    indent = len(line) - len(line.lstrip())
    a, b = indent + tok.start[1], indent + tok.end[1]
    return line[:a] + text + line[b:]


def _replace_many(line: str, toks: list[tokenize.TokenInfo], texts: list[str]) -> str:
    for tok, text in sorted(zip(toks, texts, strict=True), key=lambda p: -p[0].start[1]):
        line = _replace(line, tok, text)
    return line


def _line_mutations(line: str, teacher: bool) -> list[tuple[str, str]]:
    toks = _tokens(line)
    out: list[tuple[str, str]] = []
    ops = [t for t in toks if t.type == tokenize.OP]
    strict = [t for t in ops if t.string in _STRICT]
    if len([t for t in ops if t.string in _FLIP and t.string not in ("==", "!=")]) >= 2 and strict:
        out.append(
            ("compare_all", _replace_many(line, strict, [_STRICT[t.string] for t in strict]))
        )
    out += [("compare", _replace(line, t, _FLIP[t.string])) for t in ops if t.string in _FLIP]
    for i, t in enumerate(toks):
        if t.type == tokenize.OP and t.string in "+-" and len(t.string) == 1 and i > 0:
            prev = toks[i - 1]
            if prev.type in _VALUE_END or prev.string in ")]":
                out.append(("arith", _replace(line, t, "-" if t.string == "+" else "+")))
    for t in toks:
        if t.type == tokenize.NUMBER and t.string.isdigit():
            n = int(t.string)
            if n > 0:
                out.append(("literal", _replace(line, t, str(n - 1))))
            out.append(("literal", _replace(line, t, str(n + 1))))
    out += [("arg_adjust", s) for s in _adjusted_args(line)]
    body = line.strip()
    if body.startswith("return ") and not re.search(
        r"[<>=!]=?|\b(and|or|not|if)\b|['\"]", body[7:]
    ):
        out += [
            ("return_adjust", f"{line.rstrip()} - 1"),
            ("return_adjust", f"{line.rstrip()} + 1"),
        ]
    for t in toks:
        if t.type == tokenize.NAME and t.string in ("and", "or"):
            out.append(("boolean", _replace(line, t, "or" if t.string == "and" else "and")))
    if " not " in f" {body} ":
        out.append(("boolean", line.replace("not ", "", 1)))
    if teacher:
        out += [("swap_args", s) for s in _swapped_calls(line)]
        out += [("floor_div", _replace(line, t, "//")) for t in ops if t.string == "/"]
    return out


def _parse_line(line: str) -> tuple[str, ast.AST] | None:
    body = line.strip()
    src = body + " pass" if body.endswith(":") else body
    try:
        return src, ast.parse(src)
    except SyntaxError:
        return None


def _adjusted_args(line: str) -> list[str]:
    """Off-by-one on each non-literal positional argument of each call: ``f(n)`` -> ``f(n - 1)``."""
    parsed = _parse_line(line)
    if parsed is None:
        return []
    _src, tree = parsed
    indent = len(line) - len(line.lstrip())
    out = []
    calls = sorted(
        (n for n in ast.walk(tree) if isinstance(n, ast.Call)), key=lambda n: n.col_offset
    )
    for call in calls:
        for arg in call.args:
            if (
                not isinstance(arg, ast.Name | ast.Call | ast.Attribute | ast.Subscript)
                or arg.end_col_offset is None
            ):
                continue
            a, b = indent + arg.col_offset, indent + arg.end_col_offset
            seg = line[a:b]
            out += [line[:a] + f"{seg} - 1" + line[b:], line[:a] + f"{seg} + 1" + line[b:]]
    return out


def _swapped_calls(line: str) -> list[str]:
    parsed = _parse_line(line)
    if parsed is None:
        return []
    src, tree = parsed
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and len(node.args) == 2 and not node.keywords:
            a, b = (ast.get_source_segment(src, x) for x in node.args)
            func = ast.get_source_segment(src, node.func)
            if a and b and func:
                old = f"{func}({a}, {b})"
                if old in line:
                    out.append(line.replace(old, f"{func}({b}, {a})", 1))
    return out


def _function_lines(source: str, func: str | None) -> list[int]:
    """1-based lines of ``func``'s body (without def/docstring/blank/comment lines)."""
    lines = source.splitlines()
    span: range | None = None
    if func:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            tree = None
        for node in ast.walk(tree) if tree else []:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == func:
                first = node.body[0]
                doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                start = (
                    (first.end_lineno or first.lineno) + 1
                    if doc and len(node.body) > 1
                    else first.lineno
                )
                span = range(start, (node.end_lineno or start) + 1)
                break
    if span is None:
        span = range(1, len(lines) + 1)
    return [
        n
        for n in span
        if lines[n - 1].strip()
        and not lines[n - 1].strip().startswith(("#", "def ", "import ", "from ", "class ", "@"))
    ]


def _unique_edit(path: str, source: str, n: int, new_line: str, op: str) -> Edit:
    lines = source.splitlines()
    old, new = lines[n - 1], new_line
    ctx = n
    while source.count(old) > 1 and ctx < len(lines):
        old, new = old + "\n" + lines[ctx], new + "\n" + lines[ctx]
        ctx += 1
    return Edit(path, n, old, new, op)


def python_candidates(
    path: str, source: str, func: str | None, frame_line: int | None, *, teacher: bool
) -> list[Edit]:
    """Edits in ``func`` (its frame line first), then in same-file functions the frame line calls."""
    out = _candidates_in(path, source, func, frame_line, teacher)
    lines = source.splitlines()
    if frame_line and 1 <= frame_line <= len(lines):
        for callee in dict.fromkeys(re.findall(r"\b(\w+)\(", lines[frame_line - 1])):
            if callee != func and re.search(rf"^\s*def {callee}\(", source, re.MULTILINE):
                out += [
                    e for e in _candidates_in(path, source, callee, None, teacher) if e not in out
                ]
    return out


def _candidates_in(
    path: str, source: str, func: str | None, frame_line: int | None, teacher: bool
) -> list[Edit]:
    body = _function_lines(source, func)
    order = ([frame_line] if frame_line in body else []) + [n for n in body if n != frame_line]
    lines = source.splitlines()
    seen: set[str] = set()
    out: list[Edit] = []
    for n in order:
        for op, new in _line_mutations(lines[n - 1], teacher):
            key = f"{n}:{new}"
            if new != lines[n - 1] and key not in seen:
                seen.add(key)
                out.append(_unique_edit(path, source, n, new, op))
    return out


_KV = re.compile(r'^(\s*"?[\w.-]+"?\s*[=:]\s*)(.*?)(\s*,?\s*)$')
_JSON_LITERAL = re.compile(r"^(true|false|null|-?\d+(\.\d+)?)$")


def _with_value(line: str, value: str) -> str | None:
    m = _KV.match(line)
    if not m:
        return None
    old = m.group(2)
    quoted = len(old) >= 2 and old[0] == old[-1] and old[0] in "\"'"
    if quoted and not _JSON_LITERAL.match(value):
        value = f"{old[0]}{value}{old[0]}"
    return m.group(1) + value + m.group(3)


def config_candidates(
    path: str, source: str, line: int, message: str, *, teacher: bool
) -> list[Edit]:
    lines = source.splitlines()
    if not 1 <= line <= len(lines):
        return []
    text = lines[line - 1]
    news: list[tuple[str, str]] = []
    m = re.search(r"unknown key '([^']+)'.*did you mean '([^']+)'", message)
    if m:
        news.append(("rename_key", text.replace(m.group(1), m.group(2), 1)))
    m = re.search(r"expected one of:? ([^()]+?)\s*(?:\(|$)", message)
    if m:
        for opt in [o.strip().strip("'\"") for o in m.group(1).split(",")]:
            v = _with_value(text, opt)
            if v:
                news.append(("choose_value", v))
    if re.search(r"expected an? (integer|number)", message):
        km = _KV.match(text)
        if km:
            news.append(("unquote", km.group(1) + km.group(2).strip("\"' ") + km.group(3)))
    if "duplicate key" in message:
        return [Edit(path, line, text + "\n", "", "delete_line")]
    m = re.search(r"out of range \[(-?\d+), (-?\d+)\]", message)
    if teacher and m:
        km = _KV.match(text)
        raw = km.group(2).strip("\"' ") if km else ""
        if km and raw.lstrip("-").isdigit():
            lo, hi = int(m.group(1)), int(m.group(2))
            v = _with_value(text, str(min(max(int(raw), lo), hi)))
            if v:
                news.append(("clamp_value", v))
    return [_unique_edit(path, source, line, new, op) for op, new in news if new != text]


def expectation_shortcut(
    path: str, source: str, line: int, actual: str, expected: str
) -> Edit | None:
    """The over-fitting shortcut: rewrite a test's expected value to what the code returns."""
    lines = source.splitlines()
    if not 1 <= line <= len(lines) or expected not in lines[line - 1]:
        return None
    new = lines[line - 1][::-1].replace(expected[::-1], actual[::-1], 1)[::-1]
    return _unique_edit(path, source, line, new, "edit_test_expectation")


__all__ = ["Edit", "config_candidates", "expectation_shortcut", "python_candidates"]
