"""The sandbox policy (docs/design/310): ``--sandbox required|auto|none``, third-party task code
refused without a sandbox under ``auto``, the bundled tasks run (and say so), task links out of
the task refused at load time, ``/app`` tasks unsupported without a sandbox, nothing written
outside the trial dir, and no secret in a trial's environment."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from skillci.cli.main import main
from skillci.errors import TaskFormatError
from skillci.runners import sandbox
from skillci.runners.sandbox import bwrap_path, scrub_env
from skillci.tasks.loader import load_task

ROOT = Path(__file__).resolve().parents[3]
BUNDLED = ROOT / "evals" / "tasks" / "cfg-log-level"
needs_bwrap = pytest.mark.skipif(bwrap_path() is None, reason="bubblewrap is not usable here")

FAKE = {
    "OPENAI_API_KEY": "sk-fakeopenai0123456789abcdef",
    "MY_ROUTE_SECRET_HOLDER": "route-key-0123456789abcdef",
    "GITHUB_TOKEN": "ghp_fakeforgetoken0123456789",
    "SKILLCI_MODEL_KEYS": "ANTHROPIC_API_KEY=ant-fake-0123456789abcdef\n",
    "SKILLCI_WEBHOOK": "skillci-own-secret-0123456789",
}


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("SKILLCI_SANDBOX", raising=False)
    monkeypatch.setenv("SKILLCI_HOME", str(tmp_path / "home"))
    monkeypatch.chdir(tmp_path)
    (tmp_path / "r").mkdir()
    return tmp_path / "r"


def _task(repo: Path, name: str) -> Path:
    assert main(["tasks", "new", name, "--repo", str(repo)]) == 0
    return repo / "evals" / "tasks" / name


def _no_bwrap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sandbox, "bwrap_path", lambda: None)


def _oracle(repo: Path, task: Path, *extra: str) -> list[str]:
    return ["eval", "run", "--agent", "oracle", "--task", str(task), "--root", str(repo), *extra]


def test_a_test_sh_linked_to_etc_passwd_is_refused_at_load_time(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    task = _task(repo, "linked")
    (task / "tests" / "test.sh").unlink()
    (task / "tests" / "test.sh").symlink_to("/etc/passwd")
    with pytest.raises(TaskFormatError, match="outside the task") as err:
        load_task(task)
    assert err.value.file is not None and str(err.value.file).endswith("tests/test.sh")
    capsys.readouterr()
    assert main(["tasks", "validate", str(task)]) == 2
    out = capsys.readouterr().out
    assert "input paths must stay within the task" in out and "load-failed" in out
    assert main(_oracle(repo, task)) == 2
    assert "root:" not in capsys.readouterr().out  # nothing of the host file was shown
    # a link that stays inside the task is fine
    (task / "tests" / "test.sh").unlink()
    (task / "tests" / "test.sh").symlink_to("../solution/solve.sh")
    assert load_task(task).id == "linked"


def test_without_a_sandbox_auto_refuses_third_party_tasks_and_runs_the_bundled_ones(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
) -> None:
    task = _task(repo, "theirs")
    _no_bwrap(monkeypatch)
    capsys.readouterr()
    assert main(_oracle(repo, task)) == 4
    err = capsys.readouterr().err
    assert "refusing to run third-party task code (theirs)" in err
    assert "install bubblewrap" in err and "--sandbox none" in err and "Docker" in err
    assert not (repo / ".skillci" / "trials").exists()  # nothing ran
    assert main([*_oracle(repo, task, "--sandbox", "required")]) == 4
    assert "--sandbox required" in capsys.readouterr().err
    monkeypatch.setenv("CI", "true")  # CI's default is required: the bundled task too
    assert main(_oracle(repo, BUNDLED, "--json")) == 4
    monkeypatch.delenv("CI")
    # the bundled task runs under auto, unsandboxed, and says so
    with caplog.at_level(logging.WARNING, logger="skillci.sandbox"):
        assert main(_oracle(repo, BUNDLED, "--json")) == 0
    (trial,) = json.loads(capsys.readouterr().out)["trials"]
    assert trial["passed"] and any("NO SANDBOX" in w for w in trial["warnings"])
    from skillci.runners.policy import BUNDLED_UNSANDBOXED, _warn_once

    if _warn_once.cache_info().hits == 0:  # the first unsandboxed plan of this process
        assert BUNDLED_UNSANDBOXED in caplog.text
    # a bundled task changed by one byte is no longer bundled
    mine = repo / "cfg-log-level"
    shutil.copytree(BUNDLED, mine)
    (mine / "instruction.md").write_text((mine / "instruction.md").read_text() + "\n")
    assert main(_oracle(repo, mine)) == 4
    # --sandbox none accepts the risk
    assert main([*_oracle(repo, task, "--sandbox", "none", "--json")]) == 0
    assert json.loads(capsys.readouterr().out)["trials"][0]["passed"]


@pytest.mark.parametrize(
    "command",
    ["eval run", "tasks validate", "gate", "review", "propose", "evals run", "bench", "pipeline"],
)
def test_every_command_that_runs_task_code_takes_the_policy(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*command.split(), "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "--sandbox" in out and "required" in out and "auto" in out, command
    assert main([*command.split(), "--sandbox", "sometimes"]) == 2
    assert "sometimes" in capsys.readouterr().err


def test_unsandboxed_an_app_task_is_unsupported_and_nothing_lands_outside_the_trial(
    repo: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    home = tmp_path / "user-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    app = _task(repo, "at-app")
    solve = app / "solution" / "solve.sh"
    solve.write_text(solve.read_text().replace("> answer.txt", "> /app/answer.txt"))
    writer = _task(repo, "writer")
    solve = writer / "solution" / "solve.sh"
    solve.write_text(
        solve.read_text() + 'echo x > "$HOME/probe"\necho x > "${TMPDIR:-/tmp}/probe-$$"\n'
    )
    capsys.readouterr()
    assert main([*_oracle(repo, app, "--sandbox", "none", "--json")]) == 0
    (trial,) = json.loads(capsys.readouterr().out)["trials"]
    assert trial["state"] == "environment_unsupported"
    assert "names its working directory /app (solution/solve.sh)" in trial["warnings"][0]
    assert "install bubblewrap" in trial["warnings"][0]
    if bwrap_path() is not None:  # in the sandbox the same task runs and passes
        assert main([*_oracle(repo, app, "--json")]) == 0
        assert json.loads(capsys.readouterr().out)["trials"][0]["passed"]
    assert main([*_oracle(repo, writer, "--sandbox", "none", "--json")]) == 0
    (trial,) = json.loads(capsys.readouterr().out)["trials"]
    assert trial["passed"]
    assert list(home.iterdir()) == []  # the user's HOME was not written
    trial_dir = Path(trial["trial_dir"])
    assert (trial_dir / "host-home" / "probe").is_file()
    assert len(list((trial_dir / "host-home" / "tmp").glob("probe-*"))) == 1


#: A verifier that passes only when no fake secret is in its environment, its /proc/self/environ
#: or (in the sandbox) any /proc/*/environ it can see; it must also see its own LOGS_DIR.
CHECK_ENV = """#!/usr/bin/env bash
set -u
LOGS="${LOGS_DIR:-/logs}"
mkdir -p "$LOGS/verifier"
{ env; tr '\\0' '\\n' < /proc/self/environ; cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n'; } > "$LOGS/verifier/seen.txt"
grep -q '^LOGS_DIR=' "$LOGS/verifier/seen.txt" || { echo 0 > "$LOGS/verifier/reward.txt"; exit; }
for v in VALUES; do
  if grep -qF "$v" "$LOGS/verifier/seen.txt"; then echo "LEAK" >&2; echo 0 > "$LOGS/verifier/reward.txt"; exit; fi
done
echo 1 > "$LOGS/verifier/reward.txt"
"""


@pytest.mark.parametrize("mode", ["none", pytest.param("auto", marks=needs_bwrap)])
def test_a_verifier_printing_its_environment_finds_no_key(
    repo: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mode: str,
) -> None:
    routes = repo / "provider_routes.json"
    routes.write_text(
        json.dumps(
            {"routes": {"mine": {"model": "openai/x", "api_key_env": "MY_ROUTE_SECRET_HOLDER"}}}
        )
    )
    monkeypatch.setenv("SKILLCI_PROVIDER_ROUTES", str(routes))
    for k, v in FAKE.items():
        monkeypatch.setenv(k, v)
    values = [*(v for k, v in FAKE.items() if k != "SKILLCI_MODEL_KEYS"), "ant-fake-0123456789"]
    task = _task(repo, "envdump")
    (task / "tests" / "test.sh").write_text(CHECK_ENV.replace("VALUES", " ".join(values)))
    capsys.readouterr()
    assert main([*_oracle(repo, task, "--sandbox", mode, "--json")]) == 0
    (trial,) = json.loads(capsys.readouterr().out)["trials"]
    assert trial["state"] == "passed", trial
    # and the scrub itself: a variable a caller passes that holds a host secret is dropped
    kept = scrub_env({"A": FAKE["GITHUB_TOKEN"], "B": "ant-fake-0123456789abcdef", "C": "ok"})
    assert kept == {"C": "ok"}
    kept = scrub_env(
        {
            "GITHUB_TOKEN": "x",
            "SKILLCI_MODEL_KEYS": "y",
            "SKILLCI_WEBHOOK_COPY": FAKE["SKILLCI_WEBHOOK"],  # a host SKILLCI_* value
            "SKILLCI_LOGS_DIR": "/logs",
            "SKILLCI_GATEWAY_TOKEN": "per-trial-gateway-token",  # a real agent's, not a host's
        }
    )
    assert kept == {"SKILLCI_LOGS_DIR": "/logs", "SKILLCI_GATEWAY_TOKEN": "per-trial-gateway-token"}


def test_the_demo_repository_keeps_running_without_bubblewrap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The demo copies the bundled tasks into its scratch repository: they stay bundled, so
    ``auto`` runs them without a sandbox (the demo warns first: test_demo.py)."""
    from skillci.flows.demo import build_repo
    from skillci.runners.policy import is_bundled, reset_policy, sandbox_for, use_policy
    from skillci.tasks.loader import discover_tasks
    from skillci.tasks.models import Purpose

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("SKILLCI_SANDBOX", raising=False)
    demo = build_repo(ROOT, tmp_path / "demo")
    tasks = [load_task(p, purpose=Purpose.inspect) for p in discover_tasks(demo)]
    assert len(tasks) >= 20 and all(is_bundled(t) for t in tasks)
    _no_bwrap(monkeypatch)
    use_policy("auto")
    assert sandbox_for(tasks, "auto") == "auto"
    use_policy("required")
    with pytest.raises(Exception, match="--sandbox required"):
        sandbox_for(tasks, "auto")
    use_policy("none")
    assert sandbox_for(tasks, "auto") == "none"
    reset_policy()


_TTY_PROBE = """
import json, subprocess, sys
from pathlib import Path
from skillci.agents.headless import Launch
from skillci.runners.agent_launch import launcher
from skillci.runners.sandbox import BwrapShell, Mount

ws, logs = Path(sys.argv[1]), Path(sys.argv[2])
probe = "awk '{print $7}' /proc/self/stat"  # tty_nr: 0 = no controlling terminal
own = Path("/proc/self/stat").read_text().split()[6]
shell = BwrapShell([Mount(ws, "/app", True)])
verifier = shell.run(probe, timeout=30).output.strip()
job = Launch(["bash", "-c", probe], {}, logs / "out.txt", logs / "err.txt")
launcher(shell)(job).wait()
print(json.dumps({"own": own, "verifier": verifier, "agent": job.stdout.read_text().strip()}))
"""


@needs_bwrap
def test_nothing_sandboxed_has_the_callers_controlling_terminal(tmp_path: Path) -> None:
    """Design 433: bwrap runs without its own --new-session; the commands of the verifier
    and the agent still run without a controlling terminal (no TIOCSTI into the caller's),
    because they are started in a new session — checked from a process that has one."""
    import os
    import pty
    import sys

    (tmp_path / "ws").mkdir()
    pid, fd = pty.fork()
    if pid == 0:  # the child: a session leader whose controlling terminal is the pty
        os.execv(  # noqa: S606 - the probe: this interpreter, no shell
            sys.executable, [sys.executable, "-c", _TTY_PROBE, str(tmp_path / "ws"), str(tmp_path)]
        )
    out = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed the pty
            break
        if not chunk:
            break
        out += chunk
    os.waitpid(pid, 0)
    got = json.loads(out.decode().strip().splitlines()[-1])
    assert got["own"] != "0"  # the probe itself has one: the check below can fail
    assert got == {"own": got["own"], "verifier": "0", "agent": "0"}
