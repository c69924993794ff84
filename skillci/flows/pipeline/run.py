"""``skillci pipeline``: raw eval -> profile + static -> eval -> Fast -> eval -> Deep ->
final eval -> (in a repo) one candidate branch with a commit per stage and a PR.

Run dir (``results/compile-pipeline/<run-id>``)::

    manifest.json                    identity, stage states, result (atomic)
    report.md                        the numbers of every eval next to each other
    artifacts/input/<skill>/         the task's skill, imported (byte-exact + manifest)
    artifacts/static/                profile.yaml, skills/<skill>/, report.json|md, plan.json
    artifacts/fast/                  candidate/<skill>/, fast-report.json|md, scores.json, patch.yaml
    artifacts/deep/                  state.json, packages/, rollouts/, deep-report.md, S_final/
    traces/<task>/{raw,static,fast,final}/test-NNN/   complete trial dirs (.incomplete/ aside)

Preconditions (as the seed pipeline's): the task exists under the tasks root; its
``environment/skills`` holds the skill under test (``--skill`` names it among several); the
run dir lies under
``results/compile-pipeline``; one process per run dir (a file lock). A rerun with the
same run dir checks the input identity and resumes at the first stage that is not done
(or whose outputs no longer hash as recorded); trials are reused only from complete
trial dirs. See docs/pipeline.md and docs/design/104.
"""

from __future__ import annotations

import hashlib
import re
import traceback
from dataclasses import dataclass
from pathlib import Path

from filelock import FileLock, Timeout

from skillci.compile.deep import RolloutStats
from skillci.compile.profile import ModelProfile, build_profile
from skillci.errors import (
    InvalidInputError,
    PipelineLocked,
    SkillciError,
)
from skillci.flows.pipeline.deep_cmd import DeepRequest, start_deep
from skillci.flows.pipeline.deep_stage import run_deep
from skillci.flows.pipeline.fast_stage import FastRequest, run_fast_stage
from skillci.flows.pipeline.fsio import publish_package, tree_matches
from skillci.flows.pipeline.inputs import (
    HARNESSES,
    RESULTS_DIR,
    Inputs,
    PipelineOptions,
    resolve_inputs,
    run_dir_for,
)
from skillci.flows.pipeline.manifest import (
    STAGES,
    PipelineResult,
    RunManifest,
    StageName,
    load_manifest,
    new_manifest,
    now,
    save_manifest,
)
from skillci.flows.pipeline.repo import SKIPPED, CandidateRun, publish_candidate
from skillci.flows.pipeline.reports import stats_table
from skillci.flows.pipeline.static_stage import StaticRequest, run_static
from skillci.fsutil import atomic_write_text, tree_hash
from skillci.runners.base import builtin_agent
from skillci.runners.slots import plan_slots, run_slots, trial_name
from skillci.runners.trialdir import MARKER, TrialMeta
from skillci.skill.lint import lint
from skillci.skill.package import SkillPackage
from skillci.trace.models import RunRecord


@dataclass
class PipelineOutcome:
    run_dir: Path
    manifest: RunManifest
    ran: list[str]
    reused: list[str]


# ---------------------------------------------------------------------------- the run


class _Run:
    def __init__(self, opts: PipelineOptions, run_dir: Path, inputs: Inputs, m: RunManifest):
        self.opts = opts
        self.dir = run_dir
        self.inp = inputs
        self.m = m
        self.say = opts.say
        name = inputs.package.manifest.name
        self.traces = run_dir / "traces" / inputs.task.id
        self.input_dir = run_dir / "artifacts" / "input" / name
        self.static_dir = run_dir / "artifacts" / "static"
        self.static_skill = self.static_dir / "skills" / name
        self.fast_dir = run_dir / "artifacts" / "fast"
        self.fast_skill = self.fast_dir / "candidate" / name
        self.deep_dir = run_dir / "artifacts" / "deep"
        self.final_skill = self.deep_dir / "S_final"
        self.agent = builtin_agent(opts.model, route=inputs.student)

    # -------------------------------------------------------------- helpers

    def rel(self, p: Path) -> str:
        return p.relative_to(self.dir).as_posix()

    def reuse_roots(self) -> list[Path]:
        return [self.dir / "traces", self.deep_dir / "rollouts"]

    def eval_stage(self, pkg: SkillPackage, sub: str, n: int) -> tuple[list[RunRecord], Path]:
        dest = self.traces / sub
        slots = plan_slots(self.inp.task, self.agent, pkg, n, dest, self.dir)
        recs = run_slots(
            slots,
            parallel=self.opts.max_parallel,
            reuse_from=self.reuse_roots(),
            progress=lambda msg: self.say(f"  {sub}/{msg}"),
        )
        return recs, dest

    def trials_hash(self, dest: Path) -> str:
        items = []
        for d in sorted(p for p in dest.glob("test-*") if p.is_dir()):
            try:
                meta = TrialMeta.model_validate_json((d / MARKER).read_bytes())
            except (OSError, ValueError):
                continue
            items.append((d.name, meta.key.encode()))
        return tree_hash(items)

    def output_hash(self, rel: str) -> str:
        p = self.dir / rel
        if rel.startswith("traces/"):
            return self.trials_hash(p)
        if p.is_dir():
            try:
                return SkillPackage.from_dir(p).content_hash
            except SkillciError:
                return ""
        return hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else ""

    def outputs_ok(self, name: StageName) -> bool:
        st = self.m.stage(name)
        return all(self.output_hash(rel) == h for rel, h in st.outputs.items())

    def save(self) -> None:
        save_manifest(self.dir, self.m)

    def package(self, path: Path) -> SkillPackage:
        return SkillPackage.from_dir(path)

    def labelled(self, sub: str, recs: list[RunRecord]) -> list[tuple[str, RunRecord]]:
        return [(f"{sub}/{trial_name(i)}", r) for i, r in enumerate(recs)]

    # -------------------------------------------------------------- stages

    def raw_eval(self) -> tuple[dict[str, str], RolloutStats | None, list[str]]:
        pkg = self.inp.package
        if not tree_matches(self.input_dir, pkg.content_hash):
            publish_package(self.input_dir, pkg)
        recs, dest = self.eval_stage(pkg, "raw", self.opts.repeat)
        outs = {self.rel(self.input_dir): pkg.content_hash, self.rel(dest): self.trials_hash(dest)}
        return outs, RolloutStats.of(recs), []

    def raw_records(self) -> list[RunRecord]:
        recs, _ = self.eval_stage(self.package(self.input_dir), "raw", self.opts.repeat)
        return recs

    def profile(self) -> ModelProfile:
        recs = self.raw_records()
        return build_profile(
            self.opts.model,
            self.inp.student,
            self.inp.harness,
            recs,
            labels=[lab for lab, _ in self.labelled("raw", recs)],
        )

    def static(self) -> tuple[dict[str, str], RolloutStats | None, list[str]]:
        prof = self.profile()
        out = run_static(
            StaticRequest(
                model=self.opts.model,
                input=self.input_dir,
                out=self.static_dir,
                mode=self.opts.static_mode,
                external_model=self.opts.external_model,
                harness=self.inp.harness,
                profile=prof,
                profile_source=f"measured from {prof.traits.runs} raw trial(s)",
                state_dir=self.dir,
            )
        )
        r = out.report
        notes = [
            f"{sum(s.status == 'rewritten' for s in r.sections)} section(s) rewritten, "
            f"{len(r.rolled_back)} rolled back; {sum(o.applied for o in r.ops)} structural op(s)",
            *r.notes,
        ]
        return {self.rel(self.static_skill): out.package.content_hash}, None, notes

    def static_eval(self) -> tuple[dict[str, str], RolloutStats | None, list[str]]:
        n = max(self.opts.repeat, self.opts.fast_trajectories)
        recs, dest = self.eval_stage(self.package(self.static_skill), "static", n)
        return {self.rel(dest): self.trials_hash(dest)}, RolloutStats.of(recs), []

    def fast(self) -> tuple[dict[str, str], RolloutStats | None, list[str]]:
        n = max(self.opts.repeat, self.opts.fast_trajectories)
        pkg = self.package(self.static_skill)
        recs, _ = self.eval_stage(pkg, "static", n)
        out = run_fast_stage(
            FastRequest(
                traces=self.traces / "static",
                skill=self.static_skill,
                model=self.opts.external_model,
                output=self.fast_dir,
                rm_url=self.opts.rm_url,
                no_rm=self.opts.no_rm,
                max_parallel=self.opts.max_parallel,
                state_dir=self.dir,
                records=self.labelled("static", recs),
            )
        )
        r = out.report
        notes = [
            f"patch {r.patch.pid}" if r.patch is not None else "no new lesson: candidate unchanged",
            *(r.notes[:3]),
        ]
        if r.rm_note:
            notes.append(r.rm_note)
        return {self.rel(self.fast_skill): out.package.content_hash}, None, notes

    def fast_eval(self) -> tuple[dict[str, str], RolloutStats | None, list[str]]:
        recs, dest = self.eval_stage(self.package(self.fast_skill), "fast", self.opts.repeat)
        return {self.rel(dest): self.trials_hash(dest)}, RolloutStats.of(recs), []

    def deep(self) -> tuple[dict[str, str], RolloutStats | None, list[str]]:
        pkg = self.package(self.fast_skill)
        recs, _ = self.eval_stage(pkg, "fast", self.opts.repeat)
        prof = self.profile()
        ctx, state = start_deep(
            DeepRequest(
                skill=self.fast_skill,
                output=self.deep_dir,
                model=self.opts.external_model,
                student=self.opts.model,
                task=self.inp.task.root,
                rounds=self.opts.deep_rounds,
                repeat=self.opts.repeat,
                max_parallel=self.opts.max_parallel,
                budget=prof.bootstrap_budget(pkg.manifest.token_budget.bootstrap),
                reuse_from=(self.dir / "traces",),
                baseline=self.labelled("fast", recs),
                progress=lambda msg: self.say(f"  deep/{msg}"),
            )
        )
        final = run_deep(ctx, state)
        committed = sum(e.status == "committed" for e in state.edits)
        notes = [f"{committed} edit(s) committed of {state.executed} executed"]
        return {self.rel(self.final_skill): final.content_hash}, None, notes

    def final_eval(self) -> tuple[dict[str, str], RolloutStats | None, list[str]]:
        recs, dest = self.eval_stage(self.package(self.final_skill), "final", self.opts.repeat)
        return {self.rel(dest): self.trials_hash(dest)}, RolloutStats.of(recs), []

    def publish(self) -> tuple[dict[str, str], RolloutStats | None, list[str]]:
        run = CandidateRun(
            root=self.opts.root,
            manifest=self.m,
            skill_name=self.inp.package.manifest.name,
            skill_source=self.inp.identity.skill_source,
            task_id=self.inp.task.id,
            model=self.opts.model,
            external_model=self.opts.external_model,
            stages=(self.input_dir, self.static_skill, self.fast_skill, self.final_skill),
            fast_report=self.fast_dir / "fast-report.json",
        )
        return {}, None, publish_candidate(run, self.opts.base)

    # -------------------------------------------------------------- driver

    def run(self) -> PipelineOutcome:
        ran: list[str] = []
        reused: list[str] = []
        reset = False
        fns = {
            "raw_eval": self.raw_eval,
            "static": self.static,
            "static_eval": self.static_eval,
            "fast": self.fast,
            "fast_eval": self.fast_eval,
            "deep": self.deep,
            "final_eval": self.final_eval,
            "publish": self.publish,
        }
        for name in STAGES:
            st = self.m.stage(name)
            if not reset and st.status in ("done", "skipped") and self.outputs_ok(name):
                reused.append(name)
                self.say(f"{name}: done earlier, reused")
                continue
            reset = True
            if name == "publish" and not self.opts.publish:
                st.status, st.notes, st.error = "skipped", ["--no-pr"], None
                self.save()
                continue
            st.status, st.error = "running", None
            st.started_at, st.finished_at = now(), None
            st.attempts += 1
            self.save()
            self.say(f"{name}: running")
            try:
                outputs, stats, notes = fns[name]()
            except SkillciError as exc:
                st.status, st.error, st.finished_at = "failed", exc.one_line(), now()
                self.save()
                raise
            except Exception as exc:
                st.status, st.finished_at = "failed", now()
                st.error = f"{type(exc).__name__}: {exc}".splitlines()[0][:300]
                self.save()
                self.say(traceback.format_exc())
                raise
            st.outputs, st.stats, st.notes = outputs, stats, notes
            skipped = name == "publish" and bool(notes) and notes[0].startswith(SKIPPED)
            st.status = "skipped" if skipped else "done"
            st.finished_at = now()
            self.save()
            ran.append(name)
        self.finish()
        return PipelineOutcome(self.dir, self.m, ran, reused)

    def finish(self) -> None:
        final = self.package(self.final_skill)
        rep = lint(final)
        evals = {
            k: s
            for k, stage in (
                ("raw", "raw_eval"),
                ("static", "static_eval"),
                ("fast", "fast_eval"),
                ("final", "final_eval"),
            )
            if (s := self.m.stage(stage).stats) is not None  # type: ignore[arg-type]
        }
        pub = self.m.stage("publish")
        branch = next((n[len("branch ") :] for n in pub.notes if n.startswith("branch ")), None)
        pr = next((int(n[len("pr #") :]) for n in pub.notes if re.match(r"pr #\d+$", n)), None)
        self.m.result = PipelineResult(
            final_skill=self.rel(self.final_skill),
            final_hash=final.content_hash,
            lint_errors=rep.errors,
            lint_warnings=rep.warnings,
            evals=evals,
            branch=branch,
            pr=pr,
        )
        self.save()
        atomic_write_text(self.dir / "report.md", summary_markdown(self.m))


def summary_markdown(m: RunManifest) -> str:
    idn = m.identity
    lines = [
        f"# Compile pipeline: `{idn.skill}` for `{idn.student.route}` on `{idn.task}`",
        "",
        f"- compiler: `{idn.compiler.route}`; harness: `{idn.harness}`; skillci {idn.skillci_version}",
        "",
        "## Evaluations",
        "",
    ]
    res = m.result
    names = [("raw", "raw"), ("static", "static"), ("fast", "fast"), ("final (S_final)", "final")]
    lines.append(stats_table([(label, res.evals.get(k) if res else None) for label, k in names]))
    lines += ["## Stages", "", "| stage | status | notes |", "|---|---|---|"]
    for s in m.stages:
        lines.append(f"| {s.name} | {s.status} | {'; '.join(s.notes) or s.error or ''} |")
    if res is not None:
        lines += [
            "",
            f"Deliverable: `{res.final_skill}` (`{res.final_hash[:12]}`), lint: "
            f"{res.lint_errors} error(s), {res.lint_warnings} warning(s).",
        ]
        if res.pr is not None:
            lines.append(
                f"Pull request #{res.pr} on `{res.branch}`: decide it with `skillci gate`."
            )
    return "\n".join(lines) + "\n"


def run_pipeline(opts: PipelineOptions) -> PipelineOutcome:
    """Run or resume one pipeline (see the module docstring)."""
    inputs = resolve_inputs(opts)
    run_dir = run_dir_for(opts)
    if opts.dry_run:
        planned = load_manifest(run_dir) or new_manifest(run_dir.name, inputs.identity)
        return PipelineOutcome(run_dir, planned, [], [])
    run_dir.mkdir(parents=True, exist_ok=True)
    lock = FileLock(str(run_dir / ".lock"), timeout=0)
    try:
        lock.acquire()
    except Timeout:
        raise PipelineLocked(
            f"another process is running the pipeline in {run_dir}", file=run_dir
        ) from None
    try:
        m = load_manifest(run_dir)
        if m is None:
            m = new_manifest(run_dir.name, inputs.identity)
            save_manifest(run_dir, m)
        elif m.identity_digest != inputs.identity.digest:
            diff = [
                k
                for k, v in inputs.identity.model_dump().items()
                if m.identity.model_dump().get(k) != v
            ]
            raise InvalidInputError(
                f"this run dir belongs to other inputs (differs in: {', '.join(diff)})",
                file=run_dir / "manifest.json",
                hint="resume with the same flags, or start a new --run-dir",
            )
        return _Run(opts, run_dir, inputs, m).run()
    finally:
        lock.release()


__all__ = [
    "HARNESSES",
    "RESULTS_DIR",
    "Inputs",
    "PipelineOptions",
    "PipelineOutcome",
    "resolve_inputs",
    "run_dir_for",
    "run_pipeline",
    "summary_markdown",
]
