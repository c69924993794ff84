"""What the harness importers fill from the real result dirs under
tests/fixtures/harness-results/ (copied from the harnesses' repositories; see SOURCES.yaml):
per dir the state, reward, tool calls with arguments, tokens, model, agent, user rounds,
unmapped fields and reward-hack evidence; then totals. A silent drop would be a source field
that is neither mapped nor listed as unmapped: the last line counts the unmapped ones, which
are all listed (warned) on their records.

    python benchmarks/import_fields.py
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "harness-results"


def main() -> int:
    total = with_reward = unmapped = suspects = 0
    for fmt in ("benchflow", "harbor"):
        corpus = ROOT / fmt
        if not corpus.is_dir():
            print(f"{fmt}: no corpus at {corpus}")
            continue
        importer = importlib.import_module(f"skillci.trace.importers.{fmt}")
        for rec in importer.import_jobs(corpus):
            calls = [e for e in rec.events if e.kind == "tool_call"]
            with_args = sum(1 for c in calls if getattr(c, "arguments", None))
            n_unmapped = len(rec.metadata.get("unmapped") or {})
            name = Path(str(rec.metadata.get("source"))).name
            print(
                f"{fmt:9} {name:30} {rec.evaluation.state.value:12} "
                f"reward={rec.evaluation.reward!s:5} calls={len(calls)} with_args={with_args} "
                f"tokens={rec.cost.input_tokens}/{rec.cost.output_tokens} "
                f"model={rec.model.name} agent={rec.runtime.harness} "
                f"rounds={len(rec.metadata.get('user_rounds') or [])} unmapped={n_unmapped} "
                f"hack_evidence={len(rec.reward_hack_evidence)}"
            )
            total += 1
            with_reward += rec.evaluation.reward is not None
            unmapped += n_unmapped
            suspects += bool(rec.reward_hack_evidence)
    print(
        f"total: {total} dirs, {with_reward} with a reward, {unmapped} unmapped field(s) "
        f"(each warned on its record), {suspects} with reward-hack evidence"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
