#!/usr/bin/env bash
# Reference solution for cfg-two-typos-port: the minimal edit(s) a correct fix makes.
set -euo pipefail
python3 - <<'PY'
import json
from pathlib import Path

for path, old, new in json.loads(r'''[
 [
  "config/service.ini",
  "hots = 0.0.0.0",
  "host = 0.0.0.0"
 ],
 [
  "config/service.ini",
  "prot = 8080",
  "port = 8080"
 ]
]'''):
    p = Path(path)
    text = p.read_text()
    assert text.count(old) == 1, f"solution does not apply to {path}"
    p.write_text(text.replace(old, new))
PY
