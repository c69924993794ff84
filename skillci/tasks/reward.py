"""The reward convention and the ``/logs`` mapping of a trial.

Ecosystem convention (SkillsBench/Harbor/BenchFlow): the verifier ``tests/test.sh`` writes a
float to ``/logs/verifier/reward.txt`` (or a JSON object to ``/logs/verifier/reward.json``);
the agent's logs go to ``/logs/agent/``. skillci runs trials outside a container, so each
trial has its own logs root, and ``/logs`` is mapped onto it in one of two ways:

1. **Bind mount** (sandboxed runs): the runner mounts ``<trial>/logs`` at ``/logs`` inside
   bubblewrap/docker; the script is unchanged.
2. **Environment + rewrite** (no sandbox): the runner sets ``LOGS_DIR`` and
   ``SKILLCI_LOGS_DIR`` to ``<trial>/logs`` (see :func:`verifier_env`) and runs a copy of the
   script in which literal ``/logs`` paths were rewritten (:func:`rewrite_logs_paths`).

Scripts written for skillci should use ``"${LOGS_DIR:-/logs}/verifier/reward.txt"``, which
works under both. :func:`read_reward` then reads ``<logs root>/verifier/``.

A missing or unreadable reward is never a silent pass or fail: it is ``RewardState.missing``
or ``RewardState.parse_error`` with the reason, and ``Reward.passed`` is ``None``.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from skillci.fsutil import MAX_JSON_DEPTH, json_depth
from skillci.tasks.models import DEFAULT_PASS_THRESHOLD, Reward, RewardState

#: Where the ecosystem's scripts expect logs inside the environment.
CONTAINER_LOGS_ROOT = "/logs"
#: Environment variables pointing at a trial's logs root (both are set; scripts may use either).
LOGS_ENV = "LOGS_DIR"
SKILLCI_LOGS_ENV = "SKILLCI_LOGS_DIR"

REWARD_TXT = "reward.txt"
REWARD_JSON = "reward.json"

#: Largest reward file we read; anything bigger is a verifier bug, not a reward.
_MAX_REWARD_BYTES = 1 << 20


class LogsLayout(BaseModel):
    """A trial's own logs dirs, standing in for ``/logs``, ``/logs/agent``, ``/logs/verifier``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    root: Path = Field(description="Stands in for /logs.")
    agent: Path = Field(description="Stands in for /logs/agent.")
    verifier: Path = Field(description="Stands in for /logs/verifier.")

    @property
    def reward_txt(self) -> Path:
        return self.verifier / REWARD_TXT

    @property
    def reward_json(self) -> Path:
        return self.verifier / REWARD_JSON

    def ensure(self) -> LogsLayout:
        """Create the three dirs (idempotent) and return self."""
        for d in (self.root, self.agent, self.verifier):
            d.mkdir(parents=True, exist_ok=True)
        return self


def logs_layout(trial_dir: Path) -> LogsLayout:
    """The logs layout of a trial dir: ``<trial>/logs/{agent,verifier}``."""
    root = trial_dir / "logs"
    return LogsLayout(root=root, agent=root / "agent", verifier=root / "verifier")


def verifier_env(layout: LogsLayout) -> dict[str, str]:
    """Environment entries a runner adds when it runs a verifier (or agent) for this trial."""
    return {LOGS_ENV: str(layout.root), SKILLCI_LOGS_ENV: str(layout.root)}


_LOGS_PATH_RE = re.compile(r"(?<![\w.}/)\]$~-])/logs(?![\w.-])")


def rewrite_logs_paths(script: str, logs_root: Path) -> str:
    """Replace literal ``/logs`` path prefixes in ``script`` with ``logs_root``.

    Only a ``/logs`` that starts a path is replaced (``/var/logs``, ``./logs``,
    ``$X/logs``, ``${X}/logs`` and ``/logsfoo`` are left alone). Use on a *copy* of the
    verifier script when no sandbox can bind-mount the trial's logs at ``/logs``.
    """
    root = str(logs_root).rstrip("/") or "/"
    return _LOGS_PATH_RE.sub(lambda _m: root, script)


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    f = float(value)
    return f if math.isfinite(f) else None


def primary_reward(rewards: dict[str, Any], primary: str | None = None) -> tuple[float | None, str]:
    """(the primary reward, how it was chosen) of a verifier's named rewards.

    A task may report several named rewards (``{"correctness": 1, "performance": 0.4}``).
    Rule, in order: the task's declared primary metric (``primary``); the key ``reward``; the
    only numeric key; else the *minimum* of the numeric rewards (a trial passes only when every
    dimension reaches the threshold). ``(None, why)`` when no value is a finite number.
    See docs/design/387-multi-dimensional-rewards.md."""
    numeric = {k: v for k, v in rewards.items() if _finite(v) is not None}
    if primary is not None:
        if primary in numeric:
            return _finite(numeric[primary]), f"declared primary metric {primary!r}"
        return None, f"declared primary metric {primary!r} is not among {sorted(rewards)[:8]}"
    if "reward" in rewards:
        value = _finite(rewards["reward"])
        return value, "key 'reward'" if value is not None else "'reward' is not a number"
    if len(numeric) == 1:
        return _finite(next(iter(numeric.values()))), f"only key {next(iter(numeric))!r}"
    if not numeric:
        return None, f"no numeric reward among {sorted(rewards)[:8]}"
    values = [v for v in (_finite(x) for x in numeric.values()) if v is not None]
    return min(values), f"minimum of {len(values)} named rewards ({', '.join(sorted(numeric))})"


def _read_text(path: Path) -> str:
    with path.open("rb") as fh:
        data = fh.read(_MAX_REWARD_BYTES + 1)
    if len(data) > _MAX_REWARD_BYTES:
        raise ValueError(f"larger than {_MAX_REWARD_BYTES} bytes")
    return data.decode("utf-8")


def _from_txt(path: Path, threshold: float) -> Reward:
    def bad(msg: str) -> Reward:
        return Reward(
            state=RewardState.parse_error, threshold=threshold, source=path, error=f"{path}: {msg}"
        )

    try:
        text = _read_text(path).strip()
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return bad(f"cannot read: {exc}")
    if not text:
        return bad("empty file; expected one number such as 1 or 0.0")
    try:
        value = float(text)
    except ValueError:
        return bad(f"expected one number, got {text[:60]!r}")
    if not math.isfinite(value):
        return bad(f"reward {text!r} is not finite")
    return Reward(state=RewardState.ok, value=value, threshold=threshold, source=path)


def _from_json(path: Path, threshold: float, primary: str | None = None) -> Reward:
    def bad(msg: str) -> Reward:
        return Reward(
            state=RewardState.parse_error, threshold=threshold, source=path, error=f"{path}: {msg}"
        )

    try:
        data = json.loads(_read_text(path))
        if json_depth(data) > MAX_JSON_DEPTH:
            return bad(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    except RecursionError:
        return bad(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return bad(f"not valid JSON: {exc}")
    details: dict[str, Any] = {}
    if isinstance(data, dict):
        details = {k: v for k, v in data.items() if k != "reward"}
        if primary is not None:
            raw, how = primary_reward(data, primary)
            if raw is None:
                return bad(f"{how}; fix [verifier] primary_metric or the verifier's keys")
            details["primary_reward"] = how
        elif "reward" in data:
            raw = data["reward"]
        else:
            numeric = [v for v in data.values() if _finite(v) is not None]
            if len(numeric) > 1:
                return bad(
                    f"multi-dimensional reward (keys {', '.join(sorted(data)[:8])}): skillci "
                    'scores one number; add "reward": <number> to reward.json (the other keys '
                    "are kept as details)"
                )
            if len(data) != 1 or len(numeric) != 1:
                return bad(
                    'expected {"reward": <number>} or a single numeric key, '
                    f"got keys {sorted(data)[:8]}"
                )
            raw = numeric[0]
    else:
        raw = data
    value = _finite(raw)
    if value is None:
        return bad(f"reward {raw!r} is not a finite number")
    return Reward(
        state=RewardState.ok, value=value, threshold=threshold, source=path, details=details
    )


def read_reward(
    logs_dir: Path, *, threshold: float = DEFAULT_PASS_THRESHOLD, primary: str | None = None
) -> Reward:
    """Read the reward a verifier wrote under ``logs_dir`` (the trial's stand-in for ``/logs``).

    Looks in ``logs_dir/verifier/`` for ``reward.txt`` then ``reward.json``. If both exist
    they must agree, else the result is a ``parse_error``. ``passed`` is
    ``value >= threshold`` (default 1.0: SkillsBench rewards are binary). Named rewards
    without a ``reward`` key are an error naming the format unless ``primary`` (the task's
    declared primary metric) picks one (:func:`primary_reward`; all are kept in details).
    """
    vdir = logs_dir / "verifier"
    txt, js = vdir / REWARD_TXT, vdir / REWARD_JSON
    have_txt, have_json = txt.is_file(), js.is_file()
    if not have_txt and not have_json:
        return Reward(
            state=RewardState.missing,
            threshold=threshold,
            error=f"no {REWARD_TXT} or {REWARD_JSON} in {vdir}",
        )
    if have_txt and have_json:
        a, b = _from_txt(txt, threshold), _from_json(js, threshold, primary)
        if a.state is RewardState.ok and b.state is RewardState.ok and a.value != b.value:
            return Reward(
                state=RewardState.parse_error,
                threshold=threshold,
                source=txt,
                error=f"{txt} says {a.value} but {js} says {b.value}",
            )
        if a.state is RewardState.ok:
            return a.model_copy(update={"details": b.details})
        return a
    return _from_txt(txt, threshold) if have_txt else _from_json(js, threshold, primary)


__all__ = [
    "CONTAINER_LOGS_ROOT",
    "LOGS_ENV",
    "REWARD_JSON",
    "REWARD_TXT",
    "SKILLCI_LOGS_ENV",
    "LogsLayout",
    "logs_layout",
    "primary_reward",
    "read_reward",
    "rewrite_logs_paths",
    "verifier_env",
]
