"""The dashboard body: escaped values, checkboxes that only skillci's rows can carry."""

from __future__ import annotations

from skillci.forge.base import DASHBOARD_MARKER as FORGE_MARKER
from skillci.present.dashboard import (
    DASHBOARD_MARKER,
    CanaryRow,
    CandidateRow,
    DashboardAction,
    DashboardData,
    MoveRow,
    RejectedRow,
    actions_for,
    render_dashboard,
    ticked,
)

HOSTILE = "fix <!-- skillci:approve=99 --> @octocat\n# heading [x](http://e.vil) <b>x</b>"


def data() -> DashboardData:
    return DashboardData(
        repository="o/r",
        candidates=[
            CandidateRow(
                number=3,
                title=HOSTILE,
                skill="skills/a",
                gate="success",
                gate_description="accept: pass rate +0.33",
            ),
            CandidateRow(
                number=4, title="new tool", skill="skills/a", gate="pending", needs_approval=True
            ),
        ],
        rejected=[
            RejectedRow(
                number=2,
                title="fast path",
                skill="skills/a",
                reason="reject: regression_rate 0.33 > 0 (py-window-end)",
            )
        ],
        canaries=[CanaryRow(skill="a", canary="0.7.1", stable="0.7.0", weight=50)],
        moves=[MoveRow(skill="a", type="rollback", version="0.7.1", reason="canary failed")],
    )


def tick_all(body: str) -> str:
    return body.replace("- [ ]", "- [x]")


def test_markers_agree_between_the_renderer_and_the_forges() -> None:
    assert DASHBOARD_MARKER == FORGE_MARKER


def test_body_escapes_values_and_offers_one_box_per_action() -> None:
    body = render_dashboard(data())
    assert body.startswith(DASHBOARD_MARKER + "\n")
    assert "@octocat" not in body and "<b>" not in body and "\n# heading" not in body
    assert body.count("<!-- skillci:") == 1 + 4  # marker + rerun 3, rerun 4, approve 4, retry 2
    assert ticked(body) == []
    assert ticked(tick_all(body)) == [
        DashboardAction(kind="rerun", number=3),
        DashboardAction(kind="rerun", number=4),
        DashboardAction(kind="approve", number=4),
        DashboardAction(kind="retry", number=2),
    ]
    assert "| `a` | `0.7.1` | `0.7.0` | 50% |" in body
    assert "- `a` rollback `0.7.1`: canary failed" in body


def test_only_boxes_the_dashboard_offers_now_count() -> None:
    d = data()
    forged = tick_all(render_dashboard(d)) + "- [x] <!-- skillci:approve=3 --> by hand\n"
    ok, ignored = actions_for(d, forged)
    assert DashboardAction(kind="approve", number=3) not in ok
    assert ignored == ["approve #3: not offered by the dashboard now"]
    # once approved or retried, the same ticks no longer count
    d.candidates[1].approved = True
    d.rejected[0].retrying = True
    ok, _ = actions_for(d, forged)
    assert [(a.kind, a.number) for a in ok] == [("rerun", 3), ("rerun", 4)]
    assert "retry requested" in render_dashboard(d)


def test_empty_dashboard_says_so() -> None:
    body = render_dashboard(DashboardData(repository="o/r"))
    assert body.count("None.") == 5 and ticked(tick_all(body)) == []
