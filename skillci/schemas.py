"""JSON Schemas of every saved shape, exported to ``schemas/`` and checked by a test.

Packages register their saved models in ``SAVED_MODELS`` lists; this module collects them.
"""

from __future__ import annotations

import importlib
import json

from pydantic import BaseModel

#: module path -> attribute holding {schema name: model}
REGISTRIES = [
    "skillci.skill.models:SAVED_MODELS",
    "skillci.skill.triggers:SAVED_MODELS",
    "skillci.gate.triggers:SAVED_MODELS",
    "skillci.tasks.models:SAVED_MODELS",
    "skillci.graders.models:SAVED_MODELS",
    "skillci.graders.calibrate:SAVED_MODELS",
    "skillci.trace.models:SAVED_MODELS",
    "skillci.patch:SAVED_MODELS",
    "skillci.analyze.models:SAVED_MODELS",
    "skillci.analyze.cluster:SAVED_MODELS",
    "skillci.compile.proposal:SAVED_MODELS",
    "skillci.compile.suite:SAVED_MODELS",
    "skillci.release.models:SAVED_MODELS",
    "skillci.providers.routes:SAVED_MODELS",
    "skillci.providers.cache:SAVED_MODELS",
    "skillci.runners.outcome:SAVED_MODELS",
    "skillci.runners.trialdir:SAVED_MODELS",
    "skillci.runners.regrade:SAVED_MODELS",
    "skillci.flows.rawtask:SAVED_MODELS",
    "skillci.trace.importers.common:SAVED_MODELS",
    "skillci.trace.importers.harbor:SAVED_MODELS",
    "skillci.compile.profile:SAVED_MODELS",
    "skillci.compile.static:SAVED_MODELS",
    "skillci.compile.fast:SAVED_MODELS",
    "skillci.flows.pipeline:SAVED_MODELS",
    "skillci.flows.describe:SAVED_MODELS",
]


def saved_models() -> dict[str, type[BaseModel]]:
    out: dict[str, type[BaseModel]] = {}
    for entry in REGISTRIES:
        mod, attr = entry.split(":")
        out.update(getattr(importlib.import_module(mod), attr))
    return out


def schema_files() -> dict[str, bytes]:
    return {
        f"{name}.schema.json": (
            json.dumps(model.model_json_schema(by_alias=True), indent=2, sort_keys=True) + "\n"
        ).encode()
        for name, model in sorted(saved_models().items())
    }
