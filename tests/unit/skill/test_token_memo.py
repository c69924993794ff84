"""Token counts are memoised and persisted, so a command that only re-reads known files
never loads the tokenizer (docs/design/268)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from skillci.flows.context import TOKEN_COUNTS
from skillci.skill import tokens

TEXT = "Reproduce the failing test before you change any code.\n"

SCRIPT = """
import json, sys
from pathlib import Path
from skillci.flows.context import token_counts
from skillci.skill.tokens import count_tokens
with token_counts(Path(sys.argv[1])):
    n = count_tokens(sys.argv[2])
print(json.dumps({"count": n, "tiktoken": "tiktoken" in sys.modules}))
"""


def _count_in_process(state: Path, text: str) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(state), text],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    loaded: dict[str, object] = json.loads(out)
    return loaded


def test_a_second_process_counts_known_text_without_the_tokenizer(tmp_path: Path) -> None:
    first = _count_in_process(tmp_path, TEXT)
    assert first["tiktoken"] is True
    assert first["count"] == tokens.count_tokens(TEXT)
    saved = json.loads((tmp_path / TOKEN_COUNTS).read_text())
    assert list(saved.values()) == [first["count"]]
    second = _count_in_process(tmp_path, TEXT)
    assert second == {"count": first["count"], "tiktoken": False}
    other = _count_in_process(tmp_path, TEXT + "And say so.\n")  # new text: counted
    assert other["tiktoken"] is True and other["count"] != first["count"]


def test_persisted_counts_that_are_not_counts_are_ignored() -> None:
    digest = "a" * 64
    bad = {
        f"cl100k_base:{digest}": -1,
        f"no-such-encoding:{digest}": 3,
        "cl100k_base:short": 3,
        f"o200k_base:{digest}": "7",
        f"p50k_base:{digest}": True,
    }
    assert tokens.remember_counts(bad) == 0
    assert tokens.remember_counts({f"p50k_base:{digest}": 7}) == 1
