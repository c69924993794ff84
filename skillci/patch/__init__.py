"""Bounded patches to a Skill package: the patch language, apply, limits, diff, guard, versions.

Pure core (no subprocess, network or git): ``models`` (the patch language), ``apply``
(package -> package), ``limits``, ``diff``, ``guard`` (+ ``guard_detectors``, ``normalize``),
``version`` (semver bump and change list) and ``check`` (all of them together). The one
module that touches the disk is ``transaction`` (all-or-nothing directory swap).

May import: ``skillci.errors``, ``skillci.fsutil``, ``skillci.skill``, ``skillci.trace``
(docs/architecture.md; checked by tests/unit/test_architecture.py).
"""

from __future__ import annotations

from skillci.patch.apply import Applied, apply, apply_detailed
from skillci.patch.check import CheckReport, check
from skillci.patch.diff import diff_applied, render_diff
from skillci.patch.guard import GuardConfig, GuardReport, UntrustedText, guard
from skillci.patch.limits import LimitReport, check_limits
from skillci.patch.models import Patch, dump_patch, load_patch
from skillci.patch.version import ChangeList, change_list, compare

#: Saved shapes of this package, exported as JSON Schemas (see skillci.schemas).
SAVED_MODELS = {"patch": Patch, "change-list": ChangeList, "patch-check-report": CheckReport}

__all__ = [
    "SAVED_MODELS",
    "Applied",
    "ChangeList",
    "CheckReport",
    "GuardConfig",
    "GuardReport",
    "LimitReport",
    "Patch",
    "UntrustedText",
    "apply",
    "apply_detailed",
    "change_list",
    "check",
    "check_limits",
    "compare",
    "diff_applied",
    "dump_patch",
    "guard",
    "load_patch",
    "render_diff",
]
