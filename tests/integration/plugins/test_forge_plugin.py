"""A forge from a package outside skillci: one module plus one ``skillci.forges`` entry point
makes ``--forge toy`` a choice, lists it in ``--help`` and opens a PR through it."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.loop.conftest import git, make_scratch
from tests.integration.plugins.conftest import install_plugin, run_skillci

TOY_FORGE = '''
import json
import os

from skillci.forge.local import LocalForge


class ToyForge(LocalForge):
    """LocalForge that also logs every PR it opens to $TOY_FORGE_LOG."""

    def open_pr(self, **kw):
        pr = super().open_pr(**kw)
        with open(os.environ["TOY_FORGE_LOG"], "a", encoding="utf-8") as f:
            f.write(json.dumps({"number": pr.number, "head": pr.head_branch}) + "\\n")
        return pr
'''

ENTRY_POINTS = "[skillci.forges]\ntoy = toy_forge:ToyForge\nlocal = toy_forge:ToyForge\n"


def test_a_forge_plugin_is_a_choice_and_opens_a_pr(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", "toy_forge", {"toy_forge": TOY_FORGE}, ENTRY_POINTS)
    repo = make_scratch(tmp_path / "repo")
    git(repo, "checkout", "-q", "-b", "alice/edit")
    md = repo / "skills/repo-debugger/SKILL.md"
    md.write_text(md.read_text() + "\nRe-run the failing test after every edit.\n")
    git(repo, "commit", "-qam", "docs: re-run after edits")
    git(repo, "checkout", "-q", "main")
    log = tmp_path / "toy.log"
    env = {"SKILLCI_HOME": str(tmp_path / "home"), "TOY_FORGE_LOG": str(log)}

    helped = run_skillci(site, "pr", "open", "--help", env=env)
    assert helped.returncode == 0, helped.stderr
    assert "[local|github|toy]" in helped.stdout
    assert "toy: entry point toy_forge:ToyForge." in " ".join(helped.stdout.split())

    argv = ["pr", "open", "--repo", str(repo), "--head", "alice/edit", "--json"]
    done = run_skillci(site, *argv, "--forge", "toy", env=env)
    assert done.returncode == 0, done.stderr
    res = json.loads(done.stdout)
    assert (res["action"], res["number"]) == ("opened", 1)
    assert [json.loads(x) for x in log.read_text().splitlines()] == [
        {"number": 1, "head": "alice/edit"}
    ]
    # $SKILLCI_FORGE names it too; a plug-in cannot take over a built-in name ("local")
    listed = run_skillci(
        site, "pr", "list", "--repo", str(repo), env={**env, "SKILLCI_FORGE": "toy"}
    )
    assert listed.returncode == 0 and "1 pull request(s)" in listed.stdout, listed.stderr
    git(repo, "checkout", "-q", "-b", "bob/edit")
    md.write_text(md.read_text() + "\nSay which test failed.\n")
    git(repo, "commit", "-qam", "docs: name the test")
    git(repo, "checkout", "-q", "main")
    own = run_skillci(site, "pr", "open", "--repo", str(repo), "--head", "bob/edit", env=env)
    assert own.returncode == 0, own.stderr
    assert len(log.read_text().splitlines()) == 1  # the built-in local forge opened #2


def test_an_unknown_forge_lists_the_registered_ones(tmp_path: Path) -> None:
    site = install_plugin(tmp_path / "site", "toy_forge", {"toy_forge": TOY_FORGE}, ENTRY_POINTS)
    bad = run_skillci(site, "pr", "list", "--forge", "gitlab")
    assert bad.returncode == 2
    assert "'local', 'github', 'toy'" in bad.stderr
