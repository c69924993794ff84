from __future__ import annotations

from pathlib import Path

from skillci.providers.cache import ResponseCache, request_key
from skillci.providers.types import Completion, ToolCall


def test_key_changes_with_any_part_of_the_request() -> None:
    base = {"model": "sim/teacher", "messages": [{"role": "user", "content": "hi"}], "seed": 1}
    k = request_key(base)
    assert k == request_key(dict(reversed(list(base.items()))))
    assert k != request_key({**base, "seed": 2})
    assert k != request_key({**base, "messages": [{"role": "user", "content": "hi!"}]})


def test_roundtrip_marks_hits_cached(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    c = Completion(
        content=None,
        tool_calls=[
            ToolCall(
                id="c1", name="run", arguments={"command": "ls"}, raw_arguments='{"command": "ls"}'
            )
        ],
        input_tokens=5,
        output_tokens=3,
    )
    assert cache.get("ab" * 32) is None
    cache.put("ab" * 32, "sim/teacher", c)
    hit = cache.get("ab" * 32)
    assert hit is not None and hit.cached and hit.tool_calls[0].arguments == {"command": "ls"}
    assert len(cache) == 1


def test_corrupt_entry_is_a_miss(tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    key = "cd" * 32
    (tmp_path / key[:2]).mkdir()
    (tmp_path / key[:2] / f"{key}.json").write_text("{not json")
    assert cache.get(key) is None
