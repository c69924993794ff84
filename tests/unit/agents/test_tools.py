from __future__ import annotations

from pathlib import Path

from skillci.agents.base import CommandResult
from skillci.agents.tools import TOOL_SCHEMAS, Toolbox, clip, schema_hash
from skillci.agents.workspace import Workspace
from skillci.skill.package import SkillPackage
from skillci.skill.render import render

ROOT = Path(__file__).resolve().parents[3]


class EchoShell:
    """Records commands; answers like a shell that printed them (tests never run /bin/sh here)."""

    kind = "test"

    def __init__(self) -> None:
        self.seen: list[tuple[str, float]] = []

    def run(self, command: str, *, timeout: float) -> CommandResult:
        self.seen.append((command, timeout))
        return CommandResult(exit_code=3, output=f"ran {command}", timed_out=command == "slow")


def box(tmp_path: Path, with_skill: bool = True) -> tuple[Toolbox, EchoShell]:
    (tmp_path / "f.txt").write_text("hello\n")
    shell = EchoShell()
    skill = (
        render(SkillPackage.from_dir(ROOT / "skills" / "repo-debugger"), "builtin")
        if with_skill
        else None
    )
    return Toolbox(Workspace(tmp_path), shell, skill, tool_timeout=30), shell


def test_run_reports_exit_code_first_and_caps_the_timeout(tmp_path: Path) -> None:
    tb, shell = box(tmp_path)
    out = tb.execute("run", {"command": "ls", "timeout_sec": 99}, time_left=10)
    assert out.text.startswith("exit_code: 3\n") and out.exit_code == 3
    assert shell.seen == [("ls", 10)]
    slow = tb.execute("run", {"command": "slow"}, time_left=100)
    assert "[timed out after 30s]" in slow.text and slow.error == "timeout"


def test_errors_are_reported_not_raised(tmp_path: Path) -> None:
    tb, _ = box(tmp_path)
    assert tb.execute("read_file", {"path": "../x"}, time_left=5).text.startswith("error:")
    assert tb.execute("read_file", {}, time_left=5).text.startswith("error: bad arguments")
    assert tb.execute("nope", {}, time_left=5).text == "error: unknown tool 'nope'"


def test_skill_files_load_with_their_hash_and_tokens(tmp_path: Path) -> None:
    tb, _ = box(tmp_path)
    out = tb.execute("load_skill_file", {"path": "skillci/workflows/ci-failure.md"}, time_left=5)
    assert (
        out.skill_path == "skillci/workflows/ci-failure.md" and out.skill_tokens and out.skill_hash
    )
    bad = tb.execute("load_skill_file", {"path": "../../etc/passwd"}, time_left=5)
    assert bad.text.startswith("error:") and "on-demand files" in bad.text


def test_no_skill_means_no_skill_tool(tmp_path: Path) -> None:
    tb, _ = box(tmp_path, with_skill=False)
    assert "load_skill_file" not in {s["function"]["name"] for s in tb.schemas}
    assert schema_hash(tb.schemas) != schema_hash(TOOL_SCHEMAS)


def test_clip_keeps_head_and_tail() -> None:
    text, cut = clip("a" * 100 + "b" * 100, 50)
    assert (
        cut
        and text.startswith("a" * 10)
        and text.endswith("b" * 40)
        and "150 characters cut" in text
    )
