"""Client of an AgentRM-compatible reward-model service (HTTP, loopback by default).

Contract (docs/design/102):

- ``GET /health`` -> ``{"status": "ok", "device": "cuda:0", "max_length": 8192}``
- ``POST /score`` with ``{"trajectories": [{"id": str, "task": str, "messages": [...]}]}``
  -> ``{"scores": [float, ...]}``, one finite score per trajectory, in order; higher is
  better. ``messages`` are OpenAI-style chat turns built from the run record
  (:func:`trajectory_messages`): the task, then each tool call and its result, then the
  final answer; each turn is clipped so the whole fits the service's ``max_length``.

httpx with explicit timeouts; connection errors, timeouts and 5xx answers are retried with
exponential backoff (tenacity). A service that is down, unhealthy or answers nonsense is a
:class:`RewardModelError` with a hint to start it or pass ``--no-rm``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from tenacity import (
    RetryError,
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    wait_exponential_jitter,
)

from skillci.errors import RewardModelError
from skillci.trace.models import MessageEvent, RunRecord, ToolCallEvent, ToolResultEvent

DEFAULT_RM_URL = "http://127.0.0.1:28080"
#: Characters per token assumed when clipping to the service's max_length.
CHARS_PER_TOKEN = 3


class RMHealth(BaseModel):
    """``GET /health``."""

    model_config = ConfigDict(extra="allow")

    status: str = Field(description="ok when the model is loaded.")
    device: str | None = Field(default=None, description="Where the model runs.")
    max_length: int | None = Field(default=None, gt=0, description="Tokens per trajectory.")


class RMScores(BaseModel):
    """``POST /score`` answer."""

    model_config = ConfigDict(extra="allow")

    scores: list[float]


def _clip(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit // 2] + " … " + text[-limit // 2 :]


def trajectory_messages(record: RunRecord, max_chars: int = 24_000) -> list[dict[str, str]]:
    """The run as chat turns (system prompt left out: it is the skill, not the agent)."""
    turns: list[dict[str, str]] = []
    for ev in record.events:
        if isinstance(ev, MessageEvent) and ev.role in ("user", "assistant") and ev.content:
            turns.append({"role": ev.role, "content": ev.content})
        elif isinstance(ev, ToolCallEvent):
            args = json.dumps(ev.arguments, sort_keys=True, ensure_ascii=False)
            turns.append({"role": "assistant", "content": f"[call {ev.tool}] {args}"})
        elif isinstance(ev, ToolResultEvent):
            head = f"[exit {ev.exit_code}] " if ev.exit_code is not None else ""
            turns.append({"role": "tool", "content": head + (ev.error or ev.output)})
    if record.final_output and not (turns and turns[-1]["content"] == record.final_output):
        turns.append({"role": "assistant", "content": record.final_output})
    per = max(200, max_chars // max(1, len(turns)))
    return [{"role": t["role"], "content": _clip(t["content"], per)} for t in turns]


def _transient(exc: BaseException) -> bool:
    if isinstance(exc, httpx.TransportError):
        return True
    return isinstance(exc, httpx.HTTPStatusError) and exc.response.status_code >= 500


class RewardModelClient:
    """Talks to one reward-model service."""

    def __init__(
        self,
        base_url: str = DEFAULT_RM_URL,
        *,
        timeout: float = 60.0,
        connect_timeout: float = 5.0,
        retries: int = 3,
        backoff: float = 0.5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.retries = retries
        self.backoff = backoff
        self.client = httpx.Client(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout, connect=connect_timeout),
            transport=transport,
        )

    def close(self) -> None:
        self.client.close()

    def __enter__(self) -> RewardModelClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _request(self, method: str, path: str, payload: Any = None) -> Any:
        retrying = Retrying(
            retry=retry_if_exception(_transient),
            stop=stop_after_attempt(self.retries),
            wait=wait_exponential_jitter(multiplier=self.backoff, max=8, jitter=self.backoff),
            reraise=False,
        )

        def once() -> Any:
            resp = self.client.request(method, path, json=payload)
            resp.raise_for_status()
            return resp.json()

        try:
            return retrying(once)
        except RetryError as exc:
            last = exc.last_attempt.exception()
            raise RewardModelError(
                f"reward model at {self.base_url} failed after {self.retries} attempts: "
                f"{type(last).__name__}: {str(last).splitlines()[0][:200] if last else ''}",
            ) from None
        except httpx.HTTPStatusError as exc:
            raise RewardModelError(
                f"reward model at {self.base_url}{path} answered HTTP {exc.response.status_code}"
            ) from None
        except ValueError:
            raise RewardModelError(
                f"reward model at {self.base_url}{path} did not answer JSON"
            ) from None

    def health(self) -> RMHealth:
        data = self._request("GET", "/health")
        try:
            h = RMHealth.model_validate(data)
        except ValidationError:
            raise RewardModelError(
                f"reward model at {self.base_url}/health: unexpected answer"
            ) from None
        if h.status != "ok":
            raise RewardModelError(f"reward model at {self.base_url} reports status {h.status!r}")
        return h

    def score(self, records: Sequence[RunRecord], task: str, labels: Sequence[str]) -> list[float]:
        """One score per record (checks /health first, to clip to its max_length)."""
        h = self.health()
        max_chars = (h.max_length or 8192) * CHARS_PER_TOKEN
        payload = {
            "trajectories": [
                {"id": lab, "task": task, "messages": trajectory_messages(r, max_chars)}
                for lab, r in zip(labels, records, strict=True)
            ]
        }
        data = self._request("POST", "/score", payload)
        try:
            scores = RMScores.model_validate(data).scores
        except ValidationError:
            raise RewardModelError(
                f"reward model at {self.base_url}/score: no 'scores' list"
            ) from None
        if len(scores) != len(records) or not all(math.isfinite(s) for s in scores):
            raise RewardModelError(
                f"reward model at {self.base_url}/score returned {len(scores)} scores for "
                f"{len(records)} trajectories (or a non-finite one)"
            )
        return [float(s) for s in scores]


__all__ = [
    "CHARS_PER_TOKEN",
    "DEFAULT_RM_URL",
    "RMHealth",
    "RMScores",
    "RewardModelClient",
    "trajectory_messages",
]
