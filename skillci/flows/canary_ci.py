"""Canaries from CI: which skills have one running, and ``analyze --auto`` on GitHub.

With GitHubForge the channel refs live on GitHub: they are fetched first and pushed after
a move (with the base branch when a rollback wrote its marking commit there). Locally
these are the plain flows of :mod:`skillci.flows.canary`.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from skillci.flows.canary import canary_analyze
from skillci.flows.context import RepoContext
from skillci.release.channels import ChannelStore
from skillci.release.models import CanaryAnalysis


class ActiveCanary(BaseModel):
    """A skill whose canary channel is set."""

    skill: str = Field(description="Skill name.")
    canary: str = Field(description="Canary version.")
    stable: str | None = Field(description="Stable version it is compared with.")
    weight: int | None = Field(description="Percent of requests on the canary.")
    since: str = Field(description="When the canary started (ISO 8601).")


def active_canaries(ctx: RepoContext) -> list[ActiveCanary]:
    ctx.forge.pull_state(ctx.git)
    store = ChannelStore(ctx.git)
    out = []
    for skill in store.skills():
        st = store.state(skill)
        if st is None or st.canary is None:
            continue
        out.append(
            ActiveCanary(
                skill=skill,
                canary=st.canary.version,
                stable=st.stable.version if st.stable else None,
                weight=st.canary.weight,
                since=str(st.canary.since),
            )
        )
    return out


def analyze_synced(ctx: RepoContext, skill: str, *, auto: bool) -> CanaryAnalysis:
    """:func:`canary_analyze`, fetching channel refs (and the base) before and pushing
    them after when the forge is GitHub."""
    ctx.forge.pull_state(ctx.git)
    state = ChannelStore(ctx.git).state(skill)
    if state is not None:
        ctx.forge.fetch_branch(ctx.git, state.base)
    result = canary_analyze(ctx, skill, auto=auto)
    if result.action != "none" and state is not None:
        ctx.forge.push_state(
            ctx.git,
            skill=skill,
            branches=(state.base,) if result.action == "rollback" else (),
        )
    return result
