"""Vague, non-executable phrases the seed essay warns about (English and Chinese).

They read well to humans but give a small student no action boundary. Each entry is a
regex (matched case-insensitively on text where ``_`` and ``-`` count as spaces) and the
concrete alternative lint suggests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class VaguePhrase:
    pattern: re.Pattern[str]
    suggestion: str


def _p(rx: str, suggestion: str) -> VaguePhrase:
    return VaguePhrase(re.compile(rx, re.IGNORECASE), suggestion)


VAGUE_PHRASES: tuple[VaguePhrase, ...] = (
    _p(
        r"\bcareful(?:ly)?\s+(?:analy[sz]e|analysis|review|check|read|consider|think)",
        "name what to read and what to look for, e.g. 'read the first project frame of the traceback'",
    ),
    _p(
        r"\bconsider\s+(?:comprehensively|holistically|everything|all\s+(?:aspects|factors|options))",
        "list the concrete checks to run, in order",
    ),
    _p(
        r"\b(?:comprehensive(?:ly)?|thorough(?:ly)?)\s+(?:analy[sz]e|analysis|review|understand(?:ing)?|consider)",
        "list the concrete checks to run, in order",
    ),
    _p(
        r"\buse\s+(?:the\s+)?(?:appropriate\s+)?tools?\s+(?:when|if|as)\s+(?:necessary|needed|appropriate|required)",
        "name the tool and the condition, e.g. 'run the failing test with run after every edit'",
    ),
    _p(
        r"\b(?:ensure|make\s+sure)\s+(?:that\s+)?(?:the\s+)?(?:result|output|answer|solution|fix)s?\s+(?:is|are)\s+correct",
        "name the check that proves it, e.g. 'target test exits 0'",
    ),
    _p(
        r"\bhandle\s+(?:it\s+|things\s+|errors\s+)?(?:flexibly|appropriately|as\s+needed|accordingly)",
        "write the condition and the action: 'if <condition>: <action>'",
    ),
    _p(r"\b(?:as|when)\s+appropriate\b", "replace with the concrete condition"),
    _p(
        r"\buse\s+(?:your\s+)?(?:best\s+)?judg(?:e)?ment\b",
        "replace with the concrete decision rule",
    ),
    _p(
        r"\bfully\s+understand\b",
        "name what to read, e.g. 'read the target file and its nearest test'",
    ),
    _p(
        r"\b(?:necessary|required)\s+(?:regression\s+)?(?:validation|verification)\b",
        "name the command, e.g. 'run python -m pytest -x -q <test id>'",
    ),
    _p(r"\bminimal[-\s]risk\b", "say which files may change and how many lines"),
    _p(r"\bif\s+(?:necessary|needed)\b", "replace with the concrete condition"),
    # Chinese
    _p(r"仔细(?:分析|检查|阅读|思考|审查)", "写出要读什么、找什么，例如“读取堆栈中第一个项目帧”"),
    _p(r"综合考虑|全面(?:分析|考虑|理解)", "列出要按顺序执行的具体检查"),
    _p(r"必要时(?:使用|调用)?(?:工具)?", "写明工具和触发条件"),
    _p(
        r"确保(?:结果|输出|答案|修复)?(?:正确|无误)",
        "写明证明结果正确的检查，例如“目标测试退出码为 0”",
    ),
    _p(r"(?:根据情况|视情况|酌情)(?:灵活)?处理|灵活处理", "写成“如果 <条件>：<动作>”"),
    _p(r"充分理解", "写明要读取哪些文件"),
)


def find_vague(text: str) -> list[tuple[int, int, str, str]]:
    """(start, end, matched text, suggestion) for every vague phrase in ``text``."""
    norm = text.replace("_", " ").replace("-", " ")
    hits = []
    for vp in VAGUE_PHRASES:
        for m in vp.pattern.finditer(norm):
            hits.append((m.start(), m.end(), text[m.start() : m.end()], vp.suggestion))
    hits.sort()
    return hits


# ---------------------------------------------------------------------------- instructions

#: First words that make a sentence an instruction (imperatives and modal openers).
_IMPERATIVES = frozenset(
    [
        "add",
        "adjust",
        "always",
        "analyze",
        "analyse",
        "apply",
        "ask",
        "assign",
        "avoid",
        "build",
        "call",
        "cap",
        "capture",
        "change",
        "check",
        "choose",
        "clean",
        "clear",
        "click",
        "clone",
        "close",
        "collect",
        "combine",
        "commit",
        "compare",
        "compile",
        "compute",
        "configure",
        "confirm",
        "connect",
        "consider",
        "continue",
        "convert",
        "copy",
        "count",
        "create",
        "cut",
        "debug",
        "decide",
        "define",
        "delete",
        "deploy",
        "describe",
        "design",
        "detect",
        "determine",
        "do",
        "document",
        "don't",
        "dont",
        "download",
        "draft",
        "drop",
        "edit",
        "enable",
        "ensure",
        "enter",
        "estimate",
        "evaluate",
        "examine",
        "execute",
        "expand",
        "explain",
        "export",
        "extract",
        "fetch",
        "fill",
        "filter",
        "find",
        "finish",
        "fix",
        "focus",
        "follow",
        "format",
        "gather",
        "generate",
        "get",
        "give",
        "go",
        "group",
        "handle",
        "identify",
        "ignore",
        "implement",
        "import",
        "include",
        "inspect",
        "install",
        "invoke",
        "iterate",
        "keep",
        "label",
        "launch",
        "leave",
        "let",
        "limit",
        "list",
        "load",
        "locate",
        "log",
        "look",
        "make",
        "map",
        "mark",
        "measure",
        "merge",
        "migrate",
        "minimize",
        "modify",
        "monitor",
        "move",
        "name",
        "navigate",
        "never",
        "note",
        "notify",
        "only",
        "open",
        "optimize",
        "order",
        "organize",
        "output",
        "parse",
        "pass",
        "paste",
        "pause",
        "perform",
        "pick",
        "place",
        "plan",
        "please",
        "plot",
        "prefer",
        "prepare",
        "preserve",
        "print",
        "prioritize",
        "proceed",
        "process",
        "produce",
        "prompt",
        "provide",
        "publish",
        "pull",
        "push",
        "put",
        "query",
        "read",
        "rebuild",
        "record",
        "reduce",
        "refactor",
        "refer",
        "regenerate",
        "reject",
        "remember",
        "remove",
        "rename",
        "render",
        "reopen",
        "repeat",
        "replace",
        "report",
        "request",
        "rerun",
        "reset",
        "resize",
        "resolve",
        "respond",
        "restart",
        "restore",
        "restrict",
        "retry",
        "return",
        "reuse",
        "review",
        "revise",
        "rewrite",
        "run",
        "save",
        "scan",
        "search",
        "select",
        "send",
        "set",
        "share",
        "show",
        "skip",
        "sort",
        "specify",
        "split",
        "start",
        "state",
        "stop",
        "store",
        "structure",
        "submit",
        "summarize",
        "supply",
        "switch",
        "tag",
        "take",
        "test",
        "track",
        "transform",
        "translate",
        "trim",
        "try",
        "type",
        "update",
        "upgrade",
        "upload",
        "use",
        "validate",
        "verify",
        "view",
        "visit",
        "wait",
        "watch",
        "work",
        "wrap",
        "write",
    ]
)
_OPENERS = frozenset({"then", "first", "next", "finally", "also", "just", "now", "and"})
_LIST_ITEM = re.compile(r"^[ \t]*(?:(?P<num>\d+[.)])|[-*+])[ \t]+")
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s+")
_FIRST_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_CJK = re.compile(r"[\u3400-\u9fff]")


def is_instruction(sentence: str) -> bool:
    """An imperative sentence (or a Chinese one): what tells the agent to do something."""
    s = sentence.lstrip(" \t*_`>([")
    if not s or s[0] in "\"“'‘":
        return False  # quoted speech, e.g. a rationalisation the skill warns about
    if _CJK.match(s):
        return True
    words = [w.lower() for w in _FIRST_WORD.findall(s[:80])[:4]]
    while words and (words[0] in _OPENERS or words[0].endswith("ly")):
        words.pop(0)  # "Carefully analyze …", "Then run …", "First, check …"
    return bool(words) and words[0] in _IMPERATIVES


def instruction_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) offsets of the instruction sentences in Markdown ``text``.

    Numbered list steps are instructions; other sentences (paragraphs, bullets, block
    quotes) are when they are imperative. Headings, tables and code are never.
    """
    blocks: list[tuple[int, int, bool]] = []  # (start, end, numbered)
    cur: list[int] | None = None
    numbered = False
    in_fence = False
    pos = 0

    def close() -> None:
        nonlocal cur
        if cur is not None:
            blocks.append((cur[0], cur[1], numbered))
            cur = None

    for line in text.splitlines(keepends=True):
        start, pos = pos, pos + len(line)
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            close()
            in_fence = not in_fence
            continue
        if in_fence or not stripped or stripped.startswith(("#", "|")):
            close()
            continue
        item = _LIST_ITEM.match(line)
        if item:
            close()
            cur, numbered = [start + item.end(), pos], bool(item.group("num"))
        elif cur is not None:
            cur[1] = pos  # continuation of the paragraph or list item
        elif line.startswith(("    ", "\t")):
            continue  # indented code block
        else:
            cur, numbered = [start + len(line) - len(line.lstrip(" >")), pos], False
    close()
    spans = []
    for b_start, b_end, is_step in blocks:
        chunk = text[b_start:b_end]
        offset = 0
        for sentence in _SENTENCE_END.split(chunk):
            at = chunk.index(sentence, offset)
            offset = at + len(sentence)
            if is_step or is_instruction(sentence):
                spans.append((b_start + at, b_start + offset))
    return spans


def find_vague_instructions(text: str) -> list[tuple[int, int, str, str]]:
    """:func:`find_vague`, limited to instruction sentences (descriptive prose is not)."""
    spans = instruction_spans(text)
    return [h for h in find_vague(text) if any(s <= h[0] < e for s, e in spans)]
