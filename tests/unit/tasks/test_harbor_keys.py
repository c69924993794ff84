"""skillci reads Harbor's task config keys the way Harbor does (docs/design/150)."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.errors import TaskFormatError
from skillci.tasks.loader import load_task
from skillci.tasks.models import Purpose
from skillci.tasks.validate import Severity, validate_task
from tests.unit.tasks.helpers import make_harbor_task, write

HEAD = 'version = "1.0"\n\n[verifier]\ntimeout_sec = 60.0\n'


def _cfg(tmp_path: Path, toml: str):  # type: ignore[no-untyped-def]
    return load_task(make_harbor_task(tmp_path, toml=toml), purpose=Purpose.inspect).config


def test_legacy_size_strings_set_the_mb_fields_as_harbor_does(tmp_path: Path) -> None:
    env = _cfg(tmp_path, HEAD + '\n[environment]\nmemory = "2G"\nstorage = "512M"\n').environment
    assert (env.memory_mb, env.storage_mb) == (2048, 512)
    assert env.memory == "2G"  # what was written is kept


def test_a_bad_or_conflicting_size_is_an_error_with_file_and_line(tmp_path: Path) -> None:
    with pytest.raises(TaskFormatError, match="memory") as err:
        _cfg(tmp_path / "a", HEAD + '\n[environment]\nmemory = "2 gigs"\n')
    assert err.value.file is not None and str(err.value.file).endswith("task.toml")
    assert err.value.line == 6
    with pytest.raises(TaskFormatError, match="conflicts with memory_mb"):
        _cfg(tmp_path / "b", HEAD + '\n[environment]\nmemory = "2G"\nmemory_mb = 1024\n')


def test_gpus_network_policy_and_other_harbor_keys_are_known_not_typos(tmp_path: Path) -> None:
    toml = (
        HEAD
        + '\n[environment]\ngpus = 1\ngpu_types = ["H100"]\nnetwork_mode = "public"\n'
        + 'workdir = "/app"\n\n[environment.healthcheck]\ncommand = "true"\n'
        + '\n[solution.env]\nA = "1"\n\n[task]\nname = "org/x"\n'
    )
    root = make_harbor_task(tmp_path, toml=toml)
    cfg = load_task(root, purpose=Purpose.inspect).config
    assert cfg.environment.gpus == 1 and cfg.environment.allow_internet is True
    assert cfg.environment.healthcheck is not None and cfg.task is not None
    codes = {f.code: f.severity for f in validate_task(root).findings}
    assert "unknown-key" not in codes
    assert codes["accelerator-requested"] is Severity.note


def test_network_mode_other_than_public_keeps_the_network_closed(tmp_path: Path) -> None:
    toml = HEAD + '\n[environment]\nnetwork_mode = "allowlist"\nallowed_hosts = ["pypi.org"]\n'
    assert _cfg(tmp_path, toml).environment.allow_internet is False


def test_free_form_metadata_values_are_coerced_not_rejected(tmp_path: Path) -> None:
    meta = _cfg(tmp_path, HEAD + '\n[metadata]\ndifficulty = 3\ntags = "one"\n').metadata
    assert (meta.difficulty, meta.tags) == ("3", ["one"])


def test_real_typos_are_still_reported(tmp_path: Path) -> None:
    root = make_harbor_task(tmp_path, toml=HEAD + "\n[environment]\ngpu = 1\n")
    notes = [f.message for f in validate_task(root).findings if f.code == "unknown-key"]
    assert notes == ["unknown config key 'environment.gpu' is kept as-is (typo?)"]


def test_multi_step_tasks_are_refused_with_a_clear_error(tmp_path: Path) -> None:
    root = make_harbor_task(tmp_path, toml=HEAD + '\n[[steps]]\nname = "one"\n')
    (root / "instruction.md").unlink()
    write(root / "steps" / "one" / "instruction.md", "Do it.\n")
    with pytest.raises(TaskFormatError, match="multi-step Harbor task"):
        load_task(root, purpose=Purpose.inspect)
