"""Compile a diagnosis into a bounded skill patch, and run the propose loop.

Public API::

    TemplateCompiler().compile(CompileInput(...)) -> CompileOutput   (embedded default)
    LLMCompiler(call, model=...).compile(CompileInput(...)) -> CompileOutput
    check_patch(package, patch, untrusted) -> (PatchCheck, Applied | None)
    untrusted_texts(records) -> list[UntrustedText]
    propose_task(task, package, run_student=..., run_teacher=..., compiler=...,
                 budget=LoopBudget(...)) -> ProposeResult (.proposal, .candidate, .runs)
    propose_suite(tasks, package, ...) -> SuiteResult (.suite, .candidates, .runs)

See docs/design/052-llm-paths.md, 053-template-compiler.md, 054-propose-loop.md.

May import: ``skillci.analyze``, ``skillci.errors``, ``skillci.fsutil``, ``skillci.patch``,
``skillci.providers``, ``skillci.skill``, ``skillci.trace`` (docs/architecture.md; checked
by tests/unit/test_architecture.py).
"""

from __future__ import annotations

from skillci.compile.base import CompileInput, CompileOutput, Compiler
from skillci.compile.llm import LLMCompiler
from skillci.compile.loop import LoopBudget, ProposeResult, propose_task
from skillci.compile.patch_check import PatchCheck, check_patch, new_lint_errors, untrusted_texts
from skillci.compile.proposal import CostSummary, EvalSummary, Proposal, Round
from skillci.compile.suite import ClusterProposal, SuiteProposal, SuiteResult, propose_suite
from skillci.compile.template_compiler import TemplateCompiler

__all__ = [
    "ClusterProposal",
    "CompileInput",
    "CompileOutput",
    "Compiler",
    "CostSummary",
    "EvalSummary",
    "LLMCompiler",
    "LoopBudget",
    "PatchCheck",
    "Proposal",
    "ProposeResult",
    "Round",
    "SuiteProposal",
    "SuiteResult",
    "TemplateCompiler",
    "check_patch",
    "new_lint_errors",
    "propose_suite",
    "propose_task",
    "untrusted_texts",
]
