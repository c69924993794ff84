"""The release gate's pure core: metrics, paired statistics, sequential decision, and
test-impact selection. No I/O, no git, no subprocess.

Modules: :mod:`skillci.gate.metrics` (TrialOutcome -> GateMetrics),
:mod:`skillci.gate.stats` (sign test, Wilson, bootstrap, GCR),
:mod:`skillci.gate.sequential` (SequentialTest), :mod:`skillci.gate.impact`
(select_tasks). Design: docs/design/040-paired-statistics.md and 041-sequential-gate.md.

May import: ``skillci.errors``, ``skillci.patch``, ``skillci.skill``, ``skillci.tasks``,
``skillci.trace`` (docs/architecture.md; checked by tests/unit/test_architecture.py).
"""

from __future__ import annotations

from skillci.gate.impact import (
    ImpactSelection,
    TaskImpact,
    changed_files,
    loaded_files_by_task,
    select_tasks,
)
from skillci.gate.metrics import (
    ChangeSummary,
    CostDelta,
    CostSummary,
    GateMetrics,
    PassRate,
    Side,
    SideMetrics,
    TaskChange,
    TrialOutcome,
    compute_metrics,
    pass_at_k,
    pass_hat_k,
)
from skillci.gate.sequential import Decision, SequentialConfig, SequentialTest
from skillci.gate.stats import (
    GapClosure,
    Interval,
    PairedComparison,
    SignTest,
    gap_closure,
    paired_bootstrap_diff,
    paired_comparison,
    sign_test,
    wilson_interval,
)

__all__ = [
    "ChangeSummary",
    "CostDelta",
    "CostSummary",
    "Decision",
    "GapClosure",
    "GateMetrics",
    "ImpactSelection",
    "Interval",
    "PairedComparison",
    "PassRate",
    "SequentialConfig",
    "SequentialTest",
    "Side",
    "SideMetrics",
    "SignTest",
    "TaskChange",
    "TaskImpact",
    "TrialOutcome",
    "changed_files",
    "compute_metrics",
    "gap_closure",
    "loaded_files_by_task",
    "paired_bootstrap_diff",
    "paired_comparison",
    "pass_at_k",
    "pass_hat_k",
    "select_tasks",
    "sign_test",
    "wilson_interval",
]
