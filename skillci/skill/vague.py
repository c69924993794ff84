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
