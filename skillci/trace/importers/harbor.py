"""Harbor job dirs → run records.

Layout (``harbor run -o J``)::

    J/<job name>/result.json                    the job's summary (skipped here)
    J/<job name>/<task>__<7 chars>/result.json  one trial: Harbor's TrialResult
    J/<job name>/<task>__<7 chars>/agent/trajectory.json   ATIF trajectory (when the agent
                                                 writes one; the oracle writes oracle.txt)
    J/<job name>/<task>__<7 chars>/verifier/    reward.txt/reward.json, test-stdout.txt
    J/<job name>/<task>__<7 chars>/agent/skillci-run.json  skillci's built-in agent's own
                                                 record of its run (:class:`SkillciRun`)

TrialResult fields used: ``task_name``, ``trial_name``, ``agent_info`` (name, version,
model_info.name/provider), ``agent_result`` (``n_input_tokens``, ``n_output_tokens``,
``cost_usd``), ``verifier_result.rewards``, ``exception_info`` (``exception_type``,
``exception_message``), ``started_at``/``finished_at`` and the phase timings.

ATIF steps become events: ``system``/``user`` steps → messages; ``agent`` steps → an assistant
message (``reasoning_content`` as a ``(thinking)`` message), its ``tool_calls`` and the
``observation.results`` answering them (``source_call_id``). The oracle's ``oracle.txt`` is
shown as one ``run`` of ``solve.sh``, as skillci's own oracle agent records it.

Nothing is dropped silently: every non-empty TrialResult field (top level and inside
``agent_info``, ``agent_result``, ``verifier_result``, ``exception_info``) is mapped, kept verbatim
in ``metadata`` (:data:`KEPT_FIELDS`: ids, config, step results, tracebacks, ...), or listed as
unmapped (a per-record warning and ``metadata.unmapped``, counted by ``trace import``). The
verifier's own output (``verifier/test-stdout.txt``) becomes the evaluation's verifier output;
files the importer does not read are named in ``metadata.unread_files``.

skillci's built-in agent on Harbor (design 426) writes :class:`SkillciRun`: its events are
the record's events as the loop recorded them (messages, tool calls and results, skill loads,
errors), so the imported record has the events a local trial of the same agent has.

Verdicts: ``exception_info`` of an agent timeout keeps the verifier's reward (``timeout``
without one); verifier timeouts → ``timeout``; reward-file and verifier-output errors →
``verifier_error``; any other exception (environment, agent setup, Docker) → ``infra_error``;
a missing ``result.json`` (killed trial) → ``infra_error``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import Field, TypeAdapter, ValidationError

import skillci.trace.atif as atif
from skillci.basemodels import StrictModel
from skillci.tasks.reward import primary_reward
from skillci.trace.atif import OUTPUT_CAP as _OUTPUT_CAP
from skillci.trace.atif import AtifTrace, sidechain_steps
from skillci.trace.importers.common import (
    parse_time,
    read_json,
    refuse_links,
    run_id_for,
    verdict,
    verifier_touches,
)
from skillci.trace.models import (
    AgentRole,
    Cost,
    Event,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillRef,
    ToolCallEvent,
    ToolResultEvent,
)

RESULT = "result.json"
#: What a Harbor jobs dir holds (said when a dir has none of it).
LAYOUT = "no trial dir (<task>__<7 chars>/ with a TrialResult result.json holding trial_name)"
ATIF = Path("agent") / "trajectory.json"
ORACLE_LOG = Path("agent") / "oracle.txt"
SKILLCI_RUN = Path("agent") / "skillci-run.json"
#: The Harbor agent name of skillci's built-in agent (its import-path class's ``name()``).
SKILLCI_AGENT = "skillci-builtin"
_TRIAL_NAME = re.compile(r"^.+__[A-Za-z0-9]{7}$")
AGENT_TIMEOUTS = frozenset({"AgentTimeoutError"})
VERIFIER_TIMEOUTS = frozenset({"VerifierTimeoutError"})
VERIFIER_ERRORS = frozenset(
    {
        "VerifierOutputParseError",
        "RewardFileNotFoundError",
        "RewardFileEmptyError",
        "AddTestsDirError",
        "DownloadVerifierDirError",
    }
)


#: TrialResult fields the record has a place for, per block ("" = top level).
MAPPED_FIELDS: dict[str, frozenset[str]] = {
    "": frozenset(
        {
            "task_name", "trial_name", "task_checksum", "agent_info", "agent_result",
            "verifier_result", "exception_info", "started_at", "finished_at",
            "environment_setup", "agent_setup", "agent_execution", "verifier",
        }
    ),
    "agent_info": frozenset({"name", "version", "model_info"}),
    "agent_result": frozenset({"n_input_tokens", "n_output_tokens", "cost_usd"}),
    "verifier_result": frozenset({"rewards"}),
    "exception_info": frozenset({"exception_type", "exception_message"}),
}  # fmt: skip
#: TrialResult fields kept verbatim in ``metadata.trial`` (provenance, details).
KEPT_FIELDS: dict[str, frozenset[str]] = {
    "": frozenset(
        {
            "id",
            "trial_uri",
            "task_id",
            "source",
            "config",
            "step_results",
            "verifier_environment_mode",
        }
    ),
    "agent_result": frozenset({"n_cache_tokens", "rollout_details", "metadata", "model_usage"}),
    "exception_info": frozenset({"exception_traceback", "occurred_at"}),
}
#: Files of a trial dir the importer reads (others are named in ``metadata.unread_files``).
READ_FILES = frozenset({"result.json", "config.json", "agent/trajectory.json", "agent/oracle.txt",
                        "agent/skillci-run.json",
                        "verifier/test-stdout.txt", "verifier/reward.txt", "verifier/reward.json",
                        "exception.txt"})  # fmt: skip
_VERIFIER_OUTPUT = Path("verifier") / "test-stdout.txt"


def _empty(value: Any) -> bool:
    return value is None or value == {} or value == [] or value == ""


def field_map(res: dict[str, Any]) -> tuple[dict[str, Any], dict[str, int]]:
    """(kept fields, unmapped fields) of a TrialResult: each non-empty field that is neither
    mapped nor kept is unmapped, named ``result.json:<block>.<field>``."""
    kept: dict[str, Any] = {}
    unmapped: dict[str, int] = {}
    for block in ("", "agent_info", "agent_result", "verifier_result", "exception_info"):
        data = res if block == "" else res.get(block)
        if not isinstance(data, dict):
            continue
        for key, value in data.items():
            name = f"{block}.{key}" if block else key
            if key in KEPT_FIELDS.get(block, frozenset()):
                if not _empty(value):
                    kept[name] = value
            elif key not in MAPPED_FIELDS.get(block, frozenset()) and not _empty(value):
                unmapped[f"result.json:{name}"] = 1
    return kept, unmapped


def _unread_files(trial: Path) -> list[str]:
    out = []
    for f in sorted(trial.rglob("*")):
        rel = f.relative_to(trial).as_posix()
        if f.is_file() and rel not in READ_FILES:
            out.append(rel)
    return out[:200]


def _verifier_output(trial: Path) -> str | None:
    try:
        text = (trial / _VERIFIER_OUTPUT).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return text[-4000:] if text.strip() else None


def _file_reward(trial: Path) -> object:
    """The verifier's reward file (a killed trial's only trace of its verdict)."""
    try:
        text = (trial / "verifier" / "reward.txt").read_text(encoding="utf-8").strip()
        return float(text)
    except (OSError, ValueError):
        pass
    data, _ = read_json(trial / "verifier" / "reward.json")
    return (data or {}).get("reward")


#: TrialResult fields besides trial_name (BenchFlow before 0.4 also wrote a trial_name).
_TRIAL_FIELDS = frozenset(
    {"trial_uri", "agent_info", "verifier_result", "exception_info", "task_checksum", "config"}
)


def _is_trial_result(data: dict[str, Any] | None) -> bool:
    return data is not None and "trial_name" in data and bool(_TRIAL_FIELDS & set(data))


def find_trials(root: Path) -> list[Path]:
    """Trial dirs under ``root``: dirs whose result.json is a TrialResult, and
    ``<task>__<7 chars>`` dirs that never got one (killed or crashed trials). A ``root``
    holding a symlink is refused (:func:`~.common.refuse_links`)."""
    refuse_links(root)
    found = {p.parent for p in root.rglob(RESULT) if _is_trial_result(read_json(p)[0])}
    found |= {
        d
        for d in [root, *root.rglob("*")]
        if d.is_dir() and _TRIAL_NAME.match(d.name) and (d / "config.json").is_file()
    }
    ordered = sorted(found)
    return [d for d in ordered if not any(parent in found for parent in d.parents)]


_EVENT: TypeAdapter[Event] = TypeAdapter(Event)


class SkillciRun(StrictModel):
    """What skillci's built-in agent did in a Harbor trial (``agent/skillci-run.json``),
    written by the skillci process that ran the loop (:mod:`skillci.runners.harbor_builtin`)."""

    schema_version: int = Field(1, description="Version of this file's shape.")
    events: list[Event] = Field(description="The loop's events, in order, as a local trial's.")
    final_output: str | None = Field(None, description="The agent's final answer.")
    stop_reason: str = Field(description="Why the loop stopped (final_answer, max_steps, ...).")
    system_prompt_hash: str | None = Field(None, description="sha256 of the system prompt.")
    tool_schema_version: str | None = Field(None, description="The tools' schema version.")
    tool_schema_hash: str | None = Field(None, description="sha256 of the tool schemas.")
    infra_error: str | None = Field(
        None, description="Set when the agent could not do its part (model error, crash)."
    )


#: Saved shapes of this module (``skillci skill schemas``).
SAVED_MODELS: dict[str, type[StrictModel]] = {"harbor-skillci-run": SkillciRun}


def read_skillci_run(trial: Path) -> tuple[SkillciRun | None, str | None]:
    """(the run, None), (None, None) when the trial has none, or (None, why) when it is not
    a :class:`SkillciRun` (a container can write the agent's logs dir: untrusted)."""
    try:
        text = (trial / SKILLCI_RUN).read_text(encoding="utf-8")
    except OSError:
        return None, None
    try:
        return SkillciRun.model_validate_json(text), None
    except ValidationError as exc:
        return (
            None,
            f"{SKILLCI_RUN.as_posix()}: not skillci's run record ({exc.error_count()} errors)",
        )


def events_from_atif(
    traj: dict[str, Any],
    *,
    start: datetime | None = None,
    window: tuple[datetime | None, datetime | None] = (None, None),
) -> tuple[list[Event], AtifTrace, list[str]]:
    """(events, the rest of the trajectory, warnings): see :mod:`skillci.trace.atif`."""
    raw, trace, warnings = atif.events_from_atif(traj, start=start, window=window)
    events = [_EVENT.validate_python({**ev, "step": i}) for i, ev in enumerate(raw)]
    return events, trace, warnings


def _oracle_events(trial: Path) -> list[Event]:
    try:
        text = (trial / ORACLE_LOG).read_text(errors="replace")
    except OSError:
        return []
    return [
        ToolCallEvent(
            step=0, tool="run", arguments={"command": "bash /solution/solve.sh"}, call_id="oracle-0"
        ),
        ToolResultEvent(
            step=1,
            call_id="oracle-0",
            tool="run",
            output=text[:_OUTPUT_CAP],
            truncated=len(text) > _OUTPUT_CAP,
        ),
    ]


def _seconds(block: Any) -> float | None:
    if not isinstance(block, dict):
        return None
    a, b = parse_time(block.get("started_at")), parse_time(block.get("finished_at"))
    return round((b - a).total_seconds(), 3) if a and b else None


def import_trial(
    trial: Path, *, role: AgentRole = AgentRole.student, skill: SkillRef | None = None
) -> RunRecord:
    # long: one pass over a trial dir's files in a fixed order, each tolerating its own absence (design 180)
    """One trial dir → a run record (never raises for bad or missing files)."""
    result, why = read_json(trial / RESULT)
    res = result or {}
    warnings: list[str] = []
    agent_info = res.get("agent_info") if isinstance(res.get("agent_info"), dict) else {}
    assert isinstance(agent_info, dict)
    # the trial's TrialConfig: what was asked for (the only trace of a killed trial's agent)
    trial_cfg = res.get("config") if isinstance(res.get("config"), dict) else None
    if trial_cfg is None:
        trial_cfg = read_json(trial / "config.json")[0] or {}
    cfg_agent = trial_cfg.get("agent") if isinstance(trial_cfg.get("agent"), dict) else {}
    assert isinstance(cfg_agent, dict)
    agent = str(agent_info.get("name") or cfg_agent.get("name") or "unknown")
    traj, traj_why = read_json(trial / ATIF)
    trace: AtifTrace | None = None
    own, own_why = read_skillci_run(trial) if agent == SKILLCI_AGENT else (None, None)
    if own_why is not None:
        warnings.append(own_why)
    if own is not None:
        events, trajectory_state = list(own.events), "skillci"
    elif traj is not None:
        ae = res.get("agent_execution") if isinstance(res.get("agent_execution"), dict) else {}
        assert isinstance(ae, dict)
        window = (
            parse_time(ae.get("started_at")) or parse_time(res.get("started_at")),
            parse_time(ae.get("finished_at")) or parse_time(res.get("finished_at")),
        )
        events, trace, traj_warnings = events_from_atif(
            traj, start=parse_time(res.get("started_at")) or window[0], window=window
        )
        warnings.extend(f"agent/{w}" for w in traj_warnings)
        if sidechain_steps(trace):
            warnings.append(
                f"agent/trajectory.json: {sidechain_steps(trace)} sub-agent step(s) "
                "(extra.is_sidechain); Harbor's claude-code converter lists them before the "
                "main conversation, so their place in the trajectory is not their time"
                if _sidechain_first(traj)
                else f"agent/trajectory.json: {sidechain_steps(trace)} sub-agent step(s) "
                "(extra.is_sidechain)"
            )
        trajectory_state = "complete"
    elif agent == "oracle" and (trial / ORACLE_LOG).is_file():
        events, trajectory_state = _oracle_events(trial), "oracle"
    else:
        events, trajectory_state = [], "missing"
        if traj_why and why is None and agent not in ("nop", "oracle"):
            warnings.append(f"agent/{traj_why}")

    exc = res.get("exception_info") if isinstance(res.get("exception_info"), dict) else None
    exc_type = str(exc.get("exception_type")) if exc else None
    exc_msg = f"{exc_type}: {exc.get('exception_message')}" if exc else None
    vr = res.get("verifier_result") if isinstance(res.get("verifier_result"), dict) else {}
    assert isinstance(vr, dict)
    rewards = vr.get("rewards") if isinstance(vr.get("rewards"), dict) else {}
    assert isinstance(rewards, dict)
    reward, reward_rule = primary_reward(rewards) if rewards else (None, "")
    kept, unmapped = field_map(res)
    if why is not None:
        file_reward = _file_reward(trial)
        note = f"{why}: the trial did not finish"
        if isinstance(file_reward, int | float):
            note += f" (verifier/ holds reward {file_reward}, kept in metadata.file_reward)"
        warnings.append(note)
        evaluation = verdict(None, infra_error=note)
    else:
        infra = exc_type is not None and exc_type not in (
            AGENT_TIMEOUTS | VERIFIER_TIMEOUTS | VERIFIER_ERRORS
        )
        evaluation = verdict(
            reward,
            infra_error=exc_msg if infra else None,
            agent_timeout=exc_type in AGENT_TIMEOUTS,
            verifier_error=exc_msg if exc_type in VERIFIER_ERRORS else None,
            verifier_timeout=exc_type in VERIFIER_TIMEOUTS,
        )
    if own is not None and own.infra_error is not None:  # not the skill's: no verdict (design 300)
        evaluation = verdict(None, infra_error=own.infra_error)
    output = _verifier_output(trial)
    if output and evaluation.verifier_output in ("", "no reward"):
        evaluation = evaluation.model_copy(update={"verifier_output": output})
    for name in unmapped:
        warnings.append(f"unmapped {name}")
    ar = res.get("agent_result") if isinstance(res.get("agent_result"), dict) else {}
    assert isinstance(ar, dict)

    fm = (traj or {}).get("final_metrics")
    fm = fm if isinstance(fm, dict) else {}

    def num(key: str, atif_key: str) -> int | None:
        for v in (ar.get(key), fm.get(atif_key)):  # ATIF's totals when the result has none
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                return v
        unknown.append(key)  # unknown, named, and null in the record: never passed off as 0
        return None

    unknown: list[str] = []

    usd = ar.get("cost_usd") if ar.get("cost_usd") is not None else fm.get("total_cost_usd")
    started, finished = parse_time(res.get("started_at")), parse_time(res.get("finished_at"))
    created = finished or started or datetime.fromtimestamp(trial.stat().st_mtime, UTC)
    mi = agent_info.get("model_info") if isinstance(agent_info.get("model_info"), dict) else None
    model_name = str(mi.get("name")) if mi and mi.get("name") else None
    provider = str(mi.get("provider")) if mi and mi.get("provider") else None
    if model_name is None and cfg_agent.get("model_name"):  # agents that don't report it
        model_name = str(cfg_agent["model_name"])
    route = f"{provider}/{model_name}" if provider and model_name else (model_name or agent)
    return RunRecord(
        run_id=_run_id(res, trial),
        task_id=str(res.get("task_name") or trial.name.rsplit("__", 1)[0]),
        agent_role=AgentRole.oracle if agent == "oracle" else role,
        model=ModelInfo(route=route, name=model_name),
        runtime=RuntimeInfo(
            harness=agent,
            harness_version=_agent_version(agent_info, traj),
            runner="harbor",
            sandbox="harbor",
            skill=skill,
            task_hash=str(res["task_checksum"]) if res.get("task_checksum") else None,
            system_prompt_hash=own.system_prompt_hash if own is not None else None,
            tool_schema_version=own.tool_schema_version if own is not None else None,
            tool_schema_hash=own.tool_schema_hash if own is not None else None,
        ),
        events=events,
        final_output=own.final_output
        if own is not None
        else next(
            (e.content for e in reversed(events) if e.kind == "message" and e.role == "assistant"),
            None,
        ),
        stop_reason=exc_type
        or (own.stop_reason if own is not None else "final_answer" if why is None else None),
        evaluation=evaluation,
        cost=Cost(
            input_tokens=num("n_input_tokens", "total_prompt_tokens"),
            output_tokens=num("n_output_tokens", "total_completion_tokens"),
            tool_calls=sum(1 for e in events if e.kind == "tool_call"),
            model_calls=_model_calls(traj, events),
            wall_time_sec=max(0.0, (finished - started).total_seconds())
            if started and finished
            else 0.0,
            usd=float(usd) if isinstance(usd, int | float) and usd >= 0 else None,
        ),
        created_at=created,
        warnings=warnings,
        reward_hack_evidence=verifier_touches(events),
        atif=trace,
        metadata={
            "importer": "harbor",
            "trial_name": res.get("trial_name") or trial.name,
            "rewards": rewards,
            "primary_reward": reward_rule if len(rewards) > 1 else None,
            "unknown_counts": unknown,
            "sidechain_steps": sidechain_steps(trace),
            "job": _job_settings(trial),
            "exception": exc_msg,
            "trajectory": trajectory_state,
            "timing": {
                k: _seconds(res.get(k))
                for k in ("environment_setup", "agent_setup", "agent_execution", "verifier")
            },
            "trial": kept,
            "unmapped": unmapped,
            "unread_files": _unread_files(trial),
            "file_reward": _file_reward(trial) if why is not None else None,
        },
    )


_TRIAL_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:@+-]{0,150}$")


def _sidechain_first(traj: dict[str, Any]) -> bool:
    """A sub-agent step comes before the first main-conversation user step."""
    for step in traj.get("steps") or []:
        extra = step.get("extra") if isinstance(step, dict) else None
        if isinstance(extra, dict) and extra.get("is_sidechain"):
            return True
        if isinstance(step, dict) and step.get("source") == "user":
            return False
    return False


def _run_id(res: dict[str, Any], trial: Path) -> str:
    """``harbor-<TrialResult.id>``: the harness's own trial id, so the same trial imported from
    another path is the same record; the folder names only when the result has no id."""
    tid = res.get("id")
    if isinstance(tid, str) and _TRIAL_ID.match(tid):
        return f"harbor-{tid}"
    return run_id_for("harbor", trial.parent.name, trial.name)


def _agent_version(agent_info: dict[str, Any], traj: dict[str, Any] | None) -> str | None:
    agent = (traj or {}).get("agent")
    for v in (agent_info.get("version"), agent.get("version") if isinstance(agent, dict) else None):
        if isinstance(v, str | int | float) and str(v) not in ("", "unknown"):
            return str(v)
    return None


def _model_calls(traj: dict[str, Any] | None, events: list[Event]) -> int:
    """Agent steps of the trajectory (one model call each); assistant messages without one."""
    if traj is not None:
        steps = [s for s in traj.get("steps") or [] if isinstance(s, dict)]
        return sum(1 for s in steps if s.get("source") == "agent")
    return sum(1 for e in events if e.kind == "message" and e.role == "assistant")


#: Job-level settings read from ``<job>/config.json`` (JobConfig) into ``metadata.job``.
JOB_SETTINGS = ("n_attempts", "n_concurrent_trials", "retry", "timeout_multiplier",
                "agent_timeout_multiplier", "verifier_timeout_multiplier")  # fmt: skip


def _job_settings(trial: Path) -> dict[str, Any] | None:
    """The job a trial ran in: its retry policy and concurrency (``config.json``), its id and
    times (``result.json``), and the job files not read — never ignored silently."""
    job = trial.parent
    cfg, _ = read_json(job / "config.json")
    res, _ = read_json(job / RESULT)
    if (cfg is None and res is None) or _is_trial_result(res):
        return None
    out: dict[str, Any] = {}
    if cfg is not None:
        out["config"] = {k: cfg[k] for k in JOB_SETTINGS if k in cfg}
        out["config_unread"] = sorted(k for k in cfg if k not in JOB_SETTINGS)
    if res is not None:
        out["result"] = {k: res[k] for k in ("id", "started_at", "finished_at", "n_total_trials")
                         if k in res}  # fmt: skip
        out["result_unread"] = sorted(k for k in res if k not in out["result"])
        out["times_zone"] = "naive: local time of the machine that ran harbor (job.py)"
    return out


def import_jobs(
    root: Path, *, role: AgentRole = AgentRole.student, skill: SkillRef | None = None
) -> list[RunRecord]:
    """Every trial under ``root`` (a jobs dir, one job dir, or one trial dir)."""
    return [import_trial(t, role=role, skill=skill) for t in find_trials(root)]


__all__ = [
    "SAVED_MODELS",
    "SKILLCI_AGENT",
    "SKILLCI_RUN",
    "SkillciRun",
    "events_from_atif",
    "find_trials",
    "import_jobs",
    "import_trial",
    "read_skillci_run",
]
