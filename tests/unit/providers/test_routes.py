from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillci.errors import ConfigError
from skillci.providers.routes import (
    BUILTIN_ROUTES,
    ModelRoute,
    RoutesFile,
    load_routes,
    load_routes_file,
    resolve_route,
)

ROOT = Path(__file__).resolve().parents[3]


def _write(tmp_path: Path, data: dict[str, object]) -> Path:
    p = tmp_path / "provider_routes.json"
    p.write_text(json.dumps(data))
    return p


def test_seed_route_names_are_expressible(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {
            "schema_version": 1,
            "routes": {
                "siliconflow/Qwen/Qwen3.5-27B": {
                    "model": "openai/Qwen/Qwen3.5-27B",
                    "api_base": "https://api.siliconflow.cn/v1",
                    "api_key_env": "SILICONFLOW_API_KEY",
                    "context_window": 32768,
                    "quantization": "bf16",
                },
                "ali/deepseek-v4-pro-0813": {
                    "model": "openai/deepseek-v4-pro-0813",
                    "api_base": "https://dashscope.aliyuncs.com/compatible-mode/v1",
                    "api_key_env": "DASHSCOPE_API_KEY",
                    "input_cost_per_token": 2e-6,
                    "output_cost_per_token": 8e-6,
                },
            },
        },
    )
    qwen = resolve_route("siliconflow/Qwen/Qwen3.5-27B", path)
    assert (qwen.provider, qwen.model_id) == ("openai", "Qwen/Qwen3.5-27B")
    assert resolve_route("ali/deepseek-v4-pro-0813", path).api_key_env == "DASHSCOPE_API_KEY"
    assert resolve_route("sim/student", path) == BUILTIN_ROUTES["sim/student"]


def test_the_repository_routes_file_is_valid() -> None:
    f = load_routes_file(ROOT / "provider_routes.json")
    assert {"sim/student", "sim/teacher"} <= set(f.routes)
    assert {"siliconflow/Qwen/Qwen3.5-27B", "ali/deepseek-v4-pro-0813"} <= set(f.examples)


def test_examples_cannot_be_used(tmp_path: Path) -> None:
    path = _write(tmp_path, {"examples": {"x/y": {"model": "openai/y", "api_key_env": "Y_KEY"}}})
    with pytest.raises(ConfigError, match="only an example"):
        resolve_route("x/y", path)


def test_unknown_route_names_the_alternatives(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="sim/student"):
        resolve_route("nope/nothing", _write(tmp_path, {}))


@pytest.mark.parametrize(
    ("route", "msg"),
    [
        ({"model": "gpt-4o"}, "provider/model-id"),
        ({"model": "openai/gpt-4o", "api_key_env": "sk-abc def"}, "NAME"),
        ({"model": "openai/gpt-4o", "api_key": "sk-secret"}, "api_key"),
    ],
)
def test_bad_routes_are_rejected_with_the_field(
    tmp_path: Path, route: dict[str, object], msg: str
) -> None:
    with pytest.raises(ConfigError, match=msg):
        load_routes_file(_write(tmp_path, {"routes": {"r": route}}))


def test_invalid_json_names_the_line(tmp_path: Path) -> None:
    p = tmp_path / "provider_routes.json"
    p.write_text('{\n  "routes": {,\n}')
    with pytest.raises(ConfigError) as exc:
        load_routes_file(p)
    assert exc.value.line == 2


def test_fingerprint_tracks_what_changes_answers() -> None:
    a = ModelRoute(model="openai/m", temperature=0.0)
    assert a.fingerprint() == ModelRoute(model="openai/m", temperature=0.0, timeout=5).fingerprint()
    assert a.fingerprint() != ModelRoute(model="openai/m", temperature=0.7).fingerprint()
    assert (
        a.fingerprint()
        != ModelRoute(model="openai/m", temperature=0.0, revision="r2").fingerprint()
    )


def test_file_overrides_builtin_routes(tmp_path: Path) -> None:
    path = _write(
        tmp_path, {"routes": {"sim/student": {"model": "sim/student", "temperature": 0.5}}}
    )
    assert load_routes(path)["sim/student"].temperature == 0.5
    assert RoutesFile.model_validate({"$comment": "hi"}).comment == "hi"
