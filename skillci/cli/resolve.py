"""``skillci resolve``: the version/commit/path a deployment should load."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from skillci.cli.choices import Channel as ChannelChoice
from skillci.cli.options import JsonOpt, RepoOpt
from skillci.cli.output import console, emit_json

app = typer.Typer(add_completion=False)


@app.command("resolve")
def resolve_cmd(
    skill: Annotated[str, typer.Argument(help="Skill name.")],
    channel: Annotated[
        ChannelChoice | None, typer.Option("--channel", help="Default: by request bucket.")
    ] = None,
    request_id: Annotated[
        str | None, typer.Option("--request-id", help="Bucket this request (sha256 % 100).")
    ] = None,
    repo: RepoOpt = Path("."),
    json_out: JsonOpt = False,
) -> int:
    """The version/commit/path a deployment should load for a request."""
    from skillci.flows.resolve import resolve

    r = resolve(repo, skill, request_id=request_id, channel=channel)
    if json_out:
        emit_json(r)
    else:
        b = f" (bucket {r.bucket}" if r.bucket is not None else ""
        if r.weight is not None:
            b += f"{', ' if b else ' ('}canary weight {r.weight}%"
        b += ")" if b else ""
        console.print(f"{r.skill}@{r.version} {r.channel} {r.commit} {r.path}{b}")
    return 0
