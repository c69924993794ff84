"""litellm custom provider ``sim``: the adapter between litellm and :mod:`.policy`.

Registered by :func:`register` (called lazily from ``skillci.providers.client``). Model ids:
``sim/student``, ``sim/teacher``, ``sim/judge`` and ``sim/guard``. Request knobs (``extra_body``): ``slip_rate`` (0..1,
per-trial probability of dropping each learned behaviour, seeded), ``context_window``
(tokens; default 32768 student / 200000 teacher). The seed comes from the request's
``seed`` (default 0). Usage is counted with the real tokenizer over the messages.
"""

from __future__ import annotations

import functools
import hashlib
import json
from collections.abc import Callable
from typing import Any

from skillci.providers.sim.guard import guard_answer
from skillci.providers.sim.judge import judge_answer
from skillci.providers.sim.policy import next_action
from skillci.providers.sim.transcript import read_transcript
from skillci.providers.sim.trigger import answer, unread_script
from skillci.skill.catalogue import parse_catalogue
from skillci.skill.tokens import count_tokens

PROVIDER = "sim"
ROLES = {"student": 32768, "teacher": 200000, "judge": 200000, "guard": 200000}


class OutOfDomain(Exception):
    """The simulator does not model this task: the trial is a model error, not a failure
    of the skill (docs/design/302)."""


def out_of_domain_message(role: str) -> str:
    return (
        f"sim/{role} models only the bundled repair tasks (a failing CI log or check "
        "command to work from); use a real route — docs/models.md"
    )


@functools.lru_cache(maxsize=8192)
def _tokens(text: str) -> int:
    return count_tokens(text)


def prompt_tokens(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
    total = 0
    for m in messages:
        content = m.get("content")
        total += 4 + _tokens(content if isinstance(content, str) else json.dumps(content or ""))
        for tc in m.get("tool_calls") or []:
            total += _tokens(json.dumps(tc, sort_keys=True))
    if tools:
        total += _tokens(json.dumps(tools, sort_keys=True))
    return total


def respond(
    model: str, messages: list[dict[str, Any]], optional_params: dict[str, Any]
) -> dict[str, Any]:
    """The sim's answer as an OpenAI-style response dict (no litellm needed)."""
    role = model.split("/")[-1]
    if role not in ROLES:
        raise ValueError(
            f"unknown sim model {model!r}; use sim/student, sim/teacher, sim/judge or sim/guard"
        )
    extra = optional_params.get("extra_body") or {}
    tools = optional_params.get("tools")
    window = int(extra.get("context_window") or ROLES[role])
    used = prompt_tokens(messages, tools)
    if used > window:
        raise OverflowError(f"prompt is {used} tokens; sim/{role} accepts {window}")
    seed = int(optional_params.get("seed") or 0)
    if role == "judge":  # the lexical rubric judge (skillci.providers.sim.judge)
        return _final(role, judge_answer(messages), used)
    if role == "guard":  # the lexical guard classifier (skillci.providers.sim.guard)
        return _final(role, guard_answer(messages), used)
    decision = trigger_answer(messages)
    if decision is not None:
        return _final(role, decision, used)
    tr = read_transcript(messages, tools)
    action = next_action(tr, role, seed, float(extra.get("slip_rate") or 0.0))
    if action.out_of_domain:
        raise OutOfDomain(out_of_domain_message(role))
    if action.final is not None:
        message: dict[str, Any] = {"role": "assistant", "content": action.final}
        finish, out_text = "stop", action.final
    else:
        args = json.dumps(action.args, sort_keys=True)
        call_id = (
            "call_" + hashlib.sha256(f"{seed}:{len(tr.steps)}:{args}".encode()).hexdigest()[:16]
        )
        message = {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": action.tool, "arguments": args},
                }
            ],
        }
        finish, out_text = "tool_calls", f"{action.tool}{args}"
    completion = _tokens(out_text) + 3
    return {
        "model": f"sim/{role}",
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
        "usage": {
            "prompt_tokens": used,
            "completion_tokens": completion,
            "total_tokens": used + completion,
        },
    }


def trigger_answer(messages: list[dict[str, Any]]) -> str | None:
    """The trigger decision when the request is one (a catalogue system prompt, then the
    user's request), else None (see :mod:`.trigger`). :class:`OutOfDomain` when the request
    is in a script the simulator does not read."""
    system = next((m for m in messages if m.get("role") == "system"), None)
    content = system.get("content") if system else None
    entries = parse_catalogue(content) if isinstance(content, str) else None
    if entries is None:
        return None
    users = [m.get("content") for m in messages if m.get("role") == "user"]
    query = users[-1] if users and isinstance(users[-1], str) else ""
    script = unread_script(query)
    if script is not None:
        raise OutOfDomain(
            f"the simulator cannot read {script} text (it matches Latin words and Chinese, "
            "Japanese or Korean characters only); use a real route for queries in that "
            "language — docs/simulator.md"
        )
    return answer(query, entries)


def _final(role: str, text: str, used: int) -> dict[str, Any]:
    return text_response(f"sim/{role}", text, used)


def text_response(model: str, text: str, used: int) -> dict[str, Any]:
    """An OpenAI-style response dict holding ``text``, ``used`` prompt tokens."""
    completion = _tokens(text) + 3
    return {
        "model": model,
        "choices": [
            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
        ],
        "usage": {
            "prompt_tokens": used,
            "completion_tokens": completion,
            "total_tokens": used + completion,
        },
    }


def add_provider(
    litellm: Any,
    provider: str,
    respond_fn: Callable[[str, list[dict[str, Any]], dict[str, Any]], dict[str, Any]],
) -> None:
    """Add an in-process provider to ``litellm.custom_provider_map`` (idempotent):
    ``respond_fn(model, messages, optional_params)`` gives an OpenAI-style response dict;
    an ``OverflowError`` is a context-window error, :class:`OutOfDomain` a model error."""
    if any(item.get("provider") == provider for item in litellm.custom_provider_map):
        return

    class InProcessLLM(litellm.CustomLLM):  # type: ignore[misc]
        """litellm CustomLLM answering from a function in this process."""

        def completion(
            self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
        ) -> Any:
            params = kwargs.get("optional_params") or {}
            try:
                data = respond_fn(model, messages, params)
            except OverflowError as exc:
                raise litellm.ContextWindowExceededError(
                    message=str(exc), model=model, llm_provider=provider
                ) from None
            except OutOfDomain as exc:  # not transient: no retry, a model error at once
                raise litellm.BadRequestError(
                    message=str(exc), model=model, llm_provider=provider
                ) from None
            return litellm.ModelResponse(**data)

        async def acompletion(
            self, model: str, messages: list[dict[str, Any]], *args: Any, **kwargs: Any
        ) -> Any:
            return self.completion(model, messages, *args, **kwargs)

    litellm.custom_provider_map = [
        *litellm.custom_provider_map,
        {"provider": provider, "custom_handler": InProcessLLM()},
    ]


def register(litellm: Any) -> None:
    """Add the ``sim`` provider to ``litellm.custom_provider_map`` (idempotent)."""
    add_provider(litellm, PROVIDER, respond)


__all__ = [
    "PROVIDER",
    "OutOfDomain",
    "add_provider",
    "out_of_domain_message",
    "prompt_tokens",
    "register",
    "respond",
    "text_response",
    "trigger_answer",
]
