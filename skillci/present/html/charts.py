"""Inline SVG charts of the HTML report: pass rate with CI whiskers, gap closure, cost per
success, and a per-task change map (pure; no JavaScript needed to draw them)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from skillci.gate.metrics import TaskChange
from skillci.gate.verdict import SuiteResult
from skillci.present.html.markup import (
    CHANGE_COLOR,
    CHANGE_LABEL,
    SIDE_COLOR,
    SIDE_LABEL,
    Safe,
    anchor,
    el,
    join,
    pct,
    side_order,
)

W = 560
INK = "#1f2328"
GRID = "#d8dee4"


@dataclass(frozen=True)
class Bar:
    side: str
    value: float | None
    label: str
    tooltip: str
    low: float | None = None
    high: float | None = None


def _f(x: float) -> str:
    return f"{x:.1f}"


def _svg(width: int, height: int, label: str, *children: object) -> Safe:
    return el(
        "svg",
        *children,
        viewBox=f"0 0 {width} {height}",
        width=width,
        height=height,
        role="img",
        aria_label=label,
    )


def _text(
    x: float, y: float, text: str, *, anchor_: str = "middle", cls: str | None = None
) -> Safe:
    """SVG text; ``cls``: axis (muted), small, bold (sizes come from the stylesheet)."""
    return el("text", text, x=_f(x), y=_f(y), text_anchor=anchor_, class_=cls)


def _line(
    x1: float,
    y1: float,
    x2: float,
    y2: float,
    color: str = INK,
    width: float = 1.0,
    dash: str | None = None,
) -> Safe:
    return el(
        "line",
        x1=_f(x1),
        y1=_f(y1),
        x2=_f(x2),
        y2=_f(y2),
        stroke=color,
        stroke_width=width,
        stroke_dasharray=dash,
    )


def _clip_label(text: str, width: float) -> str:
    n = max(3, int(width / 6.5))
    return text if len(text) <= n else text[: n - 1] + "…"


def nice_max(x: float) -> float:
    """The smallest of 1, 2, 2.5, 5 × 10^k that is >= x (x > 0)."""
    if x <= 0:
        return 1.0
    e = 10.0 ** math.floor(math.log10(x))
    for m in (1.0, 2.0, 2.5, 5.0, 10.0):
        if m * e >= x * (1 - 1e-12):
            return m * e
    return 10 * e  # pragma: no cover - the loop always returns


def grouped_bars(
    groups: Sequence[tuple[str, str, Sequence[Bar]]],
    *,
    y_max: float,
    y_ticks: Sequence[float],
    y_fmt: str,
    label: str,
) -> Safe:
    """Vertical bars per group (suite) and side, with optional CI whiskers.

    ``groups``: (name, sub-label, bars); ``y_fmt``: ``pct``, ``usd`` or ``num``.
    """
    h, left, right, top, bottom = 250, 46, 10, 16, 40
    pw, ph = W - left - right, h - top - bottom
    sides = side_order({b.side for _, _, bars in groups for b in bars})
    gw = pw / max(1, len(groups))
    bw = min(36.0, gw * 0.78 / max(1, len(sides)))

    def y(v: float) -> float:
        return top + ph * (1 - min(max(v, 0.0), y_max) / y_max)

    parts: list[Safe] = []
    for t in y_ticks:
        parts.append(_line(left, y(t), W - right, y(t), GRID))
        txt = f"{t:.0%}" if y_fmt == "pct" else (f"${t:.2g}" if y_fmt == "usd" else _compact(t))
        parts.append(_text(left - 6, y(t) + 4, txt, anchor_="end", cls="axis"))
    for gi, (name, sub, bars) in enumerate(groups):
        gx = left + gi * gw
        by_side = {b.side: b for b in bars}
        present = [side for side in sides if side in by_side]  # no gaps for absent sides
        x0 = gx + (gw - bw * len(present)) / 2
        tight = any(len(by_side[x].label) * 5.8 > bw + 4 for x in present)
        for si, side in enumerate(present):
            b = by_side[side]
            x = x0 + si * bw
            cx = x + bw / 2
            if b.value is None:
                parts.append(_text(cx, y(0) - 4, "n/a", cls="axis small"))
                continue
            top_y = y(b.value)
            parts.append(
                el(
                    "rect",
                    el("title", b.tooltip),
                    x=_f(x + 2),
                    y=_f(top_y),
                    width=_f(bw - 4),
                    height=_f(max(y(0) - top_y, 0.5)),
                    fill=SIDE_COLOR.get(side, "#8c959f"),
                    rx=2,
                )
            )
            label_y = top_y
            if b.low is not None and b.high is not None:
                lo, hi = y(b.low), y(b.high)
                cap = min(8.0, bw / 3)
                parts += [
                    _line(cx, lo, cx, hi, INK, 1.4),
                    _line(cx - cap, lo, cx + cap, lo, INK, 1.4),
                    _line(cx - cap, hi, cx + cap, hi, INK, 1.4),
                ]
                label_y = min(label_y, hi)
            lift = 11 if tight and si % 2 else 0  # stagger labels wider than their bar
            parts.append(_text(cx, max(label_y - 4 - lift, 10), b.label, cls="small"))
        parts.append(_text(gx + gw / 2, h - bottom + 16, _clip_label(name, gw), cls="bold"))
        parts.append(_text(gx + gw / 2, h - bottom + 30, _clip_label(sub, gw), cls="axis"))
    parts.append(_line(left, y(0), W - right, y(0), INK))
    return _svg(W, h, label, parts)


def _compact(x: float) -> str:
    if x >= 1e6:
        return f"{x / 1e6:.1f}M"
    if x >= 1e4:
        return f"{x / 1e3:.0f}k"
    if x >= 1e3:
        return f"{x / 1e3:.1f}k"
    if x >= 10 or x == 0:
        return f"{x:.0f}"
    return f"{x:.2g}"


def legend(sides: Sequence[str], *, ci: bool = False) -> Safe:
    items = [
        el("span", el("span", class_=f"sw sw-{s}"), SIDE_LABEL.get(s, s)) for s in side_order(sides)
    ]
    if ci:
        items.append(el("span", el("span", class_="sw sw-ci"), "95% CI"))
    return el("div", items, class_="legend")


def pass_rate_chart(suites: Sequence[SuiteResult]) -> Safe:
    groups = []
    for s in suites:
        bars = []
        for side in side_order(s.metrics.sides):
            pr = s.metrics.sides[side].pass_rate  # type: ignore[index]
            bars.append(
                Bar(
                    side=side,
                    value=pr.pass_rate,
                    label=f"{pr.pass_rate:.0%}",
                    low=pr.band.low,
                    high=pr.band.high,
                    tooltip=f"{s.suite} · {side}: {pct(pr.pass_rate)} "
                    f"(task-clustered CI {pct(pr.band.low)}–{pct(pr.band.high)}), "
                    f"{pr.tasks} tasks, {pr.trials} trials",
                )
            )
        groups.append((s.suite, f"{len(s.tasks)} tasks", bars))
    svg = grouped_bars(
        groups,
        y_max=1.0,
        y_ticks=(0.0, 0.25, 0.5, 0.75, 1.0),
        y_fmt="pct",
        label="Pass rate per suite and side with 95% confidence intervals",
    )
    sides = {side for s in suites for side in s.metrics.sides}
    return join([svg, legend(sorted(sides), ci=True)])


def cost_chart(suites: Sequence[SuiteResult]) -> tuple[str, Safe]:
    """(what is plotted, chart): USD per success when any trial had a price, else tokens."""
    by_usd = any(sm.cost.usd > 0 for s in suites for sm in s.metrics.sides.values())
    title = "USD per successful trial" if by_usd else "Tokens per successful trial"
    groups = []
    peak = 0.0
    for s in suites:
        bars = []
        for side in side_order(s.metrics.sides):
            c = s.metrics.sides[side].cost  # type: ignore[index]
            v = c.usd_per_success if by_usd else c.tokens_per_success
            peak = max(peak, v or 0.0)
            shown = (f"${v:.2g}" if by_usd else _compact(v)) if v is not None else "n/a"
            bars.append(
                Bar(
                    side=side,
                    value=v,
                    label=shown,
                    tooltip=f"{s.suite} · {side}: {shown} per success "
                    f"({c.successes}/{c.trials} trials passed)",
                )
            )
        groups.append((s.suite, f"{len(s.tasks)} tasks", bars))
    top = nice_max(peak * 1.12) if peak > 0 else 1.0
    steps = 4 if f"{top:.1e}".startswith("2.0") else 5  # 0.5-, 1- or 2-unit steps
    svg = grouped_bars(
        groups,
        y_max=top,
        y_ticks=[top * i / steps for i in range(steps + 1)],
        y_fmt="usd" if by_usd else "num",
        label=title,
    )
    sides = {side for s in suites for side in s.metrics.sides}
    return title, join([svg, legend(sorted(sides))])


def has_gcr(suites: Sequence[SuiteResult]) -> bool:
    return any(
        s.metrics.gcr_head.value is not None or s.metrics.gcr_base.value is not None for s in suites
    )


def gcr_chart(suites: Sequence[SuiteResult]) -> Safe:
    """Gap Closure Rate per suite on a scale with baseline (0) and teacher (1) marked:
    filled dot = head with its CI, hollow dot = base."""
    row, top, left, right = 30, 26, 110, 96
    h = top + row * len(suites) + 8
    values: list[float] = [-0.25, 1.25]
    for s in suites:
        for g in (s.metrics.gcr_head, s.metrics.gcr_base):
            if g.value is not None:
                values.append(g.value)
            if g.ci is not None:
                values += [g.ci.low, g.ci.high]
    lo, hi = max(-2.0, min(values)), min(3.0, max(values))
    pw = W - left - right

    def x(v: float) -> float:
        return left + pw * (min(max(v, lo), hi) - lo) / (hi - lo)

    parts: list[Safe] = []
    for ref, name in ((0.0, "0 · baseline"), (0.5, "0.5"), (1.0, "1 · teacher")):
        parts.append(_line(x(ref), top - 6, x(ref), h - 6, "#afb8c1", 1, "4 3"))
        parts.append(_text(x(ref), top - 10, name, cls="axis"))
    for i, s in enumerate(suites):
        cy = top + row * i + row / 2
        g, b = s.metrics.gcr_head, s.metrics.gcr_base
        parts.append(_text(left - 8, cy + 4, _clip_label(s.suite, left - 12), anchor_="end"))
        parts.append(_line(left, cy, W - right, cy, GRID))
        if g.value is None and b.value is None:
            why = g.reason or "undefined"
            parts.append(
                el(
                    "text",
                    el("title", why),
                    "undefined",
                    x=_f(left + 6),
                    y=_f(cy + 4),
                    class_="axis",
                )
            )
            continue
        if g.ci is not None:
            parts += [
                _line(x(g.ci.low), cy, x(g.ci.high), cy, INK, 1.6),
                _line(x(g.ci.low), cy - 5, x(g.ci.low), cy + 5, INK, 1.6),
                _line(x(g.ci.high), cy - 5, x(g.ci.high), cy + 5, INK, 1.6),
            ]
        if b.value is not None:
            parts.append(
                el(
                    "circle",
                    el("title", f"{s.suite} base GCR {b.value:.2f} ({b.label})"),
                    cx=_f(x(b.value)),
                    cy=_f(cy),
                    r=5,
                    fill="#fff",
                    stroke=SIDE_COLOR["base"],
                    stroke_width=2,
                )
            )
        if g.value is not None:
            ci_txt = f", CI {g.ci.low:.2f}–{g.ci.high:.2f}" if g.ci else ""
            parts.append(
                el(
                    "circle",
                    el("title", f"{s.suite} head GCR {g.value:.2f} ({g.label}{ci_txt})"),
                    cx=_f(x(g.value)),
                    cy=_f(cy),
                    r=6,
                    fill=SIDE_COLOR["head"],
                )
            )
            flag = " ⚑" if g.review else ""
            parts.append(
                _text(W - right + 8, cy + 4, f"{g.value:.2f} {g.label}{flag}", anchor_="start")
            )
    svg = _svg(W, h, "Gap closure rate per suite", parts)
    items = [
        el("span", el("span", class_="sw sw-head"), "head GCR (95% CI)"),
        el("span", el("span", class_="sw sw-base"), "base GCR (hollow)"),
        el("span", "0 = no better than the student without skill, 1 = teacher level"),
    ]
    return join([svg, el("div", items, class_="legend")])


def task_map(changes: Sequence[TaskChange]) -> Safe:
    """One square per task coloured by its change; each links to its trajectories."""
    size, gap = 14, 3
    per_row = max(1, (W + gap) // (size + gap))
    rows = max(1, math.ceil(len(changes) / per_row))
    h = rows * (size + gap)
    parts = []
    for i, c in enumerate(changes):
        r, col = divmod(i, per_row)
        tip = (
            f"{c.task_id}: base {c.base_pass_fraction:.0%} ({c.base_repeats}) → "
            f"head {c.head_pass_fraction:.0%} ({c.head_repeats}) — {CHANGE_LABEL[c.change]}"
        )
        parts.append(
            el(
                "a",
                el(
                    "rect",
                    el("title", tip),
                    x=col * (size + gap),
                    y=r * (size + gap),
                    width=size,
                    height=size,
                    rx=2,
                    fill=CHANGE_COLOR[c.change],
                ),
                href="#" + anchor("traj", c.task_id),
            )
        )
    svg = _svg(W, h, "Per-task change map", parts)
    counts = {k: sum(c.change == k for c in changes) for k in CHANGE_LABEL}
    items = [
        el("span", el("span", class_=f"sw sw-{k}"), f"{CHANGE_LABEL[k]} ({n})")
        for k, n in counts.items()
    ]
    return join([svg, el("div", items, class_="legend")])
