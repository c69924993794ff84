"""Mount order in the bubblewrap command lines: a Python installed under /tmp (a checkout in
/tmp) must stay visible over the sandbox's own /tmp, or tasks running `python` break."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillci.runners import sandbox
from skillci.runners.sandbox import BwrapShell, Mount


def _targets(argv: list[str], flag: str) -> list[int]:
    return [i for i, a in enumerate(argv) if a == flag]


def test_python_roots_are_bound_after_the_private_tmp(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "python_roots", lambda: [Path("/tmp/checkout/.venv")])
    argv = BwrapShell([Mount(Path("/tmp/ws"), "/app", True)]).argv("true")
    (tmpfs,) = _targets(argv, "--tmpfs")
    assert argv[tmpfs + 1] == "/tmp"
    venv = argv.index("/tmp/checkout/.venv")
    assert argv[venv - 1] == "--ro-bind" and venv > tmpfs


def test_a_program_started_directly_gets_the_same_sandbox_without_a_shell() -> None:
    """Design 433: a real agent is bwrap's own child (no ``bash -c`` in between), with the
    same options as a shell command; and bwrap starts no second session of its own."""
    shell = BwrapShell([Mount(Path("/tmp/ws"), "/app", True)], allow_network=True)
    agent = ["/opt/agents/codex", "exec", "--json", "fix it; rm -rf /"]
    direct, script = shell.exec_argv(agent), shell.argv("true")
    assert direct[-len(agent) - 1 :] == ["--", *agent]
    assert direct[: -len(agent)] == script[:-3] and script[-3:] == ["bash", "-c", "true"]
    assert "--new-session" not in direct and "--unshare-all" in direct
