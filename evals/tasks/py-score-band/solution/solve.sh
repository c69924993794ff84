#!/usr/bin/env bash
# Reference solution for py-score-band: the minimal edit(s) a correct fix makes.
set -euo pipefail
python3 - <<'PY'
import json
from pathlib import Path

for path, old, new in json.loads(r'''[
 [
  "src/grading/core.py",
  "return floor < score < ceiling",
  "return floor <= score < ceiling"
 ]
]'''):
    p = Path(path)
    text = p.read_text()
    assert text.count(old) == 1, f"solution does not apply to {path}"
    p.write_text(text.replace(old, new))
PY
