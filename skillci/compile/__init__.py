"""Compile a diagnosis into a bounded skill patch, and run the propose loop.

Public API::

    TemplateCompiler().compile(CompileInput(...)) -> CompileOutput   (embedded default)
    LLMCompiler(call, model=...).compile(CompileInput(...)) -> CompileOutput
    check_patch(package, patch, untrusted) -> (PatchCheck, Applied | None)
    untrusted_texts(records) -> list[UntrustedText]

See docs/design/054-template-compiler.md .. 056-propose-loop.md.
"""

from __future__ import annotations

from skillci.compile.base import CompileInput, CompileOutput, Compiler
from skillci.compile.check import PatchCheck, check_patch, new_lint_errors, untrusted_texts
from skillci.compile.template import TemplateCompiler

__all__ = [
    "CompileInput",
    "CompileOutput",
    "Compiler",
    "PatchCheck",
    "TemplateCompiler",
    "check_patch",
    "new_lint_errors",
    "untrusted_texts",
]
