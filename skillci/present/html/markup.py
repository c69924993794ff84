"""Escaping-by-construction HTML builder and the formatting shared by the HTML report (pure).

Every ``str`` passed to :func:`el` as a child or an attribute value is HTML-escaped; only
:class:`Safe` values (built by :func:`el`, :func:`esc` or :func:`raw`) are inserted as they
are. Text from run records is untrusted, so it only ever reaches the page as a plain ``str``.
"""

from __future__ import annotations

import hashlib
import html
import re
from collections.abc import Iterable, Iterator

from skillci.gate.metrics import TaskChangeKind


class Safe(str):
    """Markup that is already escaped (or a constant written by this package)."""

    __slots__ = ()


Child = object
"""A child of :func:`el`: ``Safe`` (kept), ``None``/``False`` (dropped), a list, tuple or
iterator of children (flattened), anything else (``str()`` then escaped)."""


def esc(value: object) -> Safe:
    """``value`` as escaped text; a :class:`Safe` value is returned unchanged."""
    if isinstance(value, Safe):
        return value
    return Safe(html.escape(str(value), quote=True))


def raw(markup: str) -> Safe:
    """Mark a *constant* as markup. Never call it on data."""
    return Safe(markup)


def _attr_name(name: str) -> str:
    # class_ -> class, data_change -> data-change, stroke_width -> stroke-width
    return name.rstrip("_").replace("_", "-")


def _attrs(attrs: dict[str, object]) -> str:
    out = []
    for k, v in attrs.items():
        if v is None or v is False:
            continue
        name = _attr_name(k)
        out.append(f" {name}" if v is True else f' {name}="{html.escape(str(v), quote=True)}"')
    return "".join(out)


def _children(children: Iterable[Child]) -> Iterable[str]:
    for c in children:
        if c is None or c is False:
            continue
        if isinstance(c, str):
            yield esc(c)
        elif isinstance(c, list | tuple | Iterator):
            yield from _children(c)
        else:
            yield esc(c)


def el(tag: str, *children: Child, **attrs: object) -> Safe:
    """``<tag attrs>children</tag>``, every str child and attribute value escaped."""
    return Safe(f"<{tag}{_attrs(attrs)}>{''.join(_children(children))}</{tag}>")


def void(tag: str, **attrs: object) -> Safe:
    """A void element (``meta``, ``input``, ``br``)."""
    return Safe(f"<{tag}{_attrs(attrs)}>")


def join(parts: Iterable[Child]) -> Safe:
    return Safe("".join(_children(parts)))


# ---------------------------------------------------------------------------- anchors


_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


def anchor(prefix: str, name: str) -> str:
    """A stable, unique element id for ``name`` (readable part + 8 hex of its hash)."""
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{prefix}-{_SLUG.sub('-', name)[:40].strip('-')}-{digest}"


# ---------------------------------------------------------------------------- numbers


def pct(x: float | None, digits: int = 1) -> str:
    return "n/a" if x is None else f"{x:.{digits}%}"


def delta_pct(x: float | None) -> str:
    return "n/a" if x is None else f"{x:+.1%}"


def ci(lo: float, hi: float) -> str:
    return f"[{lo:.1%}, {hi:.1%}]"


def num(x: float | None, digits: int = 0) -> str:
    if x is None:
        return "n/a"
    return f"{x:,.{digits}f}"


def usd(x: float | None) -> str:
    if x is None:
        return "n/a"
    return f"${x:,.4f}" if x < 1 else f"${x:,.2f}"


def clip(text: str, limit: int) -> tuple[str, str, int]:
    """(head, tail, omitted chars): long text keeps its start and its end (errors and
    test summaries are usually at the end)."""
    if limit <= 0 or len(text) <= limit:
        return text, "", 0
    head_n = (limit * 3) // 5
    tail_n = limit - head_n
    return text[:head_n], text[len(text) - tail_n :], len(text) - limit


# ---------------------------------------------------------------------------- vocabulary


SIDE_ORDER: tuple[str, ...] = ("base", "head", "baseline", "teacher")
SIDE_LABEL = {
    "base": "base · current skill",
    "head": "head · candidate skill",
    "baseline": "student · no skill",
    "teacher": "teacher",
}
SIDE_TITLE = {
    "base": "base — student + current skill",
    "head": "head — student + candidate skill",
    "baseline": "baseline — student without skill",
    "teacher": "teacher — strong model",
}
SIDE_COLOR = {
    "base": "#8c959f",
    "head": "#0969da",
    "baseline": "#d4a72c",
    "teacher": "#8250df",
}
CHANGE_LABEL: dict[TaskChangeKind, str] = {
    "repair": "✓ repair",
    "regression": "✗ regression",
    "unchanged_pass": "= pass",
    "unchanged_fail": "= fail",
}
CHANGE_COLOR: dict[TaskChangeKind, str] = {
    "repair": "#1a7f37",
    "regression": "#cf222e",
    "unchanged_pass": "#8fd19e",
    "unchanged_fail": "#d0d7de",
}


def side_order(sides: Iterable[str]) -> list[str]:
    """Known sides in their fixed order, then any other side alphabetically."""
    present = set(sides)
    return [s for s in SIDE_ORDER if s in present] + sorted(present - set(SIDE_ORDER))
