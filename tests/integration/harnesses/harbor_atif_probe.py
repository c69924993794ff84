"""Run with the Python of Harbor's own venv (not skillci's): does Harbor's ATIF model accept
these trajectories?

    <harbor venv>/bin/python harbor_atif_probe.py TRAJECTORY_JSON...

Prints one JSON document: per file, null when ``harbor.models.trajectories.Trajectory``
validates it, else the first line of the error; and the schema versions Harbor knows.
Imports only Harbor and the standard library; it is data for skillci's contract test.
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path


def main(argv: list[str]) -> int:
    from harbor.models.trajectories import Trajectory

    warnings.simplefilter("ignore")
    verdicts: dict[str, str | None] = {}
    for name in argv:
        try:
            Trajectory.model_validate(json.loads(Path(name).read_text(encoding="utf-8")))
            verdicts[name] = None
        except Exception as exc:
            verdicts[name] = str(exc).strip().splitlines()[0][:300] + " | " + str(exc)[:600]
    field = Trajectory.model_fields["schema_version"]
    known = list(getattr(field.annotation, "__args__", ()))
    print(json.dumps({"verdicts": verdicts, "versions": known}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
