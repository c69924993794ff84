"""BenchFlow 0.7 job dirs → run records.

Layout (``bench eval run --jobs-dir J``)::

    J/<timestamp>/<task>__<8 hex>/result.json                    one rollout's outcome
    J/<timestamp>/<task>__<8 hex>/config.json                    how it ran (optional here)
    J/<timestamp>/<task>__<8 hex>/trajectory/acp_trajectory.jsonl its ACP events

``result.json`` fields used: ``task_name``, ``rollout_name``, ``rewards.reward``, ``agent``,
``agent_name``, ``model``, ``skill_mode``, ``n_tool_calls``, ``n_skill_invocations``,
``agent_result`` (``n_input_tokens``, ``n_output_tokens``, ``cost_usd``, ``n_prompts``),
``error`` + ``error_category``, ``verifier_error`` + ``verifier_error_category``,
``partial_trajectory``, ``timing`` (seconds per phase), ``started_at``/``finished_at``.

ACP events (one JSON object a line): ``user_message``/``agent_message``/``agent_thought``
(``text``), ``tool_call`` (``tool_call_id``, ``kind``, ``title``, ``status``, ``content``,
optional ``raw_input``/``raw_output``) and ``agent_timeout``. Tool calls become a
``tool_call`` + ``tool_result`` pair with the ACP kind mapped to skillci's tool names
(``execute`` → ``run``, ``read`` → ``read_file``, ``edit`` → ``apply_patch``, ``search`` →
``search_code``; others keep their kind); a skill invocation also adds a ``skill_load``.
Thoughts become assistant messages prefixed ``(thinking)``. Everything is untrusted.

Verdicts (see :func:`skillci.trace.importers.common.verdict`): ``error_category`` in
:data:`INFRA_CATEGORIES` → ``infra_error``; ``timeout``/``idle_timeout`` → the agent timed
out (the reward decides if there is one, else ``timeout``); a verifier error → ``timeout``
(``verifier_timeout``) or ``verifier_error``; a missing or unreadable ``result.json`` →
``infra_error``. A missing trajectory keeps the verdict but adds a warning and
``metadata.trajectory = "missing"``; a partial one adds ``"partial"``.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from skillci.trace.importers.common import parse_time, read_json, run_id_for, verdict
from skillci.trace.models import (
    AgentRole,
    Cost,
    ErrorEvent,
    Event,
    MessageEvent,
    ModelInfo,
    RunRecord,
    RuntimeInfo,
    SkillLoadEvent,
    SkillRef,
    ToolCallEvent,
    ToolResultEvent,
)

RESULT = "result.json"
TRAJECTORY = Path("trajectory") / "acp_trajectory.jsonl"
#: error_category values that mean the trial itself failed to run properly.
INFRA_CATEGORIES = frozenset(
    {
        "install_failure",
        "pipe_closed",
        "acp_error",
        "infra_failure",
        "sandbox_setup",
        "provider_auth",
        "provider_rate_limit",
        "provider_rejected",
        "api_error",
        "suspected_api_error",
        "other",
    }
)
TIMEOUT_CATEGORIES = frozenset({"timeout", "idle_timeout"})
TOOL_NAMES = {"execute": "run", "read": "read_file", "edit": "apply_patch", "search": "search_code"}
_SKILL_TITLES = frozenset({"skill", "invoke_skill", "activate_skill"})
_OUTPUT_CAP = 12000
_ROLLOUT_NAME = re.compile(r"^.+__[0-9a-f]{8}$")


def find_rollouts(root: Path) -> list[Path]:
    """Rollout dirs under ``root``: dirs holding result.json or a trajectory, and
    ``<task>__<8 hex>`` dirs whose files never got written (killed or crashed rollouts);
    dirs nested in another rollout (reviewer runs, checkpoints) are that rollout's."""
    found: set[Path] = {p.parent for p in root.rglob(RESULT)}
    found |= {p.parents[1] for p in root.rglob(TRAJECTORY.name) if p.parent.name == "trajectory"}
    found |= {d for d in root.rglob("*") if d.is_dir() and _ROLLOUT_NAME.match(d.name)}
    if _ROLLOUT_NAME.match(root.name):
        found.add(root)
    reviewers = {d for d in found if (read_json(d / RESULT)[0] or {}).get("purpose") == "reviewer"}
    ordered = sorted(found - reviewers)
    return [d for d in ordered if not any(parent in found for parent in d.parents)]


def is_skill_call(event: dict[str, Any]) -> bool:
    kind = str(event.get("kind") or "").strip().lower()
    if kind == "skill":
        return True
    title = str(event.get("title") or event.get("tool_name") or "").strip().lower()
    return kind in ("", "other") and title in _SKILL_TITLES


def _text(value: Any) -> str:
    """Readable text of ACP content blocks / raw output (strings kept, the rest as JSON)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(t for t in (_text(v) for v in value) if t)
    if isinstance(value, dict):
        if isinstance(value.get("text"), str):
            return str(value["text"])
        if "content" in value:
            return _text(value["content"])
        for key in ("output", "stdout"):
            if isinstance(value.get(key), str):
                return str(value[key])
    return json.dumps(value, sort_keys=True, default=str)


def _arguments(event: dict[str, Any]) -> dict[str, Any]:
    raw = event.get("raw_input")
    args: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    if raw is not None and not isinstance(raw, dict):
        args["input"] = raw
    if event.get("title") and "title" not in args:
        args["title"] = event["title"]
    if event.get("kind") and "acp_kind" not in args:
        args["acp_kind"] = event["kind"]
    return args


def events_from_acp(lines: list[dict[str, Any]]) -> list[Event]:
    out: list[Event] = []

    def add(cls: Any, **fields: Any) -> None:
        out.append(cls(step=len(out), **fields))

    for i, ev in enumerate(lines):
        kind = ev.get("type")
        if kind == "user_message":
            add(MessageEvent, role="user", content=str(ev.get("text") or ""))
        elif kind == "agent_message":
            add(MessageEvent, role="assistant", content=str(ev.get("text") or ""))
        elif kind == "agent_thought":
            add(MessageEvent, role="assistant", content="(thinking) " + str(ev.get("text") or ""))
        elif kind == "tool_call":
            call_id = str(ev.get("tool_call_id") or f"acp-{i}")
            acp_kind = str(ev.get("kind") or "other")
            tool = "load_skill" if is_skill_call(ev) else TOOL_NAMES.get(acp_kind, acp_kind)
            add(ToolCallEvent, tool=tool, arguments=_arguments(ev), call_id=call_id)
            raw = ev.get("raw_output")
            text = _text(raw) if raw is not None else _text(ev.get("content"))
            code = raw.get("exit_code") if isinstance(raw, dict) else None
            status = str(ev.get("status") or "")
            add(
                ToolResultEvent,
                call_id=call_id,
                tool=tool,
                exit_code=code if isinstance(code, int) else None,
                output=text[:_OUTPUT_CAP],
                truncated=len(text) > _OUTPUT_CAP,
                error=None if status in ("completed", "") else status,
            )
            if tool == "load_skill":
                name = ev.get("raw_input") or ev.get("title") or "skill"
                path = _text(name.get("skill") if isinstance(name, dict) else name)
                add(SkillLoadEvent, path=path[:500] or "skill", on_demand=True)
        elif kind == "agent_timeout":
            add(
                ErrorEvent,
                error_type="Timeout",
                message=f"agent timed out ({ev.get('reason') or 'timeout'})",
            )
    return out


def _read_trajectory(path: Path) -> tuple[list[dict[str, Any]] | None, str | None]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, "trajectory/acp_trajectory.jsonl is missing"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"trajectory unreadable: {exc}"
    lines: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            return lines, f"trajectory line {n} is not JSON (cut off?)"
        if isinstance(obj, dict):
            lines.append(obj)
    return lines, None


def import_rollout(
    rollout: Path,
    *,
    role: AgentRole = AgentRole.student,
    skill: SkillRef | None = None,
    job: str | None = None,
) -> RunRecord:
    """One rollout dir → a run record (never raises for bad or missing files)."""
    result, why = read_json(rollout / RESULT)
    res = result or {}
    warnings: list[str] = []
    events_raw, traj_why = _read_trajectory(rollout / TRAJECTORY)
    trajectory_state = "complete"
    if events_raw is None:
        trajectory_state = "missing"
    elif traj_why is not None or res.get("partial_trajectory"):
        trajectory_state = "partial"
    if traj_why:
        warnings.append(traj_why)
    if res.get("partial_trajectory"):
        warnings.append("BenchFlow marked the trajectory partial")
    events = events_from_acp(events_raw or [])

    task = str(res.get("task_name") or rollout.name.split("__")[0])
    error = res.get("error")
    category = res.get("error_category")
    rewards = res.get("rewards")
    reward = rewards.get("reward") if isinstance(rewards, dict) else None
    if why is not None:
        warnings.append(f"{why}: the rollout did not finish")
        evaluation = verdict(None, infra_error=f"{why}: the rollout did not finish")
    else:
        infra = str(error) if error and category not in TIMEOUT_CATEGORIES else None
        verr = res.get("verifier_error")
        evaluation = verdict(
            reward,
            infra_error=f"[{category}] {infra}" if infra else None,
            agent_timeout=category in TIMEOUT_CATEGORIES,
            verifier_error=f"[{res.get('verifier_error_category')}] {verr}" if verr else None,
            verifier_timeout=res.get("verifier_error_category") == "verifier_timeout",
        )
        if rewards is not None and not isinstance(rewards, dict):
            warnings.append(f"rewards is {type(rewards).__name__}, not an object")
    ar = res.get("agent_result") if isinstance(res.get("agent_result"), dict) else {}
    assert isinstance(ar, dict)
    timing = res.get("timing") if isinstance(res.get("timing"), dict) else {}
    assert isinstance(timing, dict)

    def num(d: dict[str, Any], key: str) -> int:
        v = d.get(key)
        return v if isinstance(v, int) and v >= 0 else 0

    usd = ar.get("cost_usd")
    wall = timing.get("total")
    cost = Cost(
        input_tokens=num(ar, "n_input_tokens"),
        output_tokens=num(ar, "n_output_tokens"),
        model_calls=num(ar, "n_prompts"),
        tool_calls=num(res, "n_tool_calls"),
        wall_time_sec=float(wall) if isinstance(wall, int | float) and wall >= 0 else 0.0,
        usd=float(usd) if isinstance(usd, int | float) and usd >= 0 else None,
    )
    model = res.get("model")
    agent = str(res.get("agent_name") or res.get("agent") or "unknown")
    finished = parse_time(res.get("finished_at")) or parse_time(res.get("started_at"))
    if finished is None:  # deterministic, so a re-import is the same record
        finished = datetime.fromtimestamp(rollout.stat().st_mtime, UTC)
    n_skill = res.get("n_skill_invocations")
    if not isinstance(n_skill, int):
        n_skill = sum(1 for e in events if e.kind == "skill_load")
    record = RunRecord(
        run_id=run_id_for("benchflow", job or rollout.parent.name, rollout.name),
        task_id=task,
        agent_role=role,
        model=ModelInfo(route=str(model or agent), name=str(model) if model else None),
        runtime=RuntimeInfo(
            harness=agent,
            runner="benchflow",
            sandbox="benchflow",
            skill=skill if res.get("skill_mode", "with-skill") != "no-skill" else None,
        ),
        events=events,
        final_output=next(
            (e.content for e in reversed(events) if e.kind == "message" and e.role == "assistant"),
            None,
        ),
        stop_reason=str(category) if category else ("final_answer" if why is None else None),
        evaluation=evaluation,
        cost=cost,
        warnings=warnings,
        metadata={
            "importer": "benchflow",
            "source": str(rollout),
            "rollout_name": res.get("rollout_name") or rollout.name,
            "skill_mode": res.get("skill_mode"),
            "n_skill_invocations": n_skill,
            "error": error,
            "error_category": category,
            "verifier_error": res.get("verifier_error"),
            "verifier_error_category": res.get("verifier_error_category"),
            "trajectory": trajectory_state,
            "timing": timing,
            "started_at": res.get("started_at"),
            "finished_at": res.get("finished_at"),
        },
        created_at=finished,
    )
    return record


def import_jobs(
    root: Path, *, role: AgentRole = AgentRole.student, skill: SkillRef | None = None
) -> list[RunRecord]:
    """Every rollout under ``root`` (a jobs dir, one job dir, or one rollout dir)."""
    return [import_rollout(r, role=role, skill=skill) for r in find_rollouts(root)]


__all__ = [
    "INFRA_CATEGORIES",
    "RESULT",
    "TRAJECTORY",
    "events_from_acp",
    "find_rollouts",
    "import_jobs",
    "import_rollout",
    "is_skill_call",
]
