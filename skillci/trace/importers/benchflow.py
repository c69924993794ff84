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

Task-standard acceptance evidence (``evidence/acceptance/`` of a BenchFlow task: a gold run's
``gold-result.json`` with ``task``/``kind``/``checks``/``expected_reward``/``status``, its
``gold-trajectory.jsonl`` and ``oracle-run.json``) is read as an oracle rollout: the reward is the
trajectory's ``verifier_result`` line, else ``expected_reward`` of a ``passed`` gold result.

ACP events (one JSON object a line): ``user_message``/``agent_message``/``agent_thought``
(``text``), ``tool_call`` (``tool_call_id``, ``kind``, ``title``, ``status``, ``content``,
optional ``raw_input``/``raw_output``/``locations``) and ``agent_timeout``. A call's arguments
are its ``raw_input`` plus ``paths``: the files its ``locations`` and ``diff`` content blocks
name (0.6 claude-agent-acp calls carry no raw_input). Tool calls become a
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

from skillci.fsutil import load_json
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
RUN_CONFIG = "run_config.json"
USER_ROUNDS = "user_rounds.jsonl"
LLM_TRAJECTORY = Path("trajectory") / "llm_trajectory.jsonl"
VERIFIER_STDOUT = Path("verifier") / "test-stdout.txt"
#: Task-standard acceptance evidence of a gold (reference) run.
GOLD_RESULT = "gold-result.json"
GOLD_TRAJECTORY = "gold-trajectory.jsonl"
ORACLE_RUN = "oracle-run.json"
#: Files of a rollout dir the importer reads (others are named in ``metadata.unread_files``).
READ_FILES = frozenset(
    {RESULT, "config.json", RUN_CONFIG, USER_ROUNDS, TRAJECTORY.as_posix(),
     LLM_TRAJECTORY.as_posix(), GOLD_RESULT, GOLD_TRAJECTORY, ORACLE_RUN,
     VERIFIER_STDOUT.as_posix()}
)  # fmt: skip
#: What a BenchFlow jobs dir holds (said when a dir has none of it).
LAYOUT = "no rollout dir (result.json, trajectory/acp_trajectory.jsonl or <task>__<8 hex>/)"
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
_SKILL_TITLES = frozenset({"skill", "invoke_skill", "activate_skill", "load skill"})
_OUTPUT_CAP = 12000
_ROLLOUT_NAME = re.compile(r"^.+__[0-9a-f]{8}$")
#: A path to a skill's SKILL.md in a read call's title (Codex: "Read file '/skills/x/SKILL.md'")
_SKILL_MD = re.compile(r"[^\s'\"`]*SKILL\.md")
_PATH_RUN = re.compile(r"[^\s'\"`]+")


def skill_md_paths(title: str) -> list[str]:
    """``_SKILL_MD.findall(title)`` in linear time (design 468): the pattern's greedy run ends
    at the last ``SKILL.md`` of each run of path characters, and ``re`` read the rest of a run
    from each of its positions before failing there."""
    out = []
    for run in _PATH_RUN.finditer(title):
        end = title.rfind("SKILL.md", run.start(), run.end())
        if end >= 0:
            out.append(title[run.start() : end + len("SKILL.md")])
    return out


def find_rollouts(root: Path) -> list[Path]:
    """Rollout dirs under ``root``: dirs holding result.json or a trajectory, and
    ``<task>__<8 hex>`` dirs whose files never got written (killed or crashed rollouts);
    dirs nested in another rollout (reviewer runs, checkpoints) are that rollout's. A
    ``root`` holding a symlink is refused (:func:`~.common.refuse_links`)."""
    refuse_links(root)
    found: set[Path] = {p.parent for p in root.rglob(RESULT)}
    found |= {p.parent for p in root.rglob(GOLD_RESULT)}
    found |= {p.parents[1] for p in root.rglob(TRAJECTORY.name) if p.parent.name == "trajectory"}
    found |= {d for d in root.rglob("*") if d.is_dir() and _ROLLOUT_NAME.match(d.name)}
    if _ROLLOUT_NAME.match(root.name):
        found.add(root)
    skip = {d for d in found if _not_a_rollout(read_json(d / RESULT)[0] or {})}
    ordered = sorted(found - skip)
    return [d for d in ordered if not any(parent in found for parent in d.parents)]


#: Fields only Harbor writes: a TrialResult (``trial_uri``, ``agent_info``) or a job's summary.
_HARBOR_FIELDS = frozenset({"trial_uri", "agent_info", "n_total_trials"})


def _not_a_rollout(res: dict[str, Any]) -> bool:
    """A reviewer run nested in a rollout, or a Harbor trial/job result (not BenchFlow's)."""
    return res.get("purpose") == "reviewer" or bool(_HARBOR_FIELDS & set(res))


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


def _touched_paths(event: dict[str, Any]) -> list[str]:
    """Files an ACP tool call names outside ``raw_input``: its ``locations`` and the ``path`` of
    its ``diff`` content blocks (BenchFlow 0.6 writes claude-agent-acp calls without raw_input,
    so an edit's file is only there)."""
    blocks = [*(event.get("locations") or [])]
    content = event.get("content")
    if isinstance(content, list):
        blocks += [b for b in content if isinstance(b, dict) and b.get("type") == "diff"]
    paths = [b["path"] for b in blocks if isinstance(b, dict) and isinstance(b.get("path"), str)]
    return list(dict.fromkeys(paths))


def skill_md_read(event: dict[str, Any]) -> str | None:
    """The SKILL.md a completed ACP ``read`` call read (an agent without a skill tool --
    Codex -- loads a skill so), else None."""
    if str(event.get("kind") or "") != "read" or event.get("status") not in ("completed", None):
        return None
    paths = [*_touched_paths(event), *skill_md_paths(str(event.get("title") or ""))]
    return next((p for p in paths if p.endswith("SKILL.md")), None)


def _arguments(event: dict[str, Any]) -> dict[str, Any]:
    raw = event.get("raw_input")
    args: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    if raw is not None and not isinstance(raw, dict):
        args["input"] = raw
    paths = _touched_paths(event)
    if paths and "paths" not in args:
        args["paths"] = paths
    if event.get("title") and "title" not in args:
        args["title"] = event["title"]
    if event.get("kind") and "acp_kind" not in args:
        args["acp_kind"] = event["kind"]
    return args


#: Named tools of the flat ACP shape (``{"tool": ..., "args": ...}``) → skillci's tool names.
NAMED_TOOLS = {
    "bash": "run",
    "shell": "run",
    "execute": "run",
    "read": "read_file",
    "edit": "apply_patch",
    "search": "search_code",
}


def events_from_acp(
    lines: list[dict[str, Any]],
    unmapped: dict[str, int] | None = None,
    scores: list[Any] | None = None,
) -> list[Event]:
    """ACP lines → events. Lines of a type with no event (verifier scores, unknown types) are
    counted in ``unmapped`` as ``trajectory:<type>`` so the caller can warn about them; verifier
    ``score`` lines go to ``scores``."""
    out: list[Event] = []

    def add(cls: Any, **fields: Any) -> None:
        out.append(cls(step=len(out), **fields))

    def skip(kind: object) -> None:
        if unmapped is not None:
            key = f"trajectory:{kind}"
            unmapped[key] = unmapped.get(key, 0) + 1

    for i, ev in enumerate(lines):
        kind = ev.get("type")
        text = ev.get("text") if ev.get("text") is not None else ev.get("content")
        if kind == "user_message":
            add(MessageEvent, role="user", content=_text(text))
        elif kind in ("agent_message", "final"):
            add(MessageEvent, role="assistant", content=_text(text))
        elif kind == "system":
            add(MessageEvent, role="system", content=_text(ev.get("message") or text))
        elif kind == "agent_action":  # a gold trajectory's summary of what the agent did
            add(MessageEvent, role="assistant", content=_text(ev.get("message") or text))
        elif kind == "agent_thought":
            add(MessageEvent, role="assistant", content="(thinking) " + _text(text))
        elif kind == "tool_call" and "tool" in ev and "kind" not in ev:
            _flat_tool_call(ev, i, add)
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
            elif (read := skill_md_read(ev)) is not None:
                add(SkillLoadEvent, path=read[:500], on_demand=True)
        elif kind == "oracle":  # BenchFlow's oracle: one run of the task's solve.sh
            call_id = f"oracle-{i}"
            add(ToolCallEvent, tool="run", call_id=call_id,
                arguments={"command": _text(ev.get("command") or "solve.sh")})  # fmt: skip
            code = ev.get("return_code")
            said = _text(ev.get("stdout"))
            add(ToolResultEvent, call_id=call_id, tool="run",
                exit_code=code if isinstance(code, int) else None,
                output=said[:_OUTPUT_CAP], truncated=len(said) > _OUTPUT_CAP)  # fmt: skip
        elif kind in ("agent_timeout", "timeout"):
            why = ev.get("reason") or ev.get("content") or "timeout"
            add(ErrorEvent, error_type="Timeout", message=f"agent timed out ({_text(why)[:500]})")
        elif kind in ("score", "verifier_result"):  # the verifier's line: the evaluation has it
            if scores is not None:
                scores.append(ev.get("reward"))
        elif kind in ("stderr", "error"):
            add(ErrorEvent, error_type=str(kind), message=_text(text)[:2000], untrusted=True)
        else:
            skip(kind)
    return out


def _flat_tool_call(ev: dict[str, Any], i: int, add: Any) -> None:
    """The flat shape ``{"type": "tool_call", "tool": name, "args": {...}}`` (no result line)."""
    name = str(ev.get("tool") or "other")
    raw = ev.get("args")
    args: dict[str, Any] = dict(raw) if isinstance(raw, dict) else {}
    if raw is not None and not isinstance(raw, dict):
        args["input"] = raw
    skill = name.strip().lower() in _SKILL_TITLES
    tool = "load_skill" if skill else NAMED_TOOLS.get(name.strip().lower(), name)
    if tool != name:
        args.setdefault("tool_name", name)
    call_id = str(ev.get("tool_call_id") or f"acp-{i}")
    add(ToolCallEvent, tool=tool, arguments=args, call_id=call_id)
    if skill:
        path = _text(args.get("name") or args.get("skill") or "skill")
        add(SkillLoadEvent, path=path[:500] or "skill", on_demand=True)


def _read_trajectory(
    path: Path, label: str = "trajectory"
) -> tuple[list[dict[str, Any]] | None, str | None]:
    """(JSON object lines, None) or (None / the lines before a bad one, why)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, "trajectory/acp_trajectory.jsonl is missing"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{label} unreadable: {exc}"
    lines: list[dict[str, Any]] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = load_json(line, file=path, line=n)
        except ValueError:
            return lines, f"{label} line {n} is not JSON (cut off?)"
        if isinstance(obj, dict):
            lines.append(obj)
    return lines, None


#: result.json fields the record has a place for (anything else is listed as unmapped).
_RESULT_FIELDS = frozenset(
    {
        "task_name", "rollout_name", "trial_name", "rewards", "reward", "status", "agent", "agent_name",
        "model", "skill_mode", "n_tool_calls", "n_skill_invocations", "n_prompts",
        "agent_result", "error", "error_category", "verifier_error", "verifier_error_category",
        "partial_trajectory", "trajectory_source", "timing", "started_at", "finished_at",
        "token_usage", "tool_usage", "verifier_started_after_agent", "purpose",
        "task", "kind", "expected_reward", "checks",
    }
)  # fmt: skip
_CONFIG_FIELDS = frozenset(
    {
        "task_id", "harness", "agent", "model", "skill_mode", "trial_id", "sandbox",
        "source_ref", "timeout_seconds", "task_skills", "required_env",
    }
)  # fmt: skip
#: result.json fields kept verbatim in the record's metadata (provenance, summaries).
_KEPT_FIELDS = (
    "skill_source",
    "export_error",
    "final_metrics",
    "trajectory_summary",
    "reward_events",
    "memory_score",
    "source",
    "agent_result",
    # 0.7.x: the skill policy, the loop/scene plan, usage tracking and the per-channel
    # diagnostics (*_info: what an error, timeout or sandbox failure looked like)
    "requested_skills_dir",
    "effective_skills_dir",
    "skills_sandbox_dir",
    "include_task_skills",
    "usage_tracking",
    "scenes",
    "loop",
    "sandbox_id",
    "task_digest",
    "dataset_name",
    "dataset_version",
    "scoring",
    "parent_rollout",
    "idle_timeout_info",
    "agent_timeout_info",
    "sandbox_startup_info",
    "transport_error_info",
    "verifier_timeout_info",
    "api_error_info",
    "suspected_api_error_info",
)
#: ``status`` values that say the agent ran out of time.
_TIMEOUT_STATUS = frozenset({"timeout", "timed_out", "agent_timeout"})


def _read_rounds(path: Path, warnings: list[str]) -> list[dict[str, Any]]:
    """user_rounds.jsonl (multi-round runs): one object a line; a bad file is a warning."""
    if not path.is_file():
        return []
    rounds, why = _read_trajectory(path, path.name)
    if why:
        warnings.append(why)
    return rounds or []


def _llm_usage(path: Path, warnings: list[str]) -> dict[str, int]:
    """Model calls and token usage from trajectory/llm_trajectory.jsonl (the proxy's log of
    requests and responses), the fallback when result.json has no usage; failed calls count."""
    out = {"calls": 0, "failed": 0, "input_tokens": 0, "output_tokens": 0}
    if not path.is_file():
        return out
    lines, why = _read_trajectory(path, "llm_trajectory.jsonl")
    if why:
        warnings.append(why)
    for line in lines or []:
        if "error" in line:
            out["failed"] += 1
        resp = line.get("response")
        body = resp.get("body") if isinstance(resp, dict) else None
        if not isinstance(body, dict):
            continue
        out["calls"] += 1
        use = body.get("usage") if isinstance(body.get("usage"), dict) else {}
        assert isinstance(use, dict)
        for key, names in (
            ("input_tokens", ("prompt_tokens", "input_tokens")),
            ("output_tokens", ("completion_tokens", "output_tokens")),
        ):
            v = next((use[n] for n in names if isinstance(use.get(n), int)), None)
            if v is None:
                out[f"{key}_missing"] = out.get(f"{key}_missing", 0) + 1  # a call without it
            else:
                out[key] += max(v, 0)
    return out


def _reward_of(res: dict[str, Any], scores: list[Any]) -> object:
    rewards = res.get("rewards")
    if isinstance(rewards, dict) and "reward" in rewards:
        return rewards.get("reward")
    if "reward" in res or res.get("kind") != "reference-result":
        return res.get("reward")
    # a gold run's evidence: the verifier line of its trajectory, else what it was gated on
    if scores:
        return scores[-1]
    passed = str(res.get("status") or "").lower() in ("pass", "passed")
    return res.get("expected_reward") if passed else None


def _unread_files(rollout: Path) -> list[str]:
    return [
        rel
        for f in sorted(rollout.rglob("*"))
        if f.is_file() and (rel := f.relative_to(rollout).as_posix()) not in READ_FILES
    ][:200]


def import_rollout(
    rollout: Path,
    *,
    role: AgentRole = AgentRole.student,
    skill: SkillRef | None = None,
    job: str | None = None,
) -> RunRecord:
    # long: one pass over a rollout dir's files in a fixed order, each tolerating its own absence (design 180)
    """One rollout dir → a run record (never raises for bad or missing files)."""
    result, why = read_json(rollout / RESULT)
    gold = result is None and (rollout / GOLD_RESULT).is_file()
    if gold:
        result, why = read_json(rollout / GOLD_RESULT)
    res = result or {}
    config, config_why = read_json(rollout / RUN_CONFIG)
    cfg = config or {}
    warnings: list[str] = []
    if config is None and config_why and "missing" not in config_why:
        warnings.append(config_why)
    unmapped: dict[str, int] = {}
    for key in sorted(set(res) - _RESULT_FIELDS - set(_KEPT_FIELDS)):
        if res[key] not in (None, {}, [], ""):  # an empty field carries nothing to lose
            unmapped[f"result.json:{key}"] = 1
    for key in sorted(set(cfg) - _CONFIG_FIELDS):
        if cfg[key] not in (None, {}, [], ""):
            unmapped[f"run_config.json:{key}"] = 1
    rounds = _read_rounds(rollout / USER_ROUNDS, warnings)
    traj_path = rollout / TRAJECTORY
    if gold and not traj_path.is_file():
        traj_path = rollout / GOLD_TRAJECTORY
    events_raw, traj_why = _read_trajectory(traj_path)
    trajectory_state = "complete"
    if events_raw is None:
        trajectory_state = "missing"
    elif traj_why is not None or res.get("partial_trajectory"):
        trajectory_state = "partial"
    if traj_why and not (events_raw is None and rounds):
        warnings.append(traj_why)
    if res.get("partial_trajectory"):
        warnings.append("BenchFlow marked the trajectory partial")
    if events_raw is None and rounds:  # a multi-round run without ACP lines: keep the prompts
        events_raw = [{"type": "user_message", "text": r.get("prompt")} for r in rounds]
    llm = _llm_usage(rollout / LLM_TRAJECTORY, warnings)
    scores: list[Any] = []
    events = events_from_acp(events_raw or [], unmapped, scores)

    task = str(
        res.get("task_name") or res.get("task") or cfg.get("task_id") or rollout.name.split("__")[0]
    )
    error = res.get("error")
    category = res.get("error_category")
    status = str(res.get("status") or "").lower() or None
    timed_out = category in TIMEOUT_CATEGORIES or status in _TIMEOUT_STATUS
    reward = _reward_of(res, scores)
    rewards = res.get("rewards")
    if why is not None:
        warnings.append(f"{why}: the rollout did not finish")
        evaluation = verdict(None, infra_error=f"{why}: the rollout did not finish")
    else:
        infra = str(error) if error and category not in TIMEOUT_CATEGORIES else None
        verr = res.get("verifier_error")
        evaluation = verdict(
            reward,
            infra_error=f"[{category or status or 'error'}] {infra}" if infra else None,
            agent_timeout=timed_out,
            verifier_error=f"[{res.get('verifier_error_category')}] {verr}" if verr else None,
            verifier_timeout=res.get("verifier_error_category") == "verifier_timeout",
        )
        if not evaluation.verifier_output and (out := _verifier_stdout(rollout)):
            evaluation = evaluation.model_copy(update={"verifier_output": out})
        if rewards is not None and not isinstance(rewards, dict):
            warnings.append(f"rewards is {type(rewards).__name__}, not an object")
        if any(sc != reward for sc in scores):
            warnings.append(f"trajectory score(s) {scores} differ from result.json reward {reward}")
        if status in ("pass", "passed", "fail", "failed") and evaluation.state.value not in (
            "passed",
            "failed",
        ):
            warnings.append(
                f"result.json says status {status} but the record is {evaluation.state}"
            )
    ar = res.get("agent_result") if isinstance(res.get("agent_result"), dict) else {}
    assert isinstance(ar, dict)
    usage = res.get("token_usage") if isinstance(res.get("token_usage"), dict) else {}
    assert isinstance(usage, dict)
    timing = res.get("timing") if isinstance(res.get("timing"), dict) else {}
    assert isinstance(timing, dict)
    tool_usage = res.get("tool_usage") if isinstance(res.get("tool_usage"), dict) else {}
    assert isinstance(tool_usage, dict)

    def num(d: dict[str, Any], *keys: str) -> int:
        for key in keys:
            v = d.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                return v
        return 0

    usd = ar.get("cost_usd", res.get("cost_usd"))
    wall = timing.get("total", timing.get("duration_seconds"))

    def tokens(key: str, result_key: str, alias: str) -> int | None:
        """The result's count, else the token_usage block's, else the proxy log's sum when
        every logged call reported it; else unknown (null), never 0 (design 389)."""
        for d, keys in ((ar, (result_key,)), (usage, (key, alias))):
            for k in keys:
                v = d.get(k)
                if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                    return v
        if llm["calls"] and not llm.get(f"{key}_missing"):
            return llm[key]
        return None

    n_tools = num(res, "n_tool_calls") or sum(
        v for v in tool_usage.values() if isinstance(v, int) and v >= 0
    )
    cost = Cost(
        input_tokens=tokens("input_tokens", "n_input_tokens", "prompt_tokens"),
        output_tokens=tokens("output_tokens", "n_output_tokens", "completion_tokens"),
        model_calls=num(ar, "n_prompts") or num(res, "n_prompts") or llm["calls"],
        tool_calls=n_tools or sum(1 for e in events if e.kind == "tool_call"),
        wall_time_sec=float(wall) if isinstance(wall, int | float) and wall >= 0 else 0.0,
        usd=float(usd) if isinstance(usd, int | float) and usd >= 0 else None,
    )
    model = res.get("model") or cfg.get("model")
    agent = str(
        res.get("agent_name") or res.get("agent") or cfg.get("harness") or cfg.get("agent") or ""
    )
    if not agent and gold:
        agent = "oracle"  # a gold run is the task's reference solution: no agent, no model
    if not agent:
        agent = "unknown"
        warnings.append("no agent in result.json or run_config.json: recorded as 'unknown'")
    if not model and not gold and agent != "oracle":  # the oracle runs no model
        warnings.append("no model in result.json or run_config.json")
    started = res.get("started_at") or timing.get("started_at")
    ended = res.get("finished_at") or timing.get("ended_at")
    finished = parse_time(ended) or parse_time(started)
    if finished is None:  # deterministic, so a re-import is the same record
        finished = datetime.fromtimestamp(rollout.stat().st_mtime, UTC)
    n_skill = res.get("n_skill_invocations")
    if not isinstance(n_skill, int):
        n_skill = sum(1 for e in events if e.kind == "skill_load")
    skill_mode = res.get("skill_mode") or cfg.get("skill_mode")
    no_skill = str(skill_mode or "").replace("_", "-") in (
        "no-skill",
        "no-skills",
        "without-skills",
    )
    for name, n in unmapped.items():
        warnings.append(f"unmapped {name}" + (f" ({n} line(s))" if n > 1 else ""))
    record = RunRecord(
        run_id=run_id_for("benchflow", job or rollout.parent.name, rollout.name),
        task_id=task,
        agent_role=AgentRole.oracle if res.get("kind") == "reference-result" else role,
        model=ModelInfo(route=str(model or agent), name=str(model) if model else None),
        runtime=RuntimeInfo(
            harness=agent,
            runner="benchflow",
            sandbox=str(cfg.get("sandbox") or "benchflow"),
            skill=None if no_skill else skill,
        ),
        events=events,
        final_output=next(
            (e.content for e in reversed(events) if e.kind == "message" and e.role == "assistant"),
            None,
        ),
        stop_reason=str(category or (status if timed_out else None) or "")
        or ("final_answer" if why is None else None),
        evaluation=evaluation,
        cost=cost,
        warnings=warnings,
        reward_hack_evidence=verifier_touches(events),
        metadata={
            "importer": "benchflow",
            "source": str(rollout),
            "rollout_name": res.get("rollout_name") or res.get("trial_name") or rollout.name,
            "status": status,
            "skill_mode": skill_mode,
            "n_skill_invocations": n_skill,
            "error": error,
            "error_category": category,
            "verifier_error": res.get("verifier_error"),
            "verifier_error_category": res.get("verifier_error_category"),
            "verifier_started_after_agent": res.get("verifier_started_after_agent"),
            "trajectory": trajectory_state,
            "trajectory_source": res.get("trajectory_source"),
            "timing": timing,
            "tool_usage": tool_usage,
            "started_at": started,
            "finished_at": ended,
            "run_config": cfg,
            "user_rounds": rounds,
            "trajectory_scores": scores,
            "llm_trajectory": llm,
            "unmapped": unmapped,
            "kind": res.get("kind"),
            "checks": res.get("checks"),
            "expected_reward": res.get("expected_reward"),
            "oracle_run": read_json(rollout / ORACLE_RUN)[0],
            "unread_files": _unread_files(rollout),
            "result_extra": {k: res[k] for k in sorted(set(res) - _RESULT_FIELDS) if k in res},
        },
        created_at=finished,
    )
    return record


def _verifier_stdout(rollout: Path) -> str | None:
    """The tail of what the verifier printed (``verifier/test-stdout.txt``), untrusted."""
    try:
        text = (rollout / VERIFIER_STDOUT).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    return text[-_OUTPUT_CAP:] or None


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
