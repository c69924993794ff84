"""The baselines-and-ablations table of ``skillci bench`` as Markdown (pure; the rows are
:mod:`skillci.gate.bench`; docs/design/226-bench.md)."""

from __future__ import annotations

from collections.abc import Sequence

from skillci.gate.bench import BenchRow, Estimate


def fmt(e: Estimate | None, *, pct: bool = False, digits: int = 0) -> str:
    """An estimate as text: ``value [low, high]``, or ``n/a``."""
    if e is None:
        return "n/a"

    def f(x: float) -> str:
        return f"{x:.0%}" if pct else f"{x:.{digits}f}"

    return f(e.value) + (f" [{f(e.ci.low)}, {f(e.ci.high)}]" if e.ci is not None else "")


def markdown_table(rows: Sequence[BenchRow]) -> str:
    """The table docs/bench.md holds (tests/integration/test_bench.py keeps them equal)."""
    out = [
        "| kind | arm | status | tasks / trials | success | GCR | regression | tokens / trial "
        "| USD / trial |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        if r.status != "real":
            out.append(
                f"| {r.kind} | {r.arm}: {r.title} | {r.status.replace('_', ' ')}: {r.reason} "
                "| – | – | – | – | – | – |"
            )
            continue
        gcr = fmt(r.gcr, digits=2) if r.gcr is not None else f"undefined ({r.gcr_note})"
        out.append(
            f"| {r.kind} | {r.arm}: {r.title} | real | {r.tasks} / {r.trials} | "
            f"{fmt(r.success, pct=True)} | {gcr} | {fmt(r.regression, pct=True)} | "
            f"{fmt(r.tokens)} | {fmt(r.usd, digits=4)} |"
        )
    notes = [f"- {r.arm}: {r.note}" for r in rows if r.note]
    return "\n".join(out + (["", *notes] if notes else [])) + "\n"


__all__ = ["fmt", "markdown_table"]
