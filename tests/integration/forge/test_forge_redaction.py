"""Nothing secret is published: PR title and body, comments, close comments and status
descriptions pass the redactor at the forge boundary (issue 16 item 2)."""

from __future__ import annotations

import json
from pathlib import Path

from skillci.forge.local import LocalForge
from skillci.vcs.git import Git
from tests.integration.forge.conftest import make_branch

CORPUS = Path(__file__).resolve().parents[2] / "fixtures" / "secrets" / "secrets.jsonl"


def test_pr_texts_comments_and_statuses_are_redacted(repo: Path) -> None:
    items = [json.loads(x) for x in CORPUS.read_text(encoding="utf-8").splitlines() if x]
    samples = [
        (i["secret"], f'{i["ident"]}_api_token = "{i["secret"]}"') for i in items if i["ident"]
    ]
    text = "\n".join(line for _, line in samples)
    make_branch(repo, "skillci/x", {"b.txt": "two\n"})
    f = LocalForge(Git(repo))
    f.open_pr(
        title=f"fix {samples[0][1]}", body=text, base="main", head_branch="skillci/x", labels=[]
    )
    f.upsert_comment(1, "<!-- skillci:gate-report -->\n" + text)
    f.set_status(1, context="skillci/gate", state="failure", description=samples[1][1][:120])
    f.close(1, text)
    pr = f.get_pr(1)
    published = json.dumps(
        [pr.title, pr.body, [c.body for c in pr.comments], [e for e in f.log(1)]],
        default=str,
    ) + json.dumps({k: v.description for k, v in pr.statuses.items()})
    assert "[REDACTED:" in published
    assert [s[:12] for s, _ in samples if s in published] == []
