"""Catch rate of the patch guard on the adversarial corpus, and its false positives.

    python -m benchmarks.guard_corpus [--json] [--verbose] [--round3-only] [--dev-only | --test-only]
        [--guard-model ROUTE] [--embed-cache PATH] [--rounds N ...]

First the issue-34 figures (``benchmarks/guard_round3.py``): test-only catch rates on attack
sources the guard was never tuned on, per source, class, field and language, and the
rejection rate on real skills' sentences about testing, CI, git, keys and deployment.

Prints caught/total for the adversarial cases (verdict stricter than ``pass``), how many
reached at least their expected verdict, false positives on the benign near-misses
(verdict stricter than expected), and false positives on the bundled skills' own content:
every rule as an add_rule (fresh id) and as a replace_rule, and every step, markdown line
and markdown file as a one-step add_rule. Bundled content must never be rejected; rules
about secrets route to needs-approval by policy and are counted separately.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from benchmarks import guard_public as gp
from benchmarks import guard_round3, route_cache
from skillci.patch.apply import apply_detailed
from skillci.patch.guard import Finding, GuardConfig, GuardReport, UntrustedText, guard
from skillci.patch.models import AddRule, Author, Patch, ReplaceRule
from skillci.skill.models import Rule
from skillci.skill.package import MANIFEST, SkillPackage

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "fixtures" / "adversarial"
RANK = {"pass": 0, "needs-approval": 1, "reject": 2}
AUTHOR = Author(compiler="corpus")


@dataclass
class CaseResult:
    id: str
    file: str
    technique: str
    lang: str
    expect: str
    verdict: str
    codes: list[str]

    @property
    def adversarial(self) -> bool:
        return self.expect != "pass"

    @property
    def caught(self) -> bool:
        return RANK[self.verdict] > 0

    @property
    def as_expected(self) -> bool:
        """At least as strict as expected (benign: exactly as expected)."""
        if self.adversarial:
            return RANK[self.verdict] >= RANK[self.expect]
        return self.verdict == self.expect

    @property
    def false_positive(self) -> bool:
        return not self.adversarial and RANK[self.verdict] > RANK[self.expect]


@dataclass
class BundledResult:
    total: int = 0
    rejected: list[str] = field(default_factory=list)
    approval: list[str] = field(default_factory=list)


def load_cases(corpus: Path = CORPUS) -> Iterator[tuple[str, dict[str, Any]]]:
    for path in sorted(corpus.glob("*.yaml")):
        for case in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            yield path.name, case


def case_patch(case: dict[str, Any]) -> Patch:
    if "ops" in case:
        ops = case["ops"]
    else:
        rid = "corpus." + "".join(c if c.isalnum() else "-" for c in case["id"].lower()).strip("-")
        ops = [{"op": "add_rule", "rule": {"id": rid, "instruction": {"steps": case["steps"]}}}]
    return Patch.model_validate(
        {
            "failure_class": "corpus",
            "rationale": case.get("rationale", ""),
            "supporting_runs": ["run-corpus"],
            "author": AUTHOR.model_dump(),
            "ops": ops,
        }
    )


def run_case(pkg: SkillPackage, case: dict[str, Any]) -> GuardReport:
    untrusted = [
        UntrustedText.model_validate(u) if isinstance(u, dict) else UntrustedText(text=str(u))
        for u in case.get("untrusted", [])
    ]
    return guard(apply_detailed(pkg, case_patch(case)), untrusted)


def run_corpus(pkg: SkillPackage, corpus: Path = CORPUS) -> list[CaseResult]:
    out = []
    for fname, case in load_cases(corpus):
        try:
            rep = run_case(pkg, case)
        except ValidationError as exc:  # the schema layer refused it: an id with free text
            rep = GuardReport(
                patch_id="invalid",
                verdict="reject",
                findings=[
                    Finding(
                        code="schema",
                        severity="high",
                        op_index=None,
                        message=str(exc.errors()[0]["msg"]),
                    )
                ],
                config=GuardConfig(),
            )
        out.append(
            CaseResult(
                id=case["id"],
                file=fname,
                technique=case.get("technique", ""),
                lang=case.get("lang", ""),
                expect=case["expect"],
                verdict=rep.verdict,
                codes=sorted({f.code for f in rep.findings}),
            )
        )
    return out


def bundled_texts(pkg: SkillPackage) -> list[str]:
    texts: list[str] = []
    for rel in sorted(pkg.files):
        if rel.endswith(".md"):
            body = pkg.text(rel)
            texts.append(body)
            texts += [ln for ln in body.splitlines() if ln.strip()]
    for lr in pkg.rules:
        r = lr.rule
        texts += r.instruction.steps + r.trigger.all + r.trigger.any + r.validation.success
        texts += [f"{fp.condition}: {fp.action}" for fp in r.failure_policy]
    return texts


def run_bundled(pkg: SkillPackage) -> BundledResult:
    res = BundledResult()

    def check(label: str, patch: Patch) -> None:
        rep = guard(apply_detailed(pkg, patch))
        res.total += 1
        if rep.verdict == "reject":
            res.rejected.append(f"{label}: {[f.message for f in rep.findings]}")
        elif rep.verdict == "needs-approval":
            res.approval.append(label)

    for lr in pkg.rules:
        r = lr.rule
        fresh = r.model_copy(update={"id": r.id + "-copy"})
        check(
            f"add_rule {r.id}", Patch(failure_class="x", author=AUTHOR, ops=[AddRule(rule=fresh)])
        )
        changed = r.model_copy(update={"anti_patterns": [*r.anti_patterns, "skipping_this_rule"]})
        check(
            f"replace_rule {r.id}",
            Patch(failure_class="x", author=AUTHOR, ops=[ReplaceRule(rule_id=r.id, rule=changed)]),
        )
    for lr in pkg.rules:
        for j, text in enumerate(lr.rule.anti_patterns):
            rule = Rule.model_validate(
                {
                    "id": f"bundled.anti-{j}",
                    "instruction": {"steps": ["x"]},
                    "anti_patterns": [text],
                }
            )
            check(
                f"anti-pattern {text[:60]!r}",
                Patch(failure_class="x", author=AUTHOR, ops=[AddRule(rule=rule)]),
            )
    for i, text in enumerate(bundled_texts(pkg)):
        rule = Rule.model_validate({"id": f"bundled.text-{i}", "instruction": {"steps": [text]}})
        check(
            f"text {text[:60]!r}", Patch(failure_class="x", author=AUTHOR, ops=[AddRule(rule=rule)])
        )
    return res


def bundled_skills() -> list[Path]:
    return sorted(p for p in (ROOT / "skills").iterdir() if (p / MANIFEST).is_file())


def _pct(h: int, n: int) -> str:
    return f"{h}/{n} ({100 * h / max(1, n):.1f}%)"


def public_report(benign_every: int = 1) -> None:
    """Public attack corpus (test-only and dev) and real skills' sentences."""
    pkg = SkillPackage.from_dir(ROOT / "skills" / "repo-debugger")
    payloads = gp.load_payloads()
    for split in ("test", "dev"):
        for tainted in (False, True):
            outs = list(gp.run_attacks(pkg, payloads, split, tainted=tainted))
            label = "schema+policy+taint (payload in a tool result)" if tainted else "schema+policy"
            caught = sum(o.caught for o in outs)
            rejected = sum(o.verdict in ("reject", "schema") for o in outs)
            print(
                f"[{split}{'-only' if split == 'test' else ''}] {label}: caught {_pct(caught, len(outs))}, rejected {_pct(rejected, len(outs))}"
            )
            if tainted and split == "dev":
                continue
            for group, rows in gp.by_group(outs).items():
                print(
                    f"  per {group}: "
                    + ", ".join(f"{k} {_pct(h, n)}" for k, (h, n) in rows.items())
                )
        plain = list(gp.run_attacks(pkg, payloads, split, plain_step=True))
        print(
            f"[{split}{'-only' if split == 'test' else ''}] policy alone, plain text in a rule "
            f"step: caught {_pct(sum(o.caught for o in plain), len(plain))}"
        )
        for group in ("policy class", "language"):
            rows = gp.by_group(plain)[group]
            print(f"  per {group}: " + ", ".join(f"{k} {_pct(h, n)}" for k, (h, n) in rows.items()))
    sentences = gp.benign_sentences()[::benign_every]
    verdicts = list(gp.run_benign(pkg, sentences))
    rej = [v for v in verdicts if v[2] in ("reject", "schema")]
    appr = [v for v in verdicts if v[2] == "needs-approval"]
    print(
        f"[benign] {len(gp.real_skill_dirs())} real skills, {len(verdicts)} instruction sentences: "
        f"false positives (reject) {_pct(len(rej), len(verdicts))}, needs-approval {_pct(len(appr), len(verdicts))}"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument(
        "--verbose",
        "-v",
        action="store_true",
        help="list misses and false positives (issue-34 figures: the dev split only)",
    )
    ap.add_argument("--public-only", action="store_true", help="only the public corpora")
    ap.add_argument(
        "--benign-every", type=int, default=1, help="check every Nth benign sentence (1: all)"
    )
    ap.add_argument("--round3-only", action="store_true", help="only the issue-34 figures")
    only = ap.add_mutually_exclusive_group()
    only.add_argument(
        "--dev-only",
        action="store_true",
        help="issue-34 figures of the dev split only (tuning: the test split is not looked at)",
    )
    only.add_argument(
        "--test-only",
        action="store_true",
        help="issue-34 figures of the test split only (a held-out round's verdict: its dev rows "
        "are not scored)",
    )
    ap.add_argument(
        "--guard-model",
        metavar="ROUTE",
        help="issue-34 figures also with the guard classifier's second opinion on this route "
        "(design 443; sim/guard runs offline but reads no meaning)",
    )
    ap.add_argument(
        "--embed-cache",
        type=Path,
        metavar="PATH",
        help="keep the probe route's vectors in PATH between runs (benchmarks/route_cache.py): "
        "the same round at another threshold sends no request",
    )
    ap.add_argument(
        "--rounds",
        type=int,
        nargs="+",
        default=[],
        metavar="N",
        help="issue-34 figures of these payload rounds only (3-21; a new round's first look); "
        "the real-skill sentences are still measured",
    )
    ap.add_argument(
        "--without-near-earlier",
        action="store_true",
        help="leave out the rows of --rounds that lie near an earlier round's "
        "(guard_round3.near_earlier: a re-packed text)",
    )
    args = ap.parse_args(argv)
    splits = ("dev",) if args.dev_only else ("test",) if args.test_only else ("test", "dev")
    unknown = sorted(set(args.rounds) - set(guard_round3.ROUNDS))
    if unknown:
        ap.error(f"--rounds: no payload file for {unknown}; known: {sorted(guard_round3.ROUNDS)}")
    stores = route_cache.install(args.embed_cache) if args.embed_cache else {}
    leave_out: set[str] = set()
    if args.without_near_earlier:
        if not args.rounds:
            ap.error("--without-near-earlier needs --rounds")
        leave_out = {i for n in args.rounds for i in guard_round3.near_earlier(n)}
        print(f"left out: {len(leave_out)} rows near an earlier round's")
    guard_round3.report(
        args.verbose, args.benign_every, splits, args.guard_model, args.rounds, leave_out
    )
    for (base, name), store in stores.items():
        print(
            f"embed cache {args.embed_cache} ({base}, {name}): {store.hits} read, "
            f"{store.misses} embedded",
            file=sys.stderr,
        )
    if args.round3_only:
        return 0
    public_report(args.benign_every)
    if args.public_only:
        return 0
    skills = bundled_skills()
    results = run_corpus(SkillPackage.from_dir(ROOT / "skills" / "repo-debugger"))
    adv = [r for r in results if r.adversarial]
    benign = [r for r in results if not r.adversarial]
    caught = sum(r.caught for r in adv)
    expected = sum(r.as_expected for r in adv)
    fps = [r for r in benign if r.false_positive]
    bundled = {p.name: run_bundled(SkillPackage.from_dir(p)) for p in skills}
    summary = {
        "adversarial": len(adv),
        "caught": caught,
        "catch_rate": round(caught / max(1, len(adv)), 4),
        "at_expected_verdict": expected,
        "benign": len(benign),
        "benign_false_positives": len(fps),
        "bundled": {
            k: {"checked": v.total, "rejected": len(v.rejected), "needs_approval": len(v.approval)}
            for k, v in bundled.items()
        },
    }
    if args.json:
        json.dump(
            {**summary, "cases": [r.__dict__ for r in results]},
            sys.stdout,
            indent=2,
            ensure_ascii=False,
        )
        print()
    else:
        for r in results:
            bad = (r.adversarial and not r.as_expected) or r.false_positive
            if args.verbose or bad:
                mark = (
                    "MISS"
                    if r.adversarial and not r.caught
                    else "WEAK"
                    if r.adversarial and not r.as_expected
                    else "FP  "
                    if r.false_positive
                    else "ok  "
                )
                print(f"{mark} {r.file}:{r.id} expect={r.expect} got={r.verdict} {r.codes}")
        print(
            f"adversarial caught: {caught}/{len(adv)} ({100 * caught / max(1, len(adv)):.1f}%), "
            f"at expected verdict: {expected}/{len(adv)}"
        )
        print(f"benign near-miss false positives: {len(fps)}/{len(benign)}")
        for name, b in bundled.items():
            print(
                f"bundled {name}: {b.total} checks, {len(b.rejected)} rejected (false positives), "
                f"{len(b.approval)} needs-approval (rules about secrets)"
            )
            for line in b.rejected:
                print(f"  REJECTED {line}")
            if args.verbose:
                for line in b.approval:
                    print(f"  approval {line}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
