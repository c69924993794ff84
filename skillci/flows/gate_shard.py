"""Sharded gate: ``skillci evals plan | run --shard i/N | merge`` (docs/design/110, 417).

The gate's trials split into *units*, one per (suite, task) pair plus one for the
same-instance task. Everything the gate decides about a unit depends only on that unit's
own trials (base repeats; the impact selection of that task; its head repeats), except the
sequential test, which looks at all tasks of a suite round by round. So:

- :func:`plan_gate` lists the units in a fixed order; shard ``i`` of ``N`` takes units
  ``i, i+N, i+2N, ...`` (:meth:`GatePlan.units_of`).
- :func:`run_shard` runs, for each of its units, every base repeat, the reference sides
  and the same-instance trials, and head rounds: *every* planned round (one-shot, no
  ``round``: a shard cannot see the other shards' trials, so it cannot stop early), or
  only round ``round`` (design 417). Round 1 runs the base side and head round 1; round
  ``K > 1`` reads the earlier rounds' directories, replays the sequential test over them
  (:func:`open_rounds`) and runs head round ``K`` of the tasks whose suite is still open.
- :func:`decide_round` is the coordinator between rounds: the same replay says whether
  every suite decided (no further round) or which round comes next.
- :func:`merge_shards` imports every shard's records and replays
  :func:`skillci.flows.gate.decide_gate` with a :class:`Replay` source that hands out
  those records instead of running trials. The replay asks for head rounds one at a time
  and stops where the sequential test stops, so the report is the one an unsharded
  ``skillci gate`` writes; head trials of rounds after the stop (one-shot shards) are
  counted (``config.sharding.unused_trials``) and otherwise ignored.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, Field

from skillci.errors import InvalidInputError
from skillci.flows.context import RepoContext
from skillci.flows.gate import (
    GateInputs,
    GateOptions,
    GateRunner,
    Progress,
    decide_gate,
    gate_id,
    keep_report,
    load_inputs,
    trial_specs,
)
from skillci.fsutil import atomic_write_text, load_json
from skillci.gate.decision import rerun_on_head
from skillci.gate.impact import select_tasks
from skillci.gate.outcomes import loaded_files
from skillci.gate.verdict import GateReport
from skillci.runners.base import AgentSpec, JudgeSpec, TrialSpec, builtin_agent, named_judge
from skillci.skill.render import RenderedSkill
from skillci.tasks.models import Purpose, Task
from skillci.trace.models import RunRecord

_M = TypeVar("_M", bound=BaseModel)

#: 2: ``round`` / ``last_round`` (design 417); a version-1 file reads as one-shot
SHARD_SCHEMA_VERSION = 2
SHARD_FILE = "shard.json"
RECORDS_DIR = "records"
#: The key a trial is known by across machines (the trial cache key, sandbox excluded:
#: shards and the merge job may differ in whether bubblewrap is installed).
KEY_SANDBOX = "gate-shard"
MAX_RECORD_BYTES = 64 * 1024 * 1024


class GateSpec(BaseModel):
    """The gate a plan is for: what ``skillci gate`` would be asked, refs resolved."""

    skill: str = Field(description="Skill package as given (name or skills/<name>).")
    base: str = Field(description="Base ref as given.")
    head: str = Field(description="Head ref as given.")
    base_sha: str = Field(description="Base commit.")
    head_sha: str = Field(description="Head commit.")
    suites: list[str] = Field(description="Suites, in gate order.")
    repeat: int = Field(description="Repeats per task (max rounds).")
    student: str = Field(description="Student model route.")
    sequential: bool = Field(description="Sequential test on head rounds.")
    impact: bool = Field(description="Test-impact selection.")
    same_instance_task: str | None = Field(default=None, description="Same-instance task.")
    guard_verdict: str = Field(default="pass", description="Patch guard verdict given.")
    guard_findings: list[str] = Field(default_factory=list, description="Guard findings given.")
    teacher: str | None = Field(
        default=None, description="Teacher route of the reference sides (None: none)."
    )
    agent: str = Field(default="builtin", description="The student's agent (--agent).")
    agent_version: str | None = Field(default=None, description="--agent-version given.")
    judge: str | None = Field(
        default=None, description="--judge given: the rubric graders' judge (None: sim/judge)."
    )

    def options(self, parallel: int = 2) -> GateOptions:
        return GateOptions(
            skill=self.skill,
            base=self.base_sha,
            head=self.head_sha,
            suites=tuple(self.suites),
            repeat=self.repeat,
            student=self.student,
            parallel=parallel,
            sequential=self.sequential,
            impact=self.impact,
            same_instance_task=self.same_instance_task,
            guard_verdict=self.guard_verdict,
            guard_findings=list(self.guard_findings),
            teacher=self.teacher,
            agent=self.agent,
            agent_version=self.agent_version,
            judge=self.judge,
        )


class GateUnit(BaseModel):
    """One (suite, task) pair; ``suite`` None is the same-instance check."""

    suite: str | None = Field(description="Suite name; None for the same-instance task.")
    task_id: str = Field(description="Task id.")


class GatePlan(BaseModel):
    """The units of one gate, in the order shards take them."""

    schema_version: int = SHARD_SCHEMA_VERSION
    plan_id: str = Field(description="Hash of the spec and the units (and task contents).")
    gate_id: str = Field(description="Id the merged GateReport will have.")
    spec: GateSpec = Field(description="The gate.")
    units: list[GateUnit] = Field(description="Every unit, in partition order.")

    def units_of(self, shard: int, shards: int) -> list[GateUnit]:
        """Shard ``shard`` (0-based) of ``shards``: every ``shards``-th unit."""
        return self.units[shard::shards]

    def matrix(
        self, shards: int, only: list[int] | None = None
    ) -> dict[str, list[dict[str, object]]]:
        """The GitHub Actions matrix: one job per shard (``include`` entries); ``only``: just
        those shards (a later round's dispatch, design 427)."""
        n = effective_shards(self, shards)
        return {
            "include": [
                {"shard": f"{i}/{n}", "index": i, "units": len(self.units_of(i, n))}
                for i in range(n)
                if only is None or i in only
            ]
        }


class ShardTrial(BaseModel):
    """One trial a shard ran or found cached."""

    key: str = Field(description="Trial key (the cache key with the sandbox left out).")
    task_id: str
    repeat_index: int
    side: str = Field(description="base or head (skill package hash decides), teacher or baseline.")
    run_id: str | None = Field(description="Run record id; None when the trial errored.")
    state: str = Field(description="Trial state (passed, failed, error, ...).")
    cached: bool = Field(description="Found in this machine's trial cache.")
    model_calls: int = Field(default=0, description="Model calls made (0 when cached).")


class ShardResult(BaseModel):
    """What one shard job did: written as ``shard.json`` next to ``records/``."""

    schema_version: int = SHARD_SCHEMA_VERSION
    plan_id: str = Field(description="The plan this shard belongs to.")
    gate_id: str
    spec: GateSpec
    shard: int = Field(description="0-based shard index.")
    shards: int = Field(description="Number of shards.")
    units: list[GateUnit] = Field(description="Units this shard ran.")
    round: int = Field(
        default=0,
        description="First head round (1-based) this shard ran; 0: one-shot, every round.",
    )
    last_round: int = Field(default=0, description="Last head round this shard ran (0: one-shot).")
    trials: list[ShardTrial] = Field(description="Every trial of those units.")
    ran: int = Field(description="Trials run (not cached).")
    cached: int = Field(description="Trials served from the trial cache.")
    model_calls: int = Field(description="Model calls made.")
    wall_time_sec: float


def parse_shard(text: str) -> tuple[int, int]:
    """``i/N`` (0-based ``i``) -> (i, N)."""
    i, sep, n = text.partition("/")
    try:
        index, count = int(i), int(n)
    except ValueError:
        index, count = -1, 0
    if not sep or count < 1 or not 0 <= index < count:
        raise InvalidInputError(
            f"--shard {text!r} is not i/N with 0 <= i < N", hint="e.g. --shard 0/3"
        )
    return index, count


def effective_shards(plan: GatePlan, shards: int) -> int:
    """No more shards than units (an empty shard would only cost a runner)."""
    if shards < 1:
        raise InvalidInputError(f"--shards {shards} must be at least 1")
    return max(1, min(shards, len(plan.units)))


def trial_key(spec: TrialSpec) -> str:
    return spec.cache_key(KEY_SANDBOX)


# ---------------------------------------------------------------------------- plan


def _spec(opts: GateOptions, inputs: GateInputs) -> GateSpec:
    return GateSpec(
        skill=opts.skill,
        base=opts.base,
        head=opts.head,
        base_sha=inputs.base_sha,
        head_sha=inputs.head_sha,
        suites=list(opts.suites),
        repeat=opts.repeat,
        student=opts.student,
        sequential=opts.sequential,
        impact=opts.impact,
        same_instance_task=opts.same_instance_task,
        guard_verdict=opts.guard_verdict,
        guard_findings=list(opts.guard_findings),
        teacher=opts.teacher,
        agent=opts.agent or "builtin",
        agent_version=opts.agent_version,
        # `--judge sim/judge` is the default named: the same plan as no --judge (as the gate
        # id, flows/gate.py), so a caller that names it and one that does not agree
        judge=named_judge(opts.judge),
    )


def _plan(opts: GateOptions, inputs: GateInputs) -> GatePlan:
    units: list[GateUnit] = []
    contents: list[str] = [inputs.base.pkg.content_hash, inputs.head.pkg.content_hash]
    for s in opts.suites:
        ids = {t.id for t in inputs.base.tasks[s]} | {t.id for t in inputs.head.tasks[s]}
        units += [GateUnit(suite=s, task_id=t) for t in sorted(ids)]
        contents += [f"{s}:{t.id}:{t.content_hash}" for t in inputs.base.tasks[s]]
        contents += [f"{s}:{t.id}:{t.content_hash}" for t in inputs.head.tasks[s]]
    if opts.same_instance_task:
        units.append(GateUnit(suite=None, task_id=opts.same_instance_task))
    spec = _spec(opts, inputs)
    digest = hashlib.sha256(
        json.dumps(
            {
                # a plan without --judge hashes as before the field existed
                "spec": spec.model_dump(
                    mode="json",
                    exclude={"base", "head", *(() if spec.judge else ("judge",))},
                ),
                "units": [u.model_dump() for u in units],
                "contents": contents,
            },
            sort_keys=True,
        ).encode()
    ).hexdigest()
    return GatePlan(
        plan_id=f"plan-{digest[:16]}",
        gate_id=gate_id(opts, inputs.base_sha, inputs.head_sha),
        spec=spec,
        units=units,
    )


def plan_gate(ctx: RepoContext, opts: GateOptions) -> GatePlan:
    """The units of the gate ``opts`` describes (loads both sides; runs nothing)."""
    return _plan(opts, load_inputs(ctx, opts))


# ---------------------------------------------------------------------------- run one shard


def _same_instance_task(ctx: RepoContext, inputs: GateInputs, task_id: str) -> Task:
    from skillci.tasks.loader import load_task

    wt = ctx.worktree(inputs.head_sha)
    return load_task(wt / "evals" / "tasks" / task_id, purpose=Purpose.optimize, suites_root=wt)


def _run_unit(
    ctx: RepoContext,
    opts: GateOptions,
    inputs: GateInputs,
    runner: GateRunner,
    unit: GateUnit,
    last: int,
) -> None:
    """Round 1 of ``unit`` (base repeats, the reference sides, the same-instance trials)
    and its head rounds 1..``last``."""
    base, head, agent = inputs.base, inputs.head, inputs.agent
    if unit.suite is None:  # the same-instance check: base and head, all repeats
        task = _same_instance_task(ctx, inputs, unit.task_id)
        runner.run(agent, [task], base.rendered, base.pkg.content_hash, repeats=opts.repeat)
        runner.run(agent, [task], head.rendered, head.pkg.content_hash, repeats=opts.repeat)
        return
    s = unit.suite
    btasks = {t.id: t for t in base.tasks[s] if t.id == unit.task_id}
    htasks = {t.id: t for t in head.tasks[s] if t.id == unit.task_id}
    recs = runner.run(
        agent,
        list(btasks.values()),
        base.rendered,
        base.pkg.content_hash,
        repeats=opts.repeat,
        suite=s,
    )
    loaded = {unit.task_id: frozenset().union(*(loaded_files(r) for r in recs))} if recs else {}
    sel = select_tasks(
        inputs.changed, loaded, tasks=sorted(htasks), sections_changed=inputs.sections
    )
    rerun = rerun_on_head(opts.impact, sel, btasks, htasks)
    if rerun:  # rounds 1..last: where the sequential test stops is decided by the replay
        runner.run(agent, rerun, head.rendered, head.pkg.content_hash, repeats=last, suite=s)
    if opts.teacher:  # the reference sides of this task, exactly as decide_gate asks for them
        tasks = list(htasks.values())
        teacher = builtin_agent(opts.teacher, role="teacher")
        runner.run(teacher, tasks, None, None, repeats=opts.repeat, suite=s)
        runner.run(agent, tasks, None, None, repeats=opts.repeat, suite=s)


def round_range(opts: GateOptions, rnd: int, remaining: bool) -> tuple[int, int]:
    """The head rounds (first, last; 1-based) ``--round rnd [--remaining]`` runs; round 0
    is the one-shot shard: every round."""
    if rnd == 0:
        return 1, opts.repeat
    if not 1 <= rnd <= opts.repeat:
        raise InvalidInputError(
            f"--round {rnd} is not a round of this gate (1..{opts.repeat}, --repeat)",
            hint="rounds count from 1; omit --round to run every round",
        )
    return rnd, opts.repeat if remaining else rnd


def shard_runner(
    ctx: RepoContext, opts: GateOptions, inputs: GateInputs, progress: Progress | None
) -> GateRunner:
    """A trial runner that logs every trial asked for (what :func:`write_shard` writes)."""
    runner = GateRunner(ctx, opts.parallel, progress, judge=inputs.judge)
    runner.log = []
    return runner


def run_shard(
    ctx: RepoContext,
    opts: GateOptions,
    shard: int,
    shards: int,
    out: Path,
    progress: Progress | None = None,
    *,
    rnd: int = 0,
    remaining: bool = False,
) -> ShardResult:
    """Run shard ``shard`` of ``shards`` and write ``out/shard.json`` + ``out/records/``:
    every round (``rnd`` 0), or round 1 (and with ``remaining`` every later one). Later
    rounds alone: :func:`skillci.flows.gate_rounds.run_round`."""
    t0 = time.monotonic()
    first, last = round_range(opts, rnd, remaining)
    if first != 1:
        raise InvalidInputError(
            f"round {first} needs the earlier rounds' shards",
            hint="skillci evals run --round K ... eval-r1-* (the directories of rounds < K)",
        )
    inputs = load_inputs(ctx, opts)
    plan = _plan(opts, inputs)
    n = effective_shards(plan, shards)
    units = plan.units_of(shard, n) if shard < n else []
    runner = shard_runner(ctx, opts, inputs, progress)
    for unit in units:
        _run_unit(ctx, opts, inputs, runner, unit, last)
    rounds = (first, last) if rnd else (0, 0)
    return write_shard(ctx, plan, inputs, runner, (shard, n), units, rounds, out, t0)


def write_shard(
    ctx: RepoContext,
    plan: GatePlan,
    inputs: GateInputs,
    runner: GateRunner,
    where: tuple[int, int],
    units: list[GateUnit],
    rounds: tuple[int, int],
    out: Path,
    t0: float,
) -> ShardResult:
    """``out/shard.json`` and ``out/records/`` of the trials ``runner`` logged."""
    head_hash = inputs.head.pkg.content_hash
    trials: dict[str, ShardTrial] = {}
    (out / RECORDS_DIR).mkdir(parents=True, exist_ok=True)
    for spec, o in runner.log or []:
        key = trial_key(spec)
        if key in trials:
            continue
        trials[key] = ShardTrial(
            key=key,
            task_id=spec.task.id,
            repeat_index=spec.repeat_index,
            side=(
                "teacher"
                if spec.agent.role == "teacher"
                else "baseline"
                if spec.skill is None
                else "head"
                if spec.skill_package_hash == head_hash
                else "base"
            ),
            run_id=o.run_id,
            state=o.state,
            cached=o.cached,
            model_calls=0 if o.cached else o.model_calls,
        )
        if o.run_id:
            rec = ctx.store.get(o.run_id)
            atomic_write_text(out / RECORDS_DIR / f"{o.run_id}.json", rec.model_dump_json())
    result = ShardResult(
        plan_id=plan.plan_id,
        gate_id=plan.gate_id,
        spec=plan.spec,
        shard=where[0],
        shards=where[1],
        units=units,
        round=rounds[0],
        last_round=rounds[1],
        trials=list(trials.values()),
        ran=runner.ran,
        cached=runner.cached,
        model_calls=runner.model_calls,
        wall_time_sec=round(time.monotonic() - t0, 3),
    )
    atomic_write_text(out / SHARD_FILE, result.model_dump_json(indent=2) + "\n")
    return result


# ---------------------------------------------------------------------------- merge


class NextRound(Exception):
    """A partial replay was asked for head round ``index`` (0-based) of ``tasks`` of
    ``suite``, which no shard ran yet: the suite's sequential test is still open."""

    def __init__(self, suite: str, tasks: list[Task], index: int) -> None:
        super().__init__(f"{suite}: round {index + 1}")
        self.suite = suite
        self.tasks = tasks
        self.index = index


class Replay:
    """A :class:`~skillci.flows.gate.TrialSource` serving the shards' records. With
    ``partial`` (head rounds received, head package hash) a request for a later head round
    raises :class:`NextRound` instead of "no shard ran" (design 417)."""

    def __init__(
        self,
        ctx: RepoContext,
        trials: dict[str, ShardTrial],
        judge: JudgeSpec | None = None,
        partial: tuple[int, str] | None = None,
    ) -> None:
        self.ctx = ctx
        self.judge = judge
        self.trials = trials
        self.partial = partial
        self.used: set[str] = set()
        self.owner: dict[str, str] = {}  # run id -> the trial key it was given for
        self.ran = 0
        self.cached = 0
        self.model_calls = 0

    def run(
        self,
        agent: AgentSpec,
        tasks: list[Task],
        rendered: RenderedSkill | None,
        pkg_hash: str | None,
        *,
        repeats: int,
        first_repeat: int = 0,
        suite: str | None = None,
        fresh: bool = False,
    ) -> list[RunRecord]:
        # ``fresh`` is the running shards' business: a replay reads what they recorded
        p = self.partial  # a head round not received yet: the caller's suite is open
        if p and suite and rendered is not None and pkg_hash == p[1] and first_repeat >= p[0]:
            raise NextRound(suite, tasks, first_repeat)
        specs = trial_specs(
            self.ctx.state_dir,
            agent,
            tasks,
            rendered,
            pkg_hash,
            repeats=repeats,
            first_repeat=first_repeat,
            suite=suite,
            judge=self.judge,
        )
        records: list[RunRecord] = []
        for spec in specs:
            key = trial_key(spec)
            t = self.trials.get(key)
            if t is None:
                raise InvalidInputError(
                    f"no shard ran {spec.task.id} #{spec.repeat_index}"
                    f"{f' of suite {suite}' if suite else ''} (trial {key[:12]})",
                    hint="pass every shard's directory to `skillci evals merge`; re-run the "
                    "missing shard if one failed",
                )
            self.used.add(key)
            if t.run_id:
                rec = self.ctx.store.get(t.run_id)
                _check_record(rec, spec, key, self.owner.setdefault(t.run_id, key))
                records.append(rec)
        return records


def _check_record(rec: RunRecord, spec: TrialSpec, key: str, owner: str) -> None:
    """A shard's record must be the trial the merge asks for: shard files are data from
    another job, and a record of another task, role or skill package (or one record given
    for two trials) would decide the wrong trial (docs/design/170-gate-status-trust.md)."""
    skill = rec.runtime.skill.content_hash if rec.runtime.skill else None
    wrong = [
        what
        for what, ok in (
            ("task", rec.task_id == spec.task.id),
            ("role", rec.agent_role.value == spec.agent.role),
            ("skill package", skill == spec.skill_package_hash),
            ("one trial per record", owner == key),
        )
        if not ok
    ]
    if wrong:
        raise InvalidInputError(
            f"run record {rec.run_id} is not trial {spec.task.id} #{spec.repeat_index} "
            f"({', '.join(wrong)} differ)",
            hint="merge the shards of one untampered gate run",
        )


def _validated(model: type[_M], f: Path) -> _M:
    """``f`` (a shard artifact: untrusted) as ``model``; a file that is not one — invalid,
    or nested deeper than the JSON limit — is exit 2 naming it, not a traceback."""
    from pydantic import ValidationError

    try:
        return model.model_validate(load_json(f.read_bytes(), file=f))
    except ValueError as exc:  # JSONDecodeError and pydantic's ValidationError
        if isinstance(exc, ValidationError):
            err = exc.errors()[0]
            why = f"{'.'.join(str(x) for x in err['loc'])}: {err['msg']}"
        else:
            why = f"not JSON: {str(exc).splitlines()[0]}"
        raise InvalidInputError(
            f"not a {model.__name__}: {why}",
            file=f,
            hint="pass the directories `evals run --out` wrote, unchanged",
        ) from None


def read_shard(path: Path) -> ShardResult:
    """A shard directory's result (validated: artifacts are data, not instructions)."""
    f = path / SHARD_FILE
    if not f.is_file():
        raise InvalidInputError(
            f"{path} has no {SHARD_FILE}", hint="pass the directories `evals run --out` wrote"
        )
    return _validated(ShardResult, f)


def _import_records(ctx: RepoContext, path: Path, wanted: set[str]) -> None:
    for f in sorted((path / RECORDS_DIR).glob("*.json")):
        if f.stat().st_size > MAX_RECORD_BYTES:
            raise InvalidInputError(f"{f} is larger than {MAX_RECORD_BYTES} bytes")
        rec = _validated(RunRecord, f)
        if rec.run_id in wanted:
            ctx.store.put(rec)
    missing = [rid for rid in sorted(wanted) if not _known(ctx, rid)]
    if missing:
        raise InvalidInputError(
            f"{path}: run record {missing[0]} is missing"
            + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""),
            hint=f"the shard directory is incomplete; re-run the shard ({RECORDS_DIR}/ must be "
            "uploaded with shard.json)",
        )


def _known(ctx: RepoContext, run_id: str) -> bool:
    from skillci.errors import SkillciError

    try:
        return ctx.store.resolve(run_id) == run_id
    except SkillciError:
        return False


@dataclass
class Received:
    """The shards of one gate, checked against this checkout's plan, records imported."""

    opts: GateOptions
    inputs: GateInputs
    plan: GatePlan
    results: list[ShardResult]
    trials: dict[str, ShardTrial]
    #: head rounds every shard ran (the plan's ``repeat`` for one-shot shards)
    rounds: int
    #: round dispatches received (0: one-shot shards)
    dispatches: int


def _complete(results: list[ShardResult], label: str, *, some: bool = False) -> None:
    """Every shard ``0..N-1`` of one dispatch, once (``some``: a later round's dispatch,
    which runs only the shards with open units: each shard at most once)."""
    first = results[0]
    seen = sorted(r.shard for r in results)
    expected = sorted(set(seen)) if some else list(range(first.shards))
    if seen != expected or any(r.shards != first.shards for r in results):
        missing = sorted(set(expected) - set(seen))
        dup = sorted({s for s in seen if seen.count(s) > 1})
        raise InvalidInputError(
            f"shards of {first.plan_id}{label}: "
            + (f"missing {', '.join(f'{i}/{first.shards}' for i in missing)}" if missing else "")
            + (f"duplicated {', '.join(map(str, dup))}" if dup else "")
            + ("" if missing or dup else "shard counts differ"),
            hint="download every eval-* artifact of the run",
        )


def _rounds_of(results: list[ShardResult]) -> tuple[int, int]:
    """(head rounds received, dispatches) of the shards of one plan: one-shot shards are
    complete; round shards must be rounds 1..K, each dispatch complete."""
    groups: dict[tuple[int, int], list[ShardResult]] = {}
    for r in results:
        groups.setdefault((r.round, r.last_round), []).append(r)
    if (0, 0) in groups:
        if len(groups) > 1:
            raise InvalidInputError(
                f"shards of {results[0].plan_id} mix one-shot and round shards",
                hint="merge the shards of one gate run only",
            )
        _complete(groups[(0, 0)], "")
        return results[0].spec.repeat, 0
    expect = 1
    for first, last in sorted(groups):
        if first != expect or last < first:
            raise InvalidInputError(
                f"shards of {results[0].plan_id}: round {expect} is missing "
                f"(found round(s) {', '.join(str(f) for f, _ in sorted(groups))})",
                hint="download every eval-r<k>-* artifact of the run",
            )
        # round 1 is every shard; a later round only the shards with open units (design
        # 427): a needed trial of a shard that did not run is "no shard ran" in the replay
        _complete(groups[(first, last)], f" round {first}", some=first > 1)
        expect = last + 1
    return expect - 1, len(groups)


def receive_shards(
    ctx: RepoContext, dirs: list[Path], *, opts: GateOptions | None = None
) -> Received:
    """Read the shard directories ``dirs`` (untrusted data), check that they are one plan's
    complete dispatches and that this checkout plans the same, import their records."""
    if not dirs:
        raise InvalidInputError("no shard directories given", hint="e.g. evals merge eval-*")
    pairs = sorted(((d, read_shard(d)) for d in dirs), key=lambda p: (p[1].round, p[1].shard))
    results = [r for _, r in pairs]
    first = results[0]
    for r in results:
        if r.plan_id != first.plan_id:
            raise InvalidInputError(
                f"shard {r.shard}/{r.shards} belongs to plan {r.plan_id}, shard "
                f"{first.shard}/{first.shards} to {first.plan_id}",
                hint="merge the shards of one gate run only",
            )
    rounds, dispatches = _rounds_of(results)
    opts = opts or first.spec.options()
    inputs = load_inputs(ctx, opts)
    plan = _plan(opts, inputs)
    if plan.plan_id != first.plan_id:
        raise InvalidInputError(
            f"the shards ran plan {first.plan_id}, but this checkout plans {plan.plan_id}",
            hint="merge in a checkout of the same base and head commits",
        )
    trials: dict[str, ShardTrial] = {}
    for d, r in pairs:
        _import_records(ctx, d, {t.run_id for t in r.trials if t.run_id})
        for t in r.trials:
            trials.setdefault(t.key, t)
    return Received(opts, inputs, plan, results, trials, rounds, dispatches)


def merge_shards(
    ctx: RepoContext, dirs: list[Path], *, opts: GateOptions | None = None
) -> GateReport:
    """One GateReport from every shard's directory (one-shot shards, or every round's);
    equal to the unsharded gate's report (see :func:`comparable`)."""
    t0 = time.monotonic()
    got = receive_shards(ctx, dirs, opts=opts)
    results = got.results
    replay = Replay(ctx, got.trials, judge=got.inputs.judge)
    replay.ran = sum(r.ran for r in results)
    replay.cached = sum(r.cached for r in results)
    replay.model_calls = sum(r.model_calls for r in results)
    first = results[0]
    report = decide_gate(
        ctx,
        got.opts,
        got.inputs,
        replay,
        t0=t0,
        refs=(first.spec.base, first.spec.head),
        keep=False,
    )
    report.config["sharding"] = {
        "plan_id": got.plan.plan_id,
        "shards": first.shards,
        "rounds": got.dispatches,
        "trials": len(got.trials),
        "unused_trials": len(set(got.trials) - replay.used),
        "shard_wall_time_sec": [r.wall_time_sec for r in results],
    }
    keep_report(ctx, report)
    return report


# ---------------------------------------------------------------------------- equality

#: What may differ between two reports of the same gate (sharded or not, any machine):
#: when they were made, how long trials took, which run ids they got, and what running
#: them cost here (cache hits, model calls) — never a verdict, check, metric or count.
VOLATILE_KEYS = frozenset(
    {"created_at", "latency_s", "latency_per_trial_s", "wall_time_sec", "sharding"}
)
ACCOUNTING_KEYS = frozenset({"trials_run", "trials_cached", "model_calls"})


def comparable(report: GateReport) -> dict[str, object]:
    """The part of a GateReport that must be identical between the sharded and the
    unsharded gate: everything except :data:`VOLATILE_KEYS` (at any depth), the top-level
    :data:`ACCOUNTING_KEYS`, and run ids (replaced by how many there are)."""
    data = report.model_dump(mode="json")
    for k in ACCOUNTING_KEYS:
        data.pop(k, None)
    data["evidence"] = {
        task: {side: len(ids) for side, ids in sides.items()}
        for task, sides in data["evidence"].items()
    }
    si = data.get("same_instance")
    if isinstance(si, dict):
        si["before_runs"] = len(si["before_runs"])
        si["after_runs"] = len(si["after_runs"])
    out = _drop(data)
    assert isinstance(out, dict)
    return out


def _drop(node: object) -> object:
    if isinstance(node, dict):
        return {k: _drop(v) for k, v in node.items() if k not in VOLATILE_KEYS}
    if isinstance(node, list):
        return [_drop(v) for v in node]
    return node
