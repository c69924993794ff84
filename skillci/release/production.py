"""Production evidence: run records from deployments, ingested into the trace store.

A deployment writes one :class:`~skillci.trace.models.RunRecord` per request as a JSON line
(same schema as any trial; ``agent_role: production``; ``runtime.skill`` names the skill
version it loaded — see :func:`skillci.runtime.resolve`). Ingest validates the whole file
first and stores nothing when any line is bad, naming the line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from skillci.errors import InvalidInputError
from skillci.fsutil import load_json
from skillci.release.models import Sample
from skillci.trace.models import AgentRole, RunRecord, new_run_id
from skillci.trace.store import TraceStore


@dataclass
class IngestResult:
    """What ``skillci trace ingest`` did."""

    path: str
    records: int = 0
    stored: int = 0
    already: int = 0
    versions: dict[str, int] = field(default_factory=dict)


def parse_jsonl(path: Path) -> list[RunRecord]:
    """Every record of ``path``; the first bad line raises with its number."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InvalidInputError(f"cannot read {path}: {exc.strerror}", file=path) from None
    out: list[RunRecord] = []
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            data = load_json(line, file=path, line=n)
        except json.JSONDecodeError as exc:
            raise InvalidInputError(
                f"not JSON: {exc.msg}", file=path, line=n, hint="one RunRecord object per line"
            ) from None
        try:
            rec = RunRecord.model_validate(data)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(x) for x in err["loc"])
            raise InvalidInputError(
                f"not a RunRecord: {loc}: {err['msg']}",
                file=path,
                line=n,
                hint="see schemas/run-record.schema.json",
            ) from None
        if rec.agent_role is not AgentRole.production:
            raise InvalidInputError(
                f"run {rec.run_id} has agent_role {rec.agent_role.value}, not production",
                file=path,
                line=n,
                hint="deployments record agent_role: production",
            )
        if rec.runtime.skill is None or not rec.runtime.skill.version:
            raise InvalidInputError(
                f"run {rec.run_id} has no skill version (runtime.skill.version)",
                file=path,
                line=n,
                hint="record the version skillci.runtime.resolve() returned",
            )
        out.append(rec)
    return out


def ingest(store: TraceStore, path: Path) -> IngestResult:
    """Validate every line of ``path``, then store the records (idempotent per run id)."""
    records = parse_jsonl(path)
    res = IngestResult(path=str(path), records=len(records))
    for rec in records:
        if store.put(rec).created:
            res.stored += 1
        else:
            res.already += 1
        assert rec.runtime.skill is not None
        v = f"{rec.runtime.skill.name}@{rec.runtime.skill.version}"
        res.versions[v] = res.versions.get(v, 0) + 1
    return res


def as_production(
    record: RunRecord,
    *,
    run_id: str | None = None,
    created_at: datetime | None = None,
    request_id: str | None = None,
) -> RunRecord:
    """A trial record re-labelled as production traffic (for simulations and replays): new
    run id and time, ``agent_role: production``; the skill version is kept and required."""
    if record.runtime.skill is None:
        raise InvalidInputError(f"run {record.run_id} ran without a skill; no version to report")
    meta = dict(record.metadata)
    meta["replayed_from"] = record.run_id
    if request_id is not None:
        meta["request_id"] = request_id
    update: dict[str, object] = {
        "run_id": run_id or new_run_id(),
        "agent_role": AgentRole.production,
        "created_at": created_at or datetime.now(UTC),
        "metadata": meta,
        "trial_cache_key": None,
    }
    return RunRecord.model_validate({**record.model_dump(), **update})


def _sample(rec: RunRecord) -> Sample:
    return Sample(
        run_id=rec.run_id,
        task_id=rec.task_id,
        passed=rec.passed,
        tokens=rec.cost.tokens,
        latency_s=rec.cost.wall_time_sec,
    )


def request_key(rec: RunRecord) -> str:
    """One production request: its ``metadata.request_id``, else its run id."""
    rid = rec.metadata.get("request_id")
    return f"request:{rid}" if isinstance(rid, str) and rid else f"run:{rec.run_id}"


@dataclass
class Window:
    """Production samples per version inside [since, until), and what was left out."""

    samples: dict[str, list[Sample]]
    excluded: dict[str, int]


def window(
    store: TraceStore, skill: str, versions: list[str], since: datetime, until: datetime
) -> Window:
    """Samples of ``skill@version`` for each of ``versions`` created in [since, until),
    one per request (the first record of a request id; a step re-run after a kill records
    it again). Records of these versions outside the window, and repeated requests, are
    counted in ``excluded`` (before_window, after_window, duplicate_request), never dropped
    silently (docs/design/222-canary-window-and-requests.md)."""
    records = store.records(agent_role=AgentRole.production, skill_name=skill, newest_first=False)
    out: dict[str, list[Sample]] = {v: [] for v in versions}
    excluded: dict[str, int] = {}
    seen: set[str] = set()
    for rec in sorted(records, key=lambda r: (r.created_at, r.run_id)):
        if rec.runtime.skill is None or rec.runtime.skill.version not in out:
            continue
        at = rec.created_at  # always timezone-aware (RunRecord checks)
        why = "before_window" if at < since else "after_window" if at >= until else None
        if why is None:
            key = request_key(rec)
            if key in seen:
                why = "duplicate_request"
            seen.add(key)
        if why is not None:
            excluded[why] = excluded.get(why, 0) + 1
            continue
        out[rec.runtime.skill.version].append(_sample(rec))
    return Window(samples=out, excluded=excluded)


def samples(
    store: TraceStore, skill: str, version: str, since: datetime, until: datetime
) -> list[Sample]:
    """Production samples of ``skill@version`` created in [since, until), one per request."""
    return window(store, skill, [version], since, until).samples[version]
