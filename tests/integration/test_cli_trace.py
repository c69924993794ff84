from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from skillci.cli import output, plain_table
from skillci.cli.main import main, run_typer
from skillci.cli.trace_ls import list_runs, parse_light, render_runs_rich, runs_table
from skillci.trace.models import ModelInfo
from skillci.trace.redact import Redactor
from skillci.trace.store import TraceStore
from tests.unit.trace.helpers import make_record


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "home"
    monkeypatch.setenv("SKILLCI_HOME", str(root))
    store = TraceStore(root, redactor=Redactor(env={}))
    store.put(make_record("run-a-1", task_id="t1", passed=True))
    store.put(
        make_record(
            "run-b-2",
            task_id="t2",
            agent_role="teacher",
            model=ModelInfo(route="sim/teacher"),
            final_output="[bold]not markup[/bold]",
        )
    )
    return root


def test_ls_table(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "ls"]) == 0
    out = capsys.readouterr().out
    assert "run-a-1" in out
    assert "run-b-2" in out
    assert "2 run(s)" in out


def test_ls_filters_and_json(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "ls", "--role", "teacher", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in doc["runs"]] == ["run-b-2"]
    assert main(["trace", "ls", "--task", "t1", "--model", "sim/student", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [r["run_id"] for r in doc["runs"]] == ["run-a-1"]
    assert doc["runs"][0]["passed"] is True


def test_ls_bad_role_is_usage_error(home: Path) -> None:
    assert main(["trace", "ls", "--role", "boss"]) == 2


def test_show(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "show", "run-b"]) == 0
    out = capsys.readouterr().out
    assert "run run-b-2" in out
    assert "tool_call" in out
    assert "run(cmd='pytest -x') #c1" in out
    assert "skillci/workflows/ci-failure.md (311 tokens)" in out
    assert "[bold]not markup[/bold]" in out  # untrusted text is escaped, not rendered
    assert main(["trace", "show", "run-a-1", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["run_id"] == "run-a-1"
    assert doc["evaluation"]["state"] == "passed"


def test_show_unknown_run(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "show", "nope"]) == 2
    assert "no run 'nope'" in capsys.readouterr().err


def test_empty_store_reads_create_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = tmp_path / "none"
    assert main(["trace", "ls", "--home", str(root)]) == 0
    assert "0 run(s)" in capsys.readouterr().out
    assert not root.exists()
    assert main(["trace", "show", "x", "--home", str(root)]) == 2
    assert not root.exists()


def test_reindex(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["trace", "reindex", "--dry-run"]) == 0
    assert "would index 2 record file(s)" in capsys.readouterr().out
    assert main(["trace", "reindex", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["total"] == 2


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--role", "teacher"],
        ["--role=student", "--task", "t1"],
        ["--model", "sim/teacher", "--limit", "1"],
        ["--limit", "1", "--limit=5"],  # the last one wins, as in click
        ["--split", "nope"],
        ["--skill-hash", "0" * 64],
    ],
)
def test_ls_light_path_prints_what_typer_prints(
    home: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    assert parse_light(args) is not None  # main() answers these without typer
    assert main(["trace", "ls", *args]) == 0
    light = capsys.readouterr()
    assert run_typer(["trace", "ls", *args]) == 0
    typer_out = capsys.readouterr()
    assert light == typer_out
    assert "run(s)" in light.out


@pytest.mark.parametrize(
    "args",
    [
        ["--json=1"],
        ["--help"],
        ["--role", "boss"],
        ["--limit", "0"],
        ["--limit", "x"],
        ["--task"],
        ["--tsak", "t1"],
        ["extra"],
    ],
)
def test_ls_light_parser_leaves_the_rest_to_typer(args: list[str]) -> None:
    assert parse_light(args) is None


@pytest.mark.parametrize("args", [[], ["--json"]])
def test_ls_light_path_imports_neither_typer_pydantic_nor_rich(home: Path, args: list[str]) -> None:
    code = (
        "import sys\n"
        "from skillci.cli.main import main\n"
        f"assert main(['trace', 'ls', *{args!r}]) == 0\n"
        "heavy = ('typer', 'pydantic', 'skillci.trace.models', 'rich', 'dataclasses', 'typing')\n"
        "heavy = sorted(m for m in heavy if m in sys.modules)\n"
        "print('heavy:', heavy)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert "run-a-1" in out
    assert out.rstrip().endswith("heavy: []")


def test_ls_index_of_another_schema_is_reported_by_the_store(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with sqlite3.connect(home / "index.sqlite") as conn:
        conn.execute("UPDATE meta SET value='99' WHERE key='index_schema_version'")
    conn.close()
    assert main(["trace", "ls"]) == 3
    assert "index schema 99" in capsys.readouterr().err


@pytest.fixture
def unicode_home(home: Path) -> Path:
    store = TraceStore(home, redactor=Redactor(env={}))
    store.put(
        make_record(
            "run-20260813-100000-0003",
            task_id="修复缓存过期错误-一个很长很长的任务名称-with-latin-too",
            model=ModelInfo(route="模型/通义千问-2.5-72b-instruct-awq-int4"),
            split="ｔｅｓｔ",
        )
    )
    store.put(
        make_record(
            "run-20260813-100000-0004",
            task_id="an-extremely-long-task-name-that-will-not-fit-in-any-narrow-column-at-all",
            model=ModelInfo(route="openrouter/meta-llama/llama-3.3-70b-instruct:free"),
            passed=True,
            created_at=datetime(2026, 8, 13, 11, 30, 5, 120000, tzinfo=UTC),  # microseconds
        )
    )
    return home


@pytest.mark.parametrize("width", [40, 80, 120, 200])
@pytest.mark.parametrize("colour", ["pipe", "FORCE_COLOR", "NO_COLOR"])
def test_ls_plain_and_rich_routes_print_the_same_bytes(
    unicode_home: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    width: int,
    colour: str,
) -> None:
    monkeypatch.setenv("COLUMNS", str(width))
    for var in ("FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE", "TERM"):
        monkeypatch.delenv(var, raising=False)
    if colour != "pipe":
        monkeypatch.setenv("FORCE_COLOR", "1")
    if colour == "NO_COLOR":
        monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setattr(output, "_CONSOLES", {})  # a fresh rich console sees this env
    root, rows = list_runs(None, limit=50)
    assert len(rows) == 4
    style = plain_table.console_style(os.environ, sys.stdout)
    assert style is not None
    title, columns, cells = runs_table(root, rows)
    assert plain_table.render(columns, cells, title=title, width=width, style=style) is not None

    assert main(["trace", "ls"]) == 0  # the light path: plain renderer
    plain = capsys.readouterr().out
    render_runs_rich(root, rows)
    rich = capsys.readouterr().out
    assert plain == rich
    assert plain.endswith("4 run(s)\n")
    assert ("\x1b[" in plain) == (colour != "pipe")
    if width >= 80:  # narrower, the state column is past the edge (rich crops the lines)
        assert ("\x1b[32m" in plain) == (colour == "FORCE_COLOR")  # passed is green
    assert "修复" in plain
    if width >= 120:
        assert "not shown" not in plain


def test_ls_text_the_plain_renderer_declines_is_printed_by_rich(
    home: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = TraceStore(home, redactor=Redactor(env={}))
    store.put(make_record("run-c-3", task_id="fix :smile: bug"))  # rich renders emoji codes
    monkeypatch.setattr(output, "_CONSOLES", {})
    root, rows = list_runs(None, limit=50)
    title, columns, cells = runs_table(root, rows)
    style = plain_table.console_style(os.environ, sys.stdout)
    assert style is not None
    assert plain_table.render(columns, cells, title=title, width=80, style=style) is None
    assert main(["trace", "ls"]) == 0
    out = capsys.readouterr().out
    render_runs_rich(root, rows)
    assert out == capsys.readouterr().out
    assert "3 run(s)" in out


def _in_a_terminal(code: str, columns: int) -> bytes:
    """What ``python -c code`` writes to a pseudo-terminal ``columns`` wide (no COLUMNS)."""
    import fcntl
    import pty
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    drop = ("COLUMNS", "LINES", "FORCE_COLOR", "NO_COLOR", "TTY_COMPATIBLE")
    env = {k: v for k, v in os.environ.items() if k not in drop} | {"TERM": "xterm-256color"}
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=follower, stdout=follower, stderr=follower, env=env
    )
    os.close(follower)
    out = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
    assert proc.wait(timeout=60) == 0, out
    os.close(leader)
    return out


@pytest.mark.parametrize("columns", [60, 100])
def test_ls_in_a_real_terminal_plain_and_rich_print_the_same_bytes(
    unicode_home: Path, columns: int
) -> None:
    light = _in_a_terminal(
        "import sys; from skillci.cli.main import main; sys.exit(main(['trace', 'ls']))",
        columns,
    )
    rich = _in_a_terminal(
        "from skillci.cli.trace_ls import list_runs, render_runs_rich; "
        "render_runs_rich(*list_runs(None, limit=50))",
        columns,
    )
    assert light == rich
    assert b"\x1b[32mpassed\x1b[0m" in light  # coloured: it is a terminal
    assert f"not shown at {columns} columns".encode() in light  # the terminal's width


@pytest.mark.parametrize(
    "args",
    [
        [],
        ["--role", "teacher"],
        ["--task", "t1", "--limit=1"],
        ["--model", "模型/通义千问-2.5-72b-instruct-awq-int4"],
        ["--split", "nope"],
        ["--home", "{missing}"],
    ],
)
def test_ls_json_light_path_prints_what_typer_prints(
    unicode_home: Path, capsys: pytest.CaptureFixture[str], args: list[str]
) -> None:
    args = [a.replace("{missing}", str(unicode_home / "missing")) for a in args]
    assert parse_light(["--json", *args]) is not None  # main() answers these without typer
    assert main(["trace", "ls", "--json", *args]) == 0
    light = capsys.readouterr()
    assert run_typer(["trace", "ls", "--json", *args]) == 0
    assert light == capsys.readouterr()
    doc = json.loads(light.out)
    assert isinstance(doc["runs"], list)
    assert not (unicode_home / "missing").exists()  # reading never creates a store
