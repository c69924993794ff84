"""The pydantic bases every shape derives from, defined once (imports nothing from skillci).

- :class:`StrictModel`: shapes skillci itself produces; an unknown key is a bug, not a newer
  version (``extra="forbid"``); fields with an alias also accept their Python name.
- :class:`FrozenModel`: a strict shape that is a value (hashable, never mutated): the gate's
  statistics and metrics.
- :class:`OpenModel`: shapes read from files others write (a skill's manifest, a task's
  config); unknown keys are kept, not rejected.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class FrozenModel(StrictModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class OpenModel(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)


__all__ = ["FrozenModel", "OpenModel", "StrictModel"]
