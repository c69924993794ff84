#!/usr/bin/env bash
# Reference solution for cfg-two-typos-server: the minimal edit(s) a correct fix makes.
set -euo pipefail
python3 - <<'PY'
import json
from pathlib import Path

for path, old, new in json.loads(r'''[
 [
  "config/service.ini",
  "wokers = 4",
  "workers = 4"
 ],
 [
  "config/service.ini",
  "timout = 30",
  "timeout = 30"
 ]
]'''):
    p = Path(path)
    text = p.read_text()
    assert text.count(old) == 1, f"solution does not apply to {path}"
    p.write_text(text.replace(old, new))
PY
