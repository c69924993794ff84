"""``provider_routes.json``: route name -> the litellm parameters of one model.

A *route* is what ``--model``/``--teacher``/``--compiler`` name. Its ``model`` is a litellm
model string (``provider/model-id``); the route name is free-form, so seed names such as
``siliconflow/Qwen/Qwen3.5-27B`` (an OpenAI-compatible endpoint) or
``ali/deepseek-v4-pro-0813`` (DashScope's compatible mode) are just keys. API keys are never
stored: ``api_key_env`` names the environment variable that holds one.

The built-in simulator routes ``sim/student``, ``sim/teacher``, ``sim/judge``, ``sim/guard`` (and ``sim/student-noisy``)
always exist, so skillci works offline with no file at all; a file may override them.
``examples`` in the file are validated like routes but cannot be used until moved into
``routes`` (JSON has no comments; this is the commented-out form). See docs/models.md.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from skillci.errors import ConfigError

SCHEMA_VERSION = 1
ROUTES_FILE = "provider_routes.json"
ROUTES_ENV = "SKILLCI_PROVIDER_ROUTES"
#: litellm provider prefix of the embedded simulator (see skillci.providers.sim).
SIM_PROVIDER = "sim"


class ModelRoute(BaseModel):
    """How to call one model through litellm, plus what to record about it."""

    model_config = ConfigDict(extra="forbid")

    model: str = Field(description="litellm model string, provider/model-id (e.g. openai/gpt-4o).")
    api_base: str | None = Field(default=None, description="Endpoint URL for the provider.")
    api_key_env: str | None = Field(
        default=None, description="NAME of the env var holding the API key (never the key)."
    )
    temperature: float | None = Field(default=None, ge=0, le=2, description="Sampling temperature.")
    max_tokens: int | None = Field(default=None, gt=0, description="Completion tokens per call.")
    timeout: float = Field(default=120.0, gt=0, description="Seconds per call.")
    max_concurrency: int | None = Field(
        default=None,
        gt=0,
        description="Calls in flight at once on this route per command (None: as many as "
        "--parallel runs trials). Not part of the fingerprint: it changes no answer.",
    )
    input_cost_per_token: float | None = Field(
        default=None, ge=0, description="USD per prompt token, when litellm does not know it."
    )
    output_cost_per_token: float | None = Field(
        default=None, ge=0, description="USD per completion token, when litellm does not know it."
    )
    context_window: int | None = Field(default=None, gt=0, description="Tokens the model accepts.")
    quantization: str | None = Field(default=None, description="e.g. int8, bf16, Q4_K_M.")
    revision: str | None = Field(default=None, description="Model revision or snapshot id.")
    family: str | None = Field(default=None, description="Model family, e.g. open-weight-27b.")
    description: str | None = Field(default=None, description="What this route is for.")
    params: dict[str, Any] = Field(
        default_factory=dict,
        description="Extra litellm completion kwargs (e.g. top_p, extra_body). No secrets.",
    )
    client: Literal["auto", "litellm"] = Field(
        default="auto",
        description="auto: an openai/ route with an api_base (an OpenAI-compatible server) "
        "is called over HTTP directly when its params are chat-completions fields, every "
        "other route through litellm; litellm: always through litellm. Not part of the "
        "fingerprint: the request is the same.",
    )

    @field_validator("model")
    @classmethod
    def _provider_prefixed(cls, v: str) -> str:
        if "/" not in v or v.startswith("/") or v.endswith("/"):
            raise ValueError(f"{v!r} must be provider/model-id, e.g. openai/gpt-4o-mini")
        return v

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, v: str | None) -> str | None:
        if v is not None and not v.replace("_", "").isalnum():
            raise ValueError("must be an environment variable NAME such as OPENAI_API_KEY")
        return v

    @property
    def provider(self) -> str:
        return self.model.split("/", 1)[0]

    @property
    def model_id(self) -> str:
        return self.model.split("/", 1)[1]

    @property
    def is_sim(self) -> bool:
        return self.provider == SIM_PROVIDER

    def sampling_params(self) -> dict[str, Any]:
        """What is sent with every call besides messages/tools (recorded in run records)."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        out.update(self.params)
        return out

    def fingerprint(self) -> str:
        """Hash of everything that can change the model's answers (not timeouts or prices)."""
        from skillci.providers.sim import SIM_VERSION

        data = {
            "model": self.model,
            "api_base": self.api_base,
            "revision": self.revision,
            "quantization": self.quantization,
            "params": self.sampling_params(),
            "sim": SIM_VERSION if self.is_sim else None,
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


class RoutesFile(BaseModel):
    """The whole ``provider_routes.json``."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    schema_version: int = Field(default=SCHEMA_VERSION, description="File schema version.")
    comment: str | None = Field(default=None, alias="$comment", description="Free text.")
    routes: dict[str, ModelRoute] = Field(default_factory=dict, description="Usable routes.")
    examples: dict[str, ModelRoute] = Field(
        default_factory=dict, description="Validated but unusable until moved into routes."
    )


def _in_process(
    model: str,
    family: str,
    description: str,
    *,
    max_tokens: int = 2048,
    revision: str = "sim-v1",
    params: dict[str, Any] | None = None,
) -> ModelRoute:
    """A built-in route answered in skillci's process (``sim/*``, ``local/*``): free,
    deterministic, a 200k-token window."""
    return ModelRoute(
        model=model,
        temperature=0.0,
        max_tokens=max_tokens,
        context_window=200000,
        revision=revision,
        family=family,
        input_cost_per_token=0.0,
        output_cost_per_token=0.0,
        description=description,
        params=params or {},
    )


BUILTIN_ROUTES: dict[str, ModelRoute] = {
    "sim/student": ModelRoute(
        model="sim/student",
        temperature=0.0,
        max_tokens=1024,
        context_window=32768,
        quantization="int8",
        revision="sim-v1",
        family="simulated-weak-27b",
        input_cost_per_token=0.0,
        output_cost_per_token=0.0,
        description="Deterministic simulated weak student (docs/simulator.md).",
    ),
    "sim/student-noisy": ModelRoute(
        model="sim/student",
        temperature=0.7,
        max_tokens=1024,
        context_window=32768,
        quantization="int8",
        revision="sim-v1",
        family="simulated-weak-27b",
        input_cost_per_token=0.0,
        output_cost_per_token=0.0,
        params={"extra_body": {"slip_rate": 0.15}},
        description="The sim student ignoring each learned behaviour with p=0.15 per trial.",
    ),
    "sim/teacher": _in_process(
        "sim/teacher",
        "simulated-strong",
        "Deterministic simulated teacher (docs/simulator.md).",
        max_tokens=4096,
    ),
    "sim/judge": _in_process(
        "sim/judge",
        "simulated-lexical-judge",
        "Deterministic LEXICAL rubric judge: word overlap, not meaning (docs/simulator.md).",
    ),
    "sim/guard": _in_process(
        "sim/guard",
        "simulated-lexical-guard",
        "Deterministic LEXICAL guard classifier: action and object words in one sentence, no "
        "negation (docs/simulator.md).",
    ),
    "local/guard-ngram": _in_process(
        "local/guard-ngram",
        "learned-ngram-guard",
        "A LEARNED n-gram classifier for the guard's second opinion, trained on public attack "
        "collections' dev splits (design 444): adds needs-approval only; flags about 1% of "
        "real skills' CI sentences.",
        revision="ngram-v1",
    ),
    "local/guard-probe": _in_process(
        "local/guard-probe",
        "learned-probe-guard",
        "A LINEAR PROBE on Qwen2.5-Coder-1.5B's vectors of each text framed as a question "
        "about what obeying it would do, and of each of its sentences when the whole passes, for "
        "the guard's second opinion (designs 457, 460, 461): "
        "needs an OpenAI-compatible /embeddings server of that model (default "
        "http://127.0.0.1:8766/v1; extra_body embeddings_api_base, embeddings_model); adds "
        "needs-approval only; flags about 1% of real skills' CI sentences.",
        revision="probe-v3",
    ),
    "local/guard-ngram-wide": _in_process(
        "local/guard-ngram",
        "learned-ngram-guard",
        "local/guard-ngram at a lower threshold: flags about 5% of real skills' CI sentences, "
        "catches more (design 444).",
        revision="ngram-v1",
        params={"extra_body": {"percentile": "0.95"}},
    ),
    "local/guard-probe-wide": _in_process(
        "local/guard-probe",
        "learned-probe-guard",
        "local/guard-probe at a lower threshold: flags about 5% of real skills' CI sentences, "
        "catches more (design 460).",
        revision="probe-v3",
        params={"extra_body": {"percentile": "0.95"}},
    ),
    "local/guard-probe-recall": _in_process(
        "local/guard-probe",
        "learned-probe-guard",
        "local/guard-probe with an exemplar memory of later public sources' dev attacks beside "
        "it: a text nearer three of them than three benign texts of the probe's sample is "
        "flagged too (designs 470-472); opt-in: on round 21 it catches 9 more of 486 attacks "
        "and sends 5 more of 131 legitimate texts to a person.",
        revision="probe-v3+memory-v2",
        params={"extra_body": {"memory": True}},
    ),
}


def find_routes_file(start: Path | None = None) -> Path | None:
    """``$SKILLCI_PROVIDER_ROUTES``, else the nearest provider_routes.json upwards of start."""
    env = os.environ.get(ROUTES_ENV)
    if env:
        return Path(env)
    here = (start or Path.cwd()).resolve()
    for d in (here, *here.parents):
        cand = d / ROUTES_FILE
        if cand.is_file():
            return cand
    return None


def load_routes_file(path: Path) -> RoutesFile:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(
            "routes file not found", file=path, hint=f"unset {ROUTES_ENV} or create it"
        ) from None
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"invalid JSON: {exc.msg}", file=path, line=exc.lineno, col=exc.colno
        ) from None
    try:
        return RoutesFile.model_validate(data)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"])
        raise ConfigError(f"{loc}: {err['msg']}", file=path) from None


def load_routes(path: Path | None = None) -> dict[str, ModelRoute]:
    """Built-in routes overlaid with the routes file (explicit path or found upwards)."""
    routes = dict(BUILTIN_ROUTES)
    found = path or find_routes_file()
    if found is not None:
        routes.update(load_routes_file(found).routes)
    return routes


def resolve_route(name: str, path: Path | None = None) -> ModelRoute:
    """The route called ``name``; a clear error naming the alternatives otherwise."""
    routes = load_routes(path)
    if name in routes:
        return routes[name]
    found = path or find_routes_file()
    if found is not None and name in load_routes_file(found).examples:
        raise ConfigError(
            f"route {name!r} is only an example",
            file=found,
            hint="move it from 'examples' to 'routes' and set its api_key_env variable",
        )
    raise ConfigError(
        f"unknown model route {name!r}",
        file=found,
        hint=f"use one of {', '.join(sorted(routes))} or add it to {ROUTES_FILE}",
    )


SAVED_MODELS: dict[str, type[BaseModel]] = {"provider-routes": RoutesFile}

__all__ = [
    "BUILTIN_ROUTES",
    "ROUTES_FILE",
    "SAVED_MODELS",
    "ModelRoute",
    "RoutesFile",
    "find_routes_file",
    "load_routes",
    "load_routes_file",
    "resolve_route",
]
