"""``skillci demo``: the whole loop on the embedded default, in a fresh scratch repository.

1. Scratch repo from the bundled skill and tasks, with ``finish.report-success`` removed
   (the student then claims success without verifying) — plus a canary policy sized for a demo.
2. Baseline eval of the student on the validation suite.
3. ``propose`` for a failing task → PR #1 (bounded patch restoring the behaviour).
4. ``review`` PR #1 → the gate accepts; ``release`` → merged, changelog, tag.
5. A second, over-fitting patch (the shape a naive compiler writes: it hard-codes the file
   of the task it saw) → PR #2 → the gate rejects it for regression → closed with evidence.
6. Canary of the release with simulated production traffic → analyze → promote.
7. A deliberately bad canary (the old version without the rule) → automatic rollback.

Simulated production traffic: each request id is routed as ``skillci.runtime.resolve``
routes it (deterministic bucketing, on the channel state read once); the request's outcome
is a real trial of the routed version on a task drawn (seeded) from the validation suite,
recorded as a production run record.
"""

from __future__ import annotations

import random
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from skillci.flows.context import RepoContext
from skillci.gate.verdict import GateReport, all_changes
from skillci.runners.base import builtin_agent
from skillci.skill.package import MANIFEST, RULES_DIR, rule_file_path

if TYPE_CHECKING:
    from skillci.forge.base import PullRequest
    from skillci.release.models import CanaryAnalysis, ChannelEvent, ChannelState

SKILL = "repo-debugger"
TASK = "py-page-count"
DROPPED_RULE_FILE = "finish.yaml"
OVERFIT_RULE = """\
schema_version: 1
id: edit.page-count-fast-path
status: candidate
scope:
  workflow: null
  tools: [apply_patch]
trigger:
  all:
    - failure_location_known
instruction:
  steps:
    - when_a_test_fails_edit_only_src/ranges/pages.py
provenance:
  introduced_by: demo-overfitting-compiler
  supporting_runs: []
"""
# The release adds a verification step, which costs tokens and time by design (the gate's
# token budget already admitted it), so the demo's canary allows more growth than the default:
# half of the validation traffic is config repairs with two or three errors, where checking
# again after each fix is the work itself (measured +61% tokens per request); simulated latency is this machine's wall time per trial, which is noisy under load.
DEMO_CANARY = """
canary:
  max_success_drop: 0.05
  max_token_growth: 1.0
  max_latency_growth: 3.0
  min_samples: 20
  min_task_samples: 2
"""
#: The demo repo's regression suite also protects py-window-end, which shares
#: src/ranges/pages.py with py-page-count: exactly what an over-fitting patch breaks.
EXTRA_REGRESSION = "py-window-end"

Say = Callable[[str], None]

#: One line for each term, shown under the first line of output that uses it.
GLOSSARY: dict[str, str] = {
    "pass rate": "share of trials whose verifier passed",
    "same instance": "the task the patch was proposed for, re-run before and after the patch",
    "repairs": "tasks failing on base that pass on head (over all suites the gate ran)",
    "regressions": "tasks passing on base that fail on head",
    "gap closure": "(head - no skill) / (teacher - no skill): how much of the gap to the "
    "teacher the skill closes",
    "canary": "a release served to a share of requests (by request-id hash) before it "
    "becomes stable",
    "success_drop": "stable's success rate minus the canary's, on production records",
    "token_growth": "the canary's tokens per request relative to stable's",
    "latency_growth": "the canary's wall time per request relative to stable's",
}


class Glossary:
    """Wraps ``say``: the first line mentioning a term is followed by its meaning."""

    def __init__(self, say: Say, terms: dict[str, str] | None = None) -> None:
        self.say = say
        self.terms = dict(GLOSSARY if terms is None else terms)
        self.explained: list[str] = []

    def __call__(self, line: str) -> None:
        self.say(line)
        low = line.lower()
        for term, meaning in self.terms.items():
            if term not in self.explained and term in low:
                self.explained.append(term)
                self.say(f"    [dim]({term}: {meaning})[/dim]")


@dataclass
class DemoResult:
    repo: Path
    steps: list[tuple[str, str, float]] = field(default_factory=list)  # (step, outcome, seconds)
    html_report: Path | None = None
    ok: bool = True
    sandbox: str = "bwrap"  # what isolated the trials: bwrap or none


def sandbox_kind() -> tuple[str, str | None]:
    """(``bwrap`` and its path) when bubblewrap isolates trials, else (``none``, None)."""
    from skillci.runners.sandbox import bwrap_path

    path = bwrap_path()
    return ("bwrap", str(path)) if path is not None else ("none", None)


NO_SANDBOX = (
    "[bold red]WARNING: bubblewrap (bwrap) is not available: every trial runs WITHOUT a "
    "sandbox[/bold red], as your user, with network access. Install bubblewrap "
    "(apt-get install bubblewrap) to isolate them."
)


def gate_summary(r: GateReport) -> str:
    """The demo's one line for a gate report, with the numbers the report's checks use."""
    changes = all_changes(r.suites)
    repairs = sum(c.change == "repair" for c in changes)
    regressions = sum(c.change == "regression" for c in changes)
    val = r.suite("validation")
    gcr = val.metrics.gcr_head if val else None
    line = f"gate {r.verdict.upper()} ({r.gate_id}): repairs {repairs}, regressions {regressions}"
    if gcr is not None and gcr.value is not None:
        line += f", gap closure {gcr.value:.2f} ({gcr.label})"
    line += f", {r.trials_run} trials run"
    if r.reasons:
        line += " — " + "; ".join(r.reasons)
    return line


def canary_checks(a: CanaryAnalysis) -> list[str]:
    """One line per judged canary check: its value and its limit (pass or FAIL)."""
    return [
        f"    {c.name} {c.value} (limit {c.threshold}): {'pass' if c.passed else 'FAIL'}"
        for c in a.checks
        if c.passed is not None
    ]


def build_repo(src_root: Path, dest: Path) -> Path:
    if dest.exists() and any(dest.iterdir()):
        from skillci.errors import UsageError

        raise UsageError(f"{dest} exists and is not empty", hint="pass --dir with a new path")
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copytree(src_root / "skills" / SKILL, dest / "skills" / SKILL)
    shutil.copytree(
        src_root / "evals", dest / "evals", ignore=shutil.ignore_patterns("__pycache__")
    )
    (dest / "skills" / SKILL / RULES_DIR / DROPPED_RULE_FILE).unlink()
    with (dest / "skills" / SKILL / MANIFEST).open("a") as fh:
        fh.write(DEMO_CANARY)
    reg = dest / "evals" / "suites" / "regression.yaml"
    reg.write_text(reg.read_text().rstrip("\n") + f"\n  - {EXTRA_REGRESSION}\n")
    for other in ("discovery.yaml",):
        p = dest / "evals" / "suites" / other
        p.write_text(
            "\n".join(
                ln for ln in p.read_text().splitlines() if ln.strip() != f"- {EXTRA_REGRESSION}"
            )
            + "\n"
        )
    (dest / ".gitignore").write_text(".skillci/\n")
    (dest / "README.md").write_text(
        "# skillci demo repository\n\nBuilt by `skillci demo`: the bundled repo-debugger skill "
        "without `finish.report-success`, and the bundled tasks.\n"
    )
    from skillci.vcs.git import init_committed

    init_committed(
        dest,
        "demo: bundled skill without finish.report-success",
        name="skillci demo",
        email="demo@skillci.invalid",
    )
    return dest


def _traffic(
    ctx: RepoContext, versions: dict[str, tuple[str, str]], n: int, seed: int, say: Say
) -> dict[str, int]:
    """Route ``n`` requests and record each as a production run of the routed version."""
    from skillci.release.channels import ChannelStore
    from skillci.release.production import as_production
    from skillci.release.routing import pick
    from skillci.runners.base import plan
    from skillci.runners.scheduler import Scheduler
    from skillci.skill.render import render
    from skillci.tasks.loader import load_suite_tasks
    from skillci.tasks.models import Purpose
    from skillci.tasks.suites import load_suite

    tasks = load_suite_tasks(
        load_suite("validation", ctx.root, purpose=Purpose.optimize),
        ctx.root,
        purpose=Purpose.optimize,
    )
    agent = builtin_agent("sim/student")
    sched = Scheduler(parallel=2, store=ctx.store)
    trials: dict[str, dict[str, list[str]]] = {}
    for version, (commit, skill_dir) in versions.items():
        pkg = ctx.package_at(commit, skill_dir)
        specs = plan(
            tasks,
            agent,
            repeats=1,
            state_dir=ctx.state_dir,
            skill=render(pkg, "builtin"),
            skill_package_hash=pkg.content_hash,
        )
        result = sched.run(specs)
        trials[version] = {}
        for o in result.trials:
            if o.run_id:
                trials[version].setdefault(o.task_id, []).append(o.run_id)
    rng = random.Random(seed)  # noqa: S311 - simulation, not security
    counts: dict[str, int] = {}
    # the channels do not move during the traffic: read them once, then route each request
    # as skillci.runtime.resolve does (by its bucket), without git calls per request
    state = ChannelStore(ctx.git).state(SKILL)
    assert state is not None and state.stable is not None
    canary = state.canary
    for i in range(n):
        rid = f"req-{seed}-{i:04d}"
        channel = pick(canary.weight or 0, rid) if canary is not None else "stable"
        version = canary.version if channel == "canary" and canary else state.stable.version
        by_task = trials.get(version)
        if not by_task:
            continue
        task = rng.choice(sorted(by_task))
        rec = ctx.store.get(rng.choice(by_task[task]))
        ctx.store.put(as_production(rec, request_id=rid))
        counts[f"{channel} {version}"] = counts.get(f"{channel} {version}", 0) + 1
    say("    traffic: " + ", ".join(f"{k}: {v} requests" for k, v in sorted(counts.items())))
    return counts


def run_demo(src_root: Path, dest: Path, say: Say, *, html: bool = True) -> DemoResult:
    """Build the scratch repository and run every step in it (see the module docstring)."""
    demo = _Demo(build_repo(src_root, dest), Glossary(say))
    demo.run()
    if html and demo.gate_reports:
        from skillci.flows.html_report import write_html

        first = demo.gate_reports[0]
        demo.res.html_report = write_html(
            demo.ctx, first, demo.res.repo / ".skillci" / "reports" / first.gate_id
        )
    return demo.res


class _Demo:
    """The demo's steps, each a method returning its one-line outcome."""

    actor = "skillci demo"
    suites = ("validation", "regression", "security")

    def __init__(self, repo: Path, say: Say) -> None:
        self.say = say
        self.res = DemoResult(repo=repo)
        self.res.sandbox, bwrap = sandbox_kind()
        if bwrap is None:
            say(NO_SANDBOX)
        else:
            say(f"[dim]trials run in a bubblewrap sandbox ({bwrap}), without network[/dim]")
        self.ctx = RepoContext.open(repo)
        self.gate_reports: list[GateReport] = []

    def run(self) -> None:
        self.step("Baseline: the student with the skill on the validation suite", self.baseline)
        self.step(f"Propose for the failing task {TASK} (PR #1)", self.propose1)
        self.step("Review PR #1: re-run the student on base and head, gate", self.review1)
        self.step("Release PR #1: squash-merge, changelog, compatibility, tag", self.release1)
        self.step("A second, over-fitting patch (PR #2)", self.propose2)
        self.step("Review PR #2", self.review2)
        self.step("Release PR #2 refuses: closed with its evidence", self.close2)
        self.step(
            "Canary the release with simulated production traffic, analyze, promote",
            self.canary_good,
        )
        self.step(
            "A deliberately bad canary (the old version without the rule): automatic rollback",
            self.canary_bad,
        )

    def step(self, name: str, fn: Callable[[], str]) -> None:
        self.say(f"[bold]▶ {name}[/bold]")
        t0 = time.monotonic()
        outcome = fn()
        dt = time.monotonic() - t0
        self.res.steps.append((name, outcome, dt))
        self.say(f"  {outcome}  [dim]({dt:.1f}s)[/dim]")

    def baseline(self) -> str:
        from skillci.flows.gate import GateOptions, run_gate

        opts = GateOptions(
            skill=SKILL,
            base="main",
            head="main",
            suites=("validation",),
            repeat=1,
            sequential=False,
            impact=False,
        )
        r = run_gate(self.ctx, opts)
        m = r.suites[0].metrics.sides["base"].pass_rate
        failing = [t.task_id for t in r.suites[0].metrics.tasks if t.base_pass_fraction < 1]
        return (
            f"student pass rate on validation: {m.pass_rate:.0%} ({m.tasks} tasks); "
            f"failing: {', '.join(failing)}"
        )

    def propose1(self) -> str:
        from skillci.flows.propose import ProposeOptions, propose

        o = propose(self.ctx, ProposeOptions(skill=SKILL, task=TASK))
        d, p = o.proposal.diagnosis, o.proposal
        return (
            f"{o.message}; diagnosis {d.failure_class.value if d else '?'}; "
            f"same instance {p.before.passed if p.before else '?'}/1 -> "
            f"{p.after.passed if p.after else '?'}/1"
        )

    def _review(self, pr: int, teacher: str | None) -> str:
        from skillci.flows.review import review

        r = review(
            self.ctx, pr, repeat=1, student="sim/student", suites=self.suites, teacher=teacher
        )
        self.gate_reports.append(r)
        return gate_summary(r)

    def review1(self) -> str:
        # the teacher and the skill-free student as references: the gap closure rate
        return self._review(1, "sim/teacher")

    def review2(self) -> str:
        return self._review(2, None)

    def release1(self) -> str:
        from skillci.flows.release import release_pr

        rr = release_pr(self.ctx, 1, actor=self.actor)
        return f"{rr.action}: {rr.skill} {rr.from_version} -> {rr.version}, tag {rr.tag}"

    def propose2(self) -> str:
        from skillci.vcs.candidate import commit_candidate

        ctx = self.ctx
        branch = "skillci/repo-debugger/overfit-demo"
        commit_candidate(
            ctx.git,
            base=ctx.git.rev("main") or "",
            branch=branch,
            skill_dir=f"skills/{SKILL}",
            changes={rule_file_path("edit.page-count-fast-path"): OVERFIT_RULE.encode()},
            subject="skill(repo-debugger): fast path for the page-count failure",
            trailers={
                "Failure-Class": "wrong_target_file",
                "Compiler": "demo over-fitting compiler",
                "Skill": f"skills/{SKILL}",
                "Same-Instance-Task": TASK,
            },
        )
        pr = ctx.forge.open_pr(
            title="skill(repo-debugger): fast path for the page-count failure (over-fitting)",
            body="A deliberately over-fitting patch: it hard-codes `src/ranges/pages.py`, the file "
            "of the one task it saw.",
            base="main",
            head_branch=branch,
            labels=["skillci", "wrong_target_file"],
            skill=f"skills/{SKILL}",
        )
        return f"opened PR #{pr.number} on {branch}"

    def close2(self) -> str:
        from skillci.flows.release import release_pr

        git = self.ctx.git
        rr = release_pr(self.ctx, 2, actor=self.actor)
        pr = self.ctx.forge.get_pr(2)
        return (
            f"{rr.action}: PR #2 is {pr.state.value}, branch deleted: "
            f"{git.rev('refs/heads/' + pr.head_branch) is None}, head ref kept: "
            f"{git.rev('refs/skillci/pr/2/head') is not None}"
        )

    def _canary(
        self, pick: Callable[[ChannelState], str], seed: int, *, force: bool = False
    ) -> str:
        """Start a canary of ``pick(state)``, send it traffic, analyze with ``--auto``.
        ``force``: the version never passed a gate (recorded in the channel log)."""
        from skillci.flows.canary import canary_analyze, canary_start
        from skillci.release.channels import ChannelStore

        st = ChannelStore(self.ctx.git).state(SKILL)
        assert st is not None and st.stable is not None
        version = pick(st)
        canary_start(self.ctx, SKILL, version, weight=40, actor=self.actor, force=force)
        releases = {v: (info.commit, st.path) for v, info in st.releases.items()}
        _traffic(self.ctx, releases, 120, seed=seed, say=self.say)
        a = canary_analyze(self.ctx, SKILL, auto=True, actor=self.actor)
        for line in canary_checks(a):
            self.say(line)
        return f"canary {version} vs stable {st.stable.version}: {a.outcome} -> {a.action}"

    def canary_good(self) -> str:
        return self._canary(
            lambda st: max(st.releases, key=lambda v: tuple(int(x) for x in v.split("."))), 1
        )

    def canary_bad(self) -> str:
        return self._canary(
            lambda st: next(
                v
                for v in sorted(st.releases)
                if st.stable is not None
                and v != st.stable.version
                and not st.releases[v].rolled_back
            ),
            2,
            force=True,  # the ungated initial version: canaried on purpose, to be rolled back
        )


def demo_state(repo: Path) -> tuple[list[str], list[PullRequest], list[ChannelEvent]]:
    """What the demo left in its scratch ``repo``: the tags, the pull requests, and the
    channel log of its skill."""
    from skillci.forge.local import LocalForge
    from skillci.release.channels import ChannelStore
    from skillci.vcs.git import Git

    git = Git(repo)
    tags = git.read("tag", "--list").split()
    return tags, LocalForge(git).list_prs(), ChannelStore(git).log(SKILL)
