"""The resumable compile pipeline and its stages (static compile, Fast, Deep).

Each stage is also a standalone command (``skillci compile static|fast|deep``); the
pipeline (``skillci pipeline``) runs them in the seed's order between evaluations, in
one run dir with an atomic ``manifest.json`` (see docs/pipeline.md).

- ``fsio``: skill inputs, atomic directory publish, run-record loading
- ``trials``: trials into ``test-NNN`` dirs, resumable (complete dirs reused)
- ``static_stage``, ``fast_stage``, ``deep_stage``: the stages' I/O around
  ``skillci.compile.static|fast|deep``
- ``manifest``, ``run``, ``repo``: the pipeline, its manifest and its pull request
  (``repo`` takes a plain :class:`~skillci.flows.pipeline.repo.CandidateRun`, so ``run``
  imports ``repo`` and never the other way round)
"""

from __future__ import annotations

from skillci.flows.pipeline.deep_stage import DeepState
from skillci.flows.pipeline.manifest import RunManifest

#: Saved shapes of this package, exported as JSON Schemas (see skillci.schemas).
SAVED_MODELS = {"deep-state": DeepState, "pipeline-manifest": RunManifest}

__all__ = ["SAVED_MODELS"]
