"""A runner and a sandbox from a package outside skillci: one module plus one entry point
each (``skillci.runners``, ``skillci.sandboxes``) makes ``--runner toy`` and ``--sandbox
toy``/``toybox`` choices, lists them in ``--help`` and runs a trial through them — with no
edit to skillci's own files (docs/design/391)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.plugins.conftest import install_plugin, run_skillci

ROOT = Path(__file__).resolve().parents[3]
TASK = ROOT / "evals" / "tasks" / "py-window-end"

TOY_RUNNER = '''
import json
import os

from skillci.runners.local import LocalRunner
from skillci.runners.sandbox import make_shell


def _log(**fields):
    with open(os.environ["TOY_LOG"], "a", encoding="utf-8") as f:
        f.write(json.dumps(fields) + "\\n")


class LoggedShell:
    """A bubblewrap shell that logs every command it runs."""

    def __init__(self, inner, kind):
        self.inner, self.kind = inner, kind

    def run(self, command, *, timeout):
        _log(shell=self.kind, command=command)
        return self.inner.run(command, timeout=timeout)


class ToyRunner(LocalRunner):
    """A runner of its own: the local trial template, its commands in a logged shell."""

    name = "toy"

    def open_shell(self, spec, mounts, *, phase):
        shell, warnings = make_shell(mounts, sandbox="bwrap", allow_network=False)
        return LoggedShell(shell, "toy"), warnings

    def run_trial(self, spec, trial_dir, key):
        record = super().run_trial(spec, trial_dir, key)
        _log(runner=self.name, task=spec.task.id, mode=spec.sandbox)
        return record


def toy_shell(mounts, *, allow_network, env):
    """A sandbox of the local runner: bubblewrap, every command logged."""
    shell, warnings = make_shell(mounts, sandbox="bwrap", allow_network=allow_network, env=env)
    return LoggedShell(shell, "toybox"), warnings


class NotARunner:
    pass
'''

ENTRY_POINTS = (
    "[skillci.runners]\ntoy = toy_runner:ToyRunner\nbroken = toy_runner:NotARunner\n"
    "docker = toy_runner:ToyRunner\n"
    "[skillci.sandboxes]\ntoybox = toy_runner:toy_shell\nnone = toy_runner:toy_shell\n"
)


def _log(path: Path) -> list[dict[str, str]]:
    return [json.loads(x) for x in path.read_text().splitlines()] if path.exists() else []


def test_a_runner_plugin_is_a_choice_and_runs_a_raw_task_attempt(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", "toy_runner", {"toy_runner": TOY_RUNNER}, ENTRY_POINTS)
    log = tmp_path / "toy.log"
    env = {"SKILLCI_HOME": str(tmp_path / "home"), "TOY_LOG": str(log)}

    helped = run_skillci(site, "eval", "raw-task", "--help", env=env)
    assert helped.returncode == 0, helped.stderr
    assert "[local|docker|benchflow|harbor|toy|broken]" in helped.stdout
    assert "toy: entry point toy_runner:ToyRunner" in " ".join(helped.stdout.split())

    argv = ["eval", "raw-task", "--harness", "oracle", "--model", "none/none", "--task"]
    argv += [str(TASK), "--output", str(tmp_path / "out"), "--json", "--runner"]
    done = run_skillci(site, *argv, "toy", env=env)
    assert done.returncode == 0, done.stderr
    (attempt,) = json.loads(done.stdout)["attempts"]
    assert (attempt["runner"], attempt["state"], attempt["passed"]) == ("toy", "passed", True)
    record = json.loads((tmp_path / "out" / "test-001" / "result.json").read_text())
    assert record["runtime"]["runner"].startswith("toy (")
    assert record["runtime"]["sandbox"] == "toy"
    lines = _log(log)
    assert {"runner": "toy", "task": "py-window-end", "mode": "toy"} in lines
    commands = [x["command"] for x in lines if x.get("shell") == "toy"]
    assert any("solve.sh" in c for c in commands) and any("/tests/" in c for c in commands)

    # a factory that makes no runner is a clear invalid-input error, before anything runs
    broken = run_skillci(site, *argv[:-1], "--output", str(tmp_path / "b"), "--runner", "broken")
    assert broken.returncode == 2
    assert "runner 'broken' (toy_runner:NotARunner) made a NotARunner, not a Runner" in (
        broken.stderr
    )
    assert not (tmp_path / "b").exists() or not any((tmp_path / "b").glob("test-*"))


def test_runner_and_sandbox_plugins_are_eval_run_modes(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", "toy_runner", {"toy_runner": TOY_RUNNER}, ENTRY_POINTS)
    log = tmp_path / "toy.log"
    env = {"TOY_LOG": str(log), "COLUMNS": "200"}
    helped = run_skillci(site, "eval", "run", "--help", env=env)
    assert "[required|auto|none|bwrap|toybox|docker|toy|broken]" in helped.stdout
    assert "toybox (entry point toy_runner:toy_shell)" in " ".join(helped.stdout.split())

    base = ["eval", "run", "--root", str(ROOT), "--home", str(tmp_path / "home"), "--task"]
    base += ["py-window-end", "--agent", "oracle", "--json", "--sandbox"]
    for mode in ("toy", "toybox"):
        done = run_skillci(site, *base, mode, env=env)
        assert done.returncode == 0, done.stderr
        (trial,) = json.loads(done.stdout)["trials"]
        assert (trial["state"], trial["cached"]) == ("passed", False), trial
    lines = _log(log)
    assert [x for x in lines if "runner" in x] == [
        {"runner": "toy", "task": "py-window-end", "mode": "toy"}
    ]  # the toybox sandbox ran on the local runner, its commands in the plug-in's shell
    assert {x["shell"] for x in lines if "shell" in x} == {"toy", "toybox"}
    # a plug-in cannot take over a built-in name: docker and none are skillci's own
    again = run_skillci(site, *base, "none", env=env)
    assert again.returncode == 0, again.stderr
    assert len(_log(log)) == len(lines)
