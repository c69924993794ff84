"""Run with the Python of Harbor's own venv (not skillci's): what Harbor makes of the
environment part of a ``harbor run`` command line, and what its credential preflight says.

    <harbor venv>/bin/python harbor_env_probe.py JSON

JSON: ``{"environment": "-e value", "kwargs": ["K=V", ...], "credentials": [[VAR, ...], ...]}``.
Prints one JSON document: the ``EnvironmentConfig`` Harbor's own model validates from them
(as ``harbor run`` resolves ``-e`` and ``--ek``), and the preflight's verdict with no
credential set, and with each group of ``credentials`` set alone (dummy values, ``HOME`` an
empty dir). Imports only Harbor and the standard library; it is data for the test.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile


def _preflight(
    env_type: object, import_path: str | None, names: list[str], set_: list[str]
) -> str | None:
    """None when Harbor's preflight passes, else its message."""
    from harbor.environments.factory import EnvironmentFactory

    saved = dict(os.environ)
    try:
        for n in names:
            os.environ.pop(n, None)
        os.environ["HOME"] = tempfile.mkdtemp()
        for n in set_:
            os.environ[n] = "dummy-" + n.lower()
        EnvironmentFactory.run_preflight(type=env_type, import_path=import_path)  # type: ignore[arg-type]
        return None
    except SystemExit as exc:
        return str(exc)
    finally:
        os.environ.clear()
        os.environ.update(saved)


def main(arg: str) -> int:
    from harbor.cli.utils import parse_kwargs, resolve_environment_spec
    from harbor.models.trial.config import EnvironmentConfig

    req = json.loads(arg)
    env_type, import_path = resolve_environment_spec(req["environment"])
    cfg = EnvironmentConfig.model_validate(
        {"type": env_type, "import_path": import_path, "kwargs": parse_kwargs(req["kwargs"])}
    )
    groups: list[list[str]] = req["credentials"]
    names = sorted({n for g in groups for n in g})
    out = {
        "config": json.loads(cfg.model_dump_json()),
        "without": _preflight(cfg.type, cfg.import_path, names, []),
        "with": [_preflight(cfg.type, cfg.import_path, names, g) for g in groups],
        "partial": [
            _preflight(cfg.type, cfg.import_path, names, g[:-1]) for g in groups if len(g) > 1
        ],
    }
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
