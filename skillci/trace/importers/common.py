"""Shared pieces of the importers: run ids, times, verdicts, the import report."""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillci.fsutil import load_json
from skillci.tasks.models import DEFAULT_PASS_THRESHOLD, Reward, RewardState
from skillci.trace.evaluation import evaluation_from_reward
from skillci.trace.models import EvalState, Evaluation, Event, RunRecord

_ID_BAD = re.compile(r"[^A-Za-z0-9._:@+-]+")
#: A path in tool arguments that belongs to the verifier: a tests/ dir, test.sh, anything named
#: verifier*, or the reward/score files a verifier writes.
_VERIFIER_PATH = re.compile(
    r"(?:^|[\s/'\"=:(])("
    r"tests?/[^\s'\"]*|test\.sh|[\w./-]*verifier[\w./-]*|[\w./-]*(?:reward|score)\.(?:txt|json)"
    r")",
    re.IGNORECASE,
)
#: what :func:`verifier_paths` reads the pattern with: runs of the characters its third and fourth
#: alternatives start with, and the words those must reach
_TOKEN_RUN = re.compile(r"[\w./-]+", re.IGNORECASE)
_TOKEN_END = re.compile(r"verifier|(?:reward|score)\.(?:txt|json)", re.IGNORECASE)
_LITERAL_START = re.compile(r"tests?/|test\.sh", re.IGNORECASE)
_PREFIX = re.compile(r"[\s/'\"=:(]")


def verifier_paths(text: str) -> list[str]:
    """``[m.group(1) for m in _VERIFIER_PATH.finditer(text)]`` in linear time (design 468).

    ``re`` tries the pattern at every position, and at each the ``[\\w./-]*`` of its last two
    alternatives reads the rest of the run of path characters before failing: 8,000 ``/`` in a
    tool call's arguments took 0.69 s, growing with the square of the run. Here the pattern is tried only where it can match:
    where a ``test/``, ``tests/`` or ``test.sh`` begins the path, or where the rest of its run
    still holds a ``verifier`` or a reward or score file (then it matches: the greedy run
    reaches it). Elsewhere the try is known to fail and is skipped."""
    n = len(text)
    last_word = [-1] * (n + 1)  # the last start of a word _TOKEN_END finds in this run
    for run in _TOKEN_RUN.finditer(text):
        last = max(
            (w.start() for w in _TOKEN_END.finditer(text, run.start(), run.end())), default=-1
        )
        last_word[run.start() : run.end()] = [last] * (run.end() - run.start())
    out: list[str] = []
    p = 0
    while p < n:
        starts = ([p] if p == 0 else []) + ([p + 1] if _PREFIX.match(text, p) else [])
        if any(_LITERAL_START.match(text, g) or last_word[g] >= g for g in starts):
            m = _VERIFIER_PATH.match(text, p)
            if m:
                out.append(m.group(1))
                p = max(m.end(), p + 1)
                continue
        p += 1
    return out


#: Tool names that change files (matched as substrings of the lower-cased name).
_WRITE_TOOLS = ("write", "edit", "patch", "replace", "create", "delete", "remove", "move")
#: Shell commands that change files: redirections, in-place edits, copies, moves, deletes.
_SHELL_WRITE = re.compile(
    r"(?:[^<>=!]>{1,2}\s*[^\s&>|]|\bsed\s+(?:-\w+\s+)*-i|\btee\b|\b(?:rm|mv|cp|truncate|chmod|"
    r"touch|ln|install|dd)\s|\bopen\([^)]*['\"][wa]\+?['\"]|write_text|write_bytes)"
)


def touch_kind(tool: str, text: str) -> str:
    """``write`` when the call changes files (a writing tool, or a shell command that
    redirects, edits in place, copies, moves or deletes), else ``read``."""
    name = tool.lower()
    if any(w in name for w in _WRITE_TOOLS) or _SHELL_WRITE.search(text):
        return "write"
    return "read"


def verifier_touches(events: list[Event], *, reads: bool = True) -> list[str]:
    """Reward-hack evidence: each tool call whose arguments name a verifier or test file, as
    ``step N: tool (write|read) -> paths`` (reads are listed too: the verifier is not the
    agent's; consumers weigh a write as tampering and a read as a warning). ``reads=False``:
    writes only (skillci's own runners: design 252)."""
    found: list[str] = []
    for ev in events:
        if ev.kind != "tool_call":
            continue
        text = json.dumps(getattr(ev, "arguments", {}), sort_keys=True, default=str)
        text = text.encode().decode("unicode_escape", errors="replace")
        hits = sorted({path.rstrip(".,;)") for path in verifier_paths(text)})
        if hits:
            tool = str(getattr(ev, "tool", "?"))
            kind = touch_kind(tool, text)
            if kind == "read" and not reads:
                continue
            found.append(f"step {ev.step}: {tool} ({kind}) -> {', '.join(hits)[:300]}")
    return found


def run_id_for(prefix: str, *parts: str) -> str:
    """A stable, valid run id from path parts (re-importing yields the same id)."""
    text = "-".join(_ID_BAD.sub("_", p).strip("_") for p in parts if p)
    rid = f"{prefix}-{text}" if text else prefix
    return rid[:200]


def parse_time(value: object) -> datetime | None:
    """ISO-ish timestamps as the harnesses write them; naive ones are local time."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip().replace("Z", "+00:00")
    try:
        dt = datetime.fromisoformat(text)
    except ValueError:
        return None
    return (dt.astimezone() if dt.tzinfo is None else dt).astimezone(UTC)


def refuse_links(root: Path) -> None:
    """Refuse a job dir holding any symlink (exit 2, naming it): a job dir from another
    machine is attacker-controlled, and a link would make the importer store a host file
    (``verifier/test-stdout.txt -> /etc/passwd``) or read outside the job dir."""
    from skillci.errors import InvalidInputError

    stack = [root]
    while stack:
        with os.scandir(stack.pop()) as it:
            for entry in it:
                if entry.is_symlink():
                    raise InvalidInputError(
                        f"symlink to {os.readlink(entry.path)}: a job dir is imported only as "
                        "the files inside it",
                        file=entry.path,
                        hint="harnesses write no links; remove it, or import a clean copy",
                    )
                if entry.is_dir(follow_symlinks=False):
                    stack.append(Path(entry.path))


def read_json(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """(object, None) or (None, why it is unusable)."""
    try:
        data = load_json(path.read_text(encoding="utf-8"), file=path)
    except FileNotFoundError:
        return None, f"{path.name} is missing"
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return None, f"{path.name} is unreadable: {exc}"
    if not isinstance(data, dict):
        return None, f"{path.name} is not a JSON object"
    return data, None


def verdict(
    reward: object,
    *,
    infra_error: str | None = None,
    agent_timeout: bool = False,
    verifier_error: str | None = None,
    verifier_timeout: bool = False,
    threshold: float = DEFAULT_PASS_THRESHOLD,
) -> Evaluation:
    """The evaluation of an imported trial, by these rules (first that applies):

    1. an infrastructure error (the harness, sandbox or provider failed) → ``infra_error``;
    2. the verifier timed out → ``timeout``; the verifier failed → ``verifier_error``;
    3. no numeric reward → ``timeout`` when the agent timed out, else ``verifier_error``;
    4. the reward against the threshold → ``passed`` / ``failed`` (an agent timeout with a
       reward keeps the verifier's verdict, as in the local runner).
    """
    value = reward if isinstance(reward, int | float) and not isinstance(reward, bool) else None
    if infra_error is not None:
        return Evaluation(
            state=EvalState.infra_error,
            reward=float(value) if value is not None else None,
            threshold=threshold,
            verifier_output=infra_error[-4000:],
        )
    if verifier_timeout or verifier_error is not None:
        return Evaluation(
            state=EvalState.timeout if verifier_timeout else EvalState.verifier_error,
            threshold=threshold,
            verifier_output=(verifier_error or "verifier timed out")[-4000:],
        )
    if value is None:
        why = "the agent timed out and no reward was written" if agent_timeout else "no reward"
        return Evaluation(
            state=EvalState.timeout if agent_timeout else EvalState.verifier_error,
            threshold=threshold,
            verifier_output=why,
        )
    rew = Reward(state=RewardState.ok, value=float(value), threshold=threshold)
    return evaluation_from_reward(rew)


class ImportReport(BaseModel):
    """What ``skillci trace import`` found and stored."""

    model_config = ConfigDict(extra="forbid")

    schema_version: int = Field(default=1, description="Shape version.")
    format: str = Field(description="benchflow, harbor, claude-code, codex or opencode.")
    source: str = Field(description="The directory imported.")
    trials: int = Field(description="Trial dirs found.")
    stored: int = Field(default=0, description="Records newly stored.")
    already: int = Field(default=0, description="Records the store already had.")
    states: dict[str, int] = Field(default_factory=dict, description="Trials per state.")
    warnings: list[str] = Field(default_factory=list, description="Per-trial caveats.")
    unmapped: dict[str, int] = Field(
        default_factory=dict,
        description="Source fields/event types with no place in the run record: name -> trials.",
    )
    reward_hack_suspects: int = Field(
        default=0, description="Trials with tool calls that touched verifier/test files."
    )
    forged_passes: int = Field(
        default=0,
        description="Passed trials that wrote verifier/test files (the gate counts them failed).",
    )
    jobs: list[dict[str, Any]] = Field(
        default_factory=list,
        description=(
            "Job-level settings read (retry policy, concurrency, attempts) and the job keys "
            "not read, one per job (Harbor's <job>/config.json and result.json)."
        ),
    )


SAVED_MODELS: dict[str, type[BaseModel]] = {"import-report": ImportReport}


def summarize(fmt: str, source: Path, records: list[RunRecord]) -> ImportReport:
    states: dict[str, int] = {}
    for r in records:
        states[r.evaluation.state.value] = states.get(r.evaluation.state.value, 0) + 1
    warnings = [f"{r.run_id}: {w}" for r in records for w in r.warnings]
    unmapped: dict[str, int] = {}
    for r in records:
        for name in r.metadata.get("unmapped") or {}:
            unmapped[name] = unmapped.get(name, 0) + 1
    return ImportReport(
        format=fmt,
        source=str(source),
        trials=len(records),
        states=states,
        warnings=warnings,
        unmapped=dict(sorted(unmapped.items())),
        reward_hack_suspects=sum(1 for r in records if r.reward_hack_evidence),
        forged_passes=sum(1 for r in records if r.forged_pass),
        jobs=_jobs(records),
    )


def _jobs(records: list[RunRecord]) -> list[dict[str, Any]]:
    seen: dict[str, dict[str, Any]] = {}
    for r in records:
        job = r.metadata.get("job")
        if isinstance(job, dict):
            key = json.dumps(job, sort_keys=True, default=str)
            seen.setdefault(key, job)
    return list(seen.values())


__all__ = [
    "SAVED_MODELS",
    "ImportReport",
    "parse_time",
    "read_json",
    "refuse_links",
    "run_id_for",
    "summarize",
    "verdict",
    "verifier_touches",
]
